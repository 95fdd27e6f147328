'use strict'

// The Cordis service `ctx.shellEnv` as a plugin: the package's main export,
// the ways to construct it (each providing ctx.shellEnv for the fiber that made
// it), the ES module namespace, and its errors surfacing the Cordis way.
//
// Once per supported Cordis line (VERSIONS in cordis-helpers.cjs), all the
// real packages, installed side by side (package.json devDependencies):
// - @deepseek-ai/cordis@4.0.4, the harness's own, ESM only, loaded with import();
// - cordis4 = cordis@4.0.0-rc.10, ESM only, loaded with import();
// - cordis3 = cordis@3.18.1, loaded with require() (its CommonJS build).
// No Cordis internals are mocked; commands really run. Runs unchanged under
// `vitest run` (globals: true) and `jest`.

const { types } = require('node:util')

const { expectCode } = require('./helpers.cjs')
const { HOME, VERSIONS, registeringPlugin, keyContributor, cordisSuite } = require('./cordis-helpers.cjs')

const pkg = require('..')
const cordisEntry = require('../lib/cordis.js')
const { ShellEnvRegistry } = pkg

describe.each(VERSIONS)('Cordis service ctx.shellEnv under %s', (label, host) => {
  const suite = cordisSuite(host)
  const { logged, newRoot, plug, unplug } = suite
  // The loaded Cordis, set once cordisSuite's beforeAll has loaded it.
  let cordis

  beforeAll(() => {
    cordis = suite.cordis
  })

  it('the package main export is the plugin: name, inject, Config, and ctx.shellEnv from apply', async () => {
    expect(pkg.name).toBe('shell-env')
    expect(pkg.inject).toEqual([])
    for (const key of ['name', 'inject', 'Config']) expect(pkg[key]).toBe(cordisEntry[key])

    const root = await newRoot()
    await plug(root, pkg, { dshHome: HOME })
    expect(root.shellEnv).toBeInstanceOf(ShellEnvRegistry)
    expect(root.shellEnv.dshHome).toBe(HOME)
    expect(root.shellEnv.list()).toEqual([])
  })

  describe('construction forms: each provides ctx.shellEnv, the registry itself, for the fiber that made it', () => {
    /** Checks that `root.shellEnv` is a registry for HOME, then that disposing `fork` removes it. */
    async function expectProvidedUntilDisposed(root, fork) {
      expect(root.shellEnv).toBeInstanceOf(ShellEnvRegistry)
      expect(root.shellEnv.dshHome).toBe(HOME)
      await plug(root, registeringPlugin('form', [keyContributor('form', 'DSH_FORM')]))
      expect(root.shellEnv.collect({})).toEqual({ DSH_FORM: 'v', DSH_HOME: HOME, DSH_SHELL: '1' })
      await unplug(root, fork)
      expect(root.get('shellEnv')).toBeUndefined()
    }

    it('new ShellEnvRegistry(ctx, config) inside a plugin', async () => {
      const root = await newRoot()
      const made = {}
      const fork = await plug(root, { name: 'composition', apply: (ctx) => void (made.registry = new ShellEnvRegistry(ctx, { dshHome: HOME })) })
      expect(root.shellEnv).toBeInstanceOf(ShellEnvRegistry)
      expect(made.registry).toBeInstanceOf(ShellEnvRegistry)
      await expectProvidedUntilDisposed(root, fork)
    })

    it('ctx.plugin(ShellEnvRegistry, config): the class is a plugin', async () => {
      const root = await newRoot()
      expect(ShellEnvRegistry.inject).toEqual([])
      expect(ShellEnvRegistry.Config).toBe(pkg.Config)
      await expectProvidedUntilDisposed(root, await plug(root, ShellEnvRegistry, { dshHome: HOME }))
    })

    it('ctx.plugin(module, config): the CommonJS module is a plugin', async () => {
      const root = await newRoot()
      await expectProvidedUntilDisposed(root, await plug(root, pkg, { dshHome: HOME }))
    })

    it('new ShellEnvRegistry(root, config) on the root context lasts as long as the root', async () => {
      const root = await newRoot()
      const registry = new ShellEnvRegistry(root, { dshHome: HOME })
      await host.settle(root)
      expect(root.shellEnv).toBeInstanceOf(ShellEnvRegistry)
      expect(root.shellEnv.dshHome).toBe(HOME)
      // The raw instance's ctx is the root; through ctx.shellEnv it is the caller's.
      expect(registry.ctx).toBe(root)
      const seen = {}
      await plug(root, { name: 'looker', inject: ['shellEnv'], apply: (ctx) => void (seen.ctx = ctx.shellEnv.ctx) })
      expect(seen.ctx).not.toBe(root)
    })

    it('a registration made through ctx.shellEnv is an effect of the caller: a reload re-registers without a conflict', async () => {
      const root = await newRoot()
      await plug(root, ShellEnvRegistry, { dshHome: HOME })
      const plugin = registeringPlugin('reloaded', [keyContributor('reloaded', 'DSH_RELOADED')])
      for (let round = 0; round < 3; round += 1) {
        const fork = await plug(root, plugin)
        expect(root.shellEnv.list().map((entry) => entry.contributor)).toEqual(['reloaded'])
        await unplug(root, fork)
        expect(root.shellEnv.list()).toEqual([])
      }
    })

    it('a second registry in the same context is refused by Cordis, and the first stays', async () => {
      const root = await newRoot()
      await plug(root, ShellEnvRegistry, { dshHome: HOME })
      const first = root.shellEnv
      const { fork } = await plug(root, { name: 'second', apply: (ctx) => void new ShellEnvRegistry(ctx, { dshHome: '/elsewhere' }) })
      await Promise.resolve(fork).catch(() => {})
      expect(root.shellEnv.dshHome).toBe(HOME)
      expect(root.shellEnv.list()).toEqual(first.list())
    })
  })

  it('the ES module namespace (import * as shellEnv) is the plugin too', async () => {
    const esm = await import('../lib/index.mjs')
    expect(esm.name).toBe('shell-env')
    const root = await newRoot()
    await plug(root, esm, { dshHome: HOME })
    await plug(root, registeringPlugin('from-esm', [keyContributor('from-esm', 'DSH_FROM_ESM')]))
    expect(root.shellEnv.collect({})).toEqual({ DSH_FROM_ESM: 'v', DSH_HOME: HOME, DSH_SHELL: '1' })
  })

  describe('errors surface the Cordis way', () => {
    /**
     * Plugs `plugin`, which must fail, and returns the error the way this
     * Cordis line exposes it. The failed fork is disposed afterwards.
     */
    async function pluginFailure(root, plugin, config) {
      const errors = []
      const off = root.on('internal/error', (error) => errors.push(error))
      const before = logged.length
      const fork = root.plugin(plugin, config)
      await host.settle(root)
      off()
      let error
      if (label.startsWith('cordis@3')) {
        // cordis 3: the plugin's runtime is FAILED with the error, which was
        // also emitted as internal/error and printed by the logger.
        expect(fork.runtime.status).toBe(cordis.ScopeStatus.FAILED)
        error = fork.runtime.error
        expect(errors).toContain(error)
        const records = logged.slice(before)
        expect(records.some((record) => record.type === 'error' && record.content.includes(error.message))).toBe(true)
      } else {
        // cordis 4: awaiting the fork rejects with the error, which also went
        // to the logger; the fiber never becomes active.
        await Promise.resolve(fork).then(
          () => {
            throw new Error('expected the plugin to fail')
          },
          (caught) => {
            error = caught
          },
        )
        const { fork: healthy } = await plug(root, { name: 'healthy', apply() {} })
        expect(fork.state).not.toBe(healthy.state)
        expect(root.logger.buffer.some((message) => message.type === 'error' && message.args.includes(error))).toBe(true)
      }
      await fork.dispose()
      await host.settle(root)
      return error
    }

    it('a register error inside apply fails the plugin with the coded error, and nothing it registered stays', async () => {
      const root = await newRoot()
      await plug(root, pkg, { dshHome: HOME })
      const error = await pluginFailure(
        root,
        registeringPlugin('bad', [keyContributor('good-first', 'DSH_GOOD'), keyContributor('bad', 'DSH_HOME')]),
      )
      expect(types.isNativeError(error)).toBe(true)
      expectCode(error, 'ERR_SHELL_ENV_RESERVED_KEY', 'DSH_HOME', 'bad')
      expect(root.shellEnv.list()).toEqual([])
      expect(root.shellEnv.collect({})).toEqual({ DSH_HOME: HOME, DSH_SHELL: '1' })
    })

    it('a duplicate key across plugins fails the second plugin only', async () => {
      const root = await newRoot()
      await plug(root, pkg, { dshHome: HOME })
      await plug(root, registeringPlugin('first', [keyContributor('first', 'DSH_SHARED', 'first')]))
      const error = await pluginFailure(root, registeringPlugin('second', [keyContributor('second', 'DSH_SHARED')]))
      expectCode(error, 'ERR_SHELL_ENV_DUPLICATE_KEY', 'DSH_SHARED', 'first', 'second')
      expect(root.shellEnv.collect({}).DSH_SHARED).toBe('first')
    })

    it('a bad config fails the plugin with the coded error naming the field, and nothing is provided', async () => {
      const root = await newRoot()
      const missingDir = await pluginFailure(root, pkg, { profile: { name: 'work' } })
      if (label.startsWith('cordis@3')) {
        // cordis 3 calls the schema itself, which refuses the wrong type first.
        expect(missingDir.message).toContain('dir')
      } else {
        expectCode(missingDir, 'ERR_SHELL_ENV_INVALID_PROFILE', 'profile.dir')
        expectCode(await pluginFailure(root, pkg, { dshHome: 42 }), 'ERR_SHELL_ENV_INVALID_OPTION', 'dshHome', 'number')
      }
      const relative = await pluginFailure(root, pkg, { profile: { name: 'work', dir: 'relative/dir' } })
      expectCode(relative, 'ERR_SHELL_ENV_INVALID_PROFILE')
      const unknown = await pluginFailure(root, pkg, { dshHome: HOME, dshhome: HOME })
      expectCode(unknown, 'ERR_SHELL_ENV_INVALID_OPTION', 'dshhome', 'unknown field')
      expect(root.get('shellEnv')).toBeUndefined()
    })
  })
})
