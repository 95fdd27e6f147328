'use strict'

// The Cordis service `ctx.shellEnv`: effect scoping. A registration and a
// command belong to the calling plugin, not to shell-env's: disposing the
// plugin removes what it registered and kills what it still runs; the returned
// disposer; reloading shell-env itself re-applies its dependents.
//
// Once per supported Cordis line (VERSIONS in cordis-helpers.cjs), all the
// real packages, installed side by side (package.json devDependencies):
// - @deepseek-ai/cordis@4.0.4, the harness's own, ESM only, loaded with import();
// - cordis4 = cordis@4.0.0-rc.10, ESM only, loaded with import();
// - cordis3 = cordis@3.18.1, loaded with require() (its CommonJS build).
// No Cordis internals are mocked; commands really run. Runs unchanged under
// `vitest run` (globals: true) and `jest`.

const path = require('node:path')

const { signals } = require('./platform.cjs')
const { HOME, VERSIONS, registeringPlugin, keyContributor, cordisSuite } = require('./cordis-helpers.cjs')

const pkg = require('..')

describe.each(VERSIONS)('Cordis service ctx.shellEnv under %s', (label, host) => {
  const { newRoot, plug, unplug } = cordisSuite(host)

  describe('effect scoping', () => {
    it("a registration belongs to the calling plugin, not to shell-env's", async () => {
      const root = await newRoot()
      await plug(root, pkg, { dshHome: HOME })
      const alpha = await plug(root, registeringPlugin('alpha', [keyContributor('alpha', 'DSH_ALPHA')]))
      const beta = await plug(root, registeringPlugin('beta', [keyContributor('beta', 'DSH_BETA')]))
      expect(root.shellEnv.list().map((entry) => entry.key)).toEqual(['DSH_ALPHA', 'DSH_BETA'])

      await unplug(root, alpha)
      expect(root.shellEnv.list().map((entry) => entry.key)).toEqual(['DSH_BETA'])
      expect(root.shellEnv.collect({})).toEqual({ DSH_BETA: 'v', DSH_HOME: HOME, DSH_SHELL: '1' })

      await unplug(root, beta)
      expect(root.shellEnv.list()).toEqual([])
    })

    it('the returned disposer works, is idempotent, and the later plugin disposal is harmless', async () => {
      const root = await newRoot()
      await plug(root, pkg, { dshHome: HOME })
      const sink = {}
      const plugin = await plug(
        root,
        registeringPlugin('gamma', [keyContributor('gamma', 'DSH_GAMMA'), keyContributor('delta', 'DSH_DELTA')], sink),
      )
      expect(sink.disposers).toHaveLength(2)
      expect(sink.disposers.every((dispose) => typeof dispose === 'function')).toBe(true)

      expect(sink.disposers[0]()).toBeUndefined()
      sink.disposers[0]()
      expect(root.shellEnv.list().map((entry) => entry.key)).toEqual(['DSH_DELTA'])

      // The name is free again, and the new registration is not touched by the old disposer.
      const again = root.shellEnv.register(keyContributor('gamma', 'DSH_GAMMA', 'again'))
      sink.disposers[0]()
      expect(root.shellEnv.collect({}).DSH_GAMMA).toBe('again')
      again()

      await unplug(root, plugin)
      expect(root.shellEnv.list()).toEqual([])
      sink.disposers[1]()
    })

    signals.it('a command belongs to the calling plugin: disposing it kills what still runs, not what finished or what others started', async () => {
      const root = await newRoot()
      await plug(root, pkg, { dshHome: HOME })
      const runnerSink = {}
      const otherSink = {}
      const runner = await plug(root, { name: 'runner', inject: ['shellEnv'], apply: (ctx) => void (runnerSink.ctx = ctx) })
      await plug(root, { name: 'other', inject: ['shellEnv'], apply: (ctx) => void (otherSink.ctx = ctx) })

      const finished = await runnerSink.ctx.shellEnv.execute({ command: 'true' })
      expect((await finished.result()).exitCode).toBe(0)
      const running = await runnerSink.ctx.shellEnv.execute({ command: 'sleep 30' })
      const elsewhere = await otherSink.ctx.shellEnv.execute({ command: 'sleep 30' })
      expect(running.status).toBe('running')

      await unplug(root, runner)
      const result = await running.result()
      expect(result.signal).toBe('SIGTERM')
      expect(running.status).toBe('killed')
      expect(result.durationMs).toBeLessThan(10_000)
      expect(finished.status).toBe('completed')
      expect(elsewhere.status).toBe('running')
      expect(elsewhere.kill()).toBe(true)
      expect((await elsewhere.result()).signal).toBe('SIGTERM')
    }, 20_000)

    signals.it('a command whose plugin is disposed while it starts is killed as soon as it runs', async () => {
      const root = await newRoot()
      await plug(root, pkg, { dshHome: HOME })
      const slow = {
        name: 'slow',
        variables: { DSH_SLOW: { description: 'answers after a while' } },
        resolve: () => new Promise((resolve) => setTimeout(() => resolve({ DSH_SLOW: 'late' }), 300)),
      }
      await plug(root, registeringPlugin('slow-plugin', [slow]))
      const sink = {}
      const runner = await plug(root, { name: 'runner', inject: ['shellEnv'], apply: (ctx) => void (sink.ctx = ctx) })

      const pending = sink.ctx.shellEnv.execute({ command: 'sleep 30' })
      await unplug(root, runner)
      const started = await pending
      const result = await started.result()
      expect(result.signal).toBe('SIGTERM')
      expect(started.status).toBe('killed')
    }, 20_000)

    it('reloading shell-env itself re-applies its dependents, which register again', async () => {
      const root = await newRoot()
      const service = await plug(root, pkg, { dshHome: HOME })
      let applied = 0
      await plug(root, {
        name: 'epsilon',
        inject: ['shellEnv'],
        apply(ctx) {
          applied += 1
          ctx.shellEnv.register(keyContributor('epsilon', 'DSH_EPSILON', `run-${applied}`))
        },
      })
      expect(root.shellEnv.collect({}).DSH_EPSILON).toBe('run-1')

      await unplug(root, service)
      const otherHome = path.join(HOME, 'reloaded')
      await plug(root, pkg, { dshHome: otherHome })
      expect(applied).toBe(2)
      expect(root.shellEnv.dshHome).toBe(otherHome)
      expect(root.shellEnv.collect({})).toEqual({ DSH_EPSILON: 'run-2', DSH_HOME: otherHome, DSH_SHELL: '1' })
    })
  })
})
