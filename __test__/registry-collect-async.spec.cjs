'use strict'

// The registry of managed DSH_* variables on its own, without Cordis
// (cordis-*.spec.cjs have it as the service): collectAsync() on its own:
// asynchronous resolvers, rejections, timeoutMs and the abort signal.
//
// Real calls into the addon, no mocks. Runs unchanged under `vitest run`
// (globals: true) and `jest`. Assertions on shapes the issue leaves open are
// marked `// shape chosen by the implementation`. Shared values (the home,
// built-ins, both collection modes) are in registry-helpers.cjs.

const path = require('node:path')
const { spawnSync } = require('node:child_process')

const { rejected, expectCode, expectSnapshotShape, contributor, agentExecution } = require('./helpers.cjs')
const { BUILTINS, registry } = require('./registry-helpers.cjs')

describe('collectAsync()', () => {
  it('returns a promise of the same snapshot collect gives for sync resolvers', async () => {
    const reg = registry({ profile: { name: 'work', dir: path.resolve('/profiles/work') } })
    reg.register(contributor('b', ['DSH_B'], { commandDirectories: [path.resolve('/opt/b')], resolve: (e) => ({ DSH_B: e.agent.session.header.id }) }))
    reg.register(contributor('a', ['DSH_A'], { commandDirectories: [path.resolve('/opt/a')], resolve: () => ({ DSH_A: 'a' }) }))
    const execution = agentExecution('same')
    const options = { inheritedPath: '/usr/bin' }
    const promise = reg.collectAsync(execution, options)
    expect(typeof promise.then).toBe('function')
    const fromAsync = await promise
    const fromSync = reg.collect(execution, options)
    expect(fromAsync).toEqual(fromSync)
    expect(Object.keys(fromAsync)).toEqual(Object.keys(fromSync))
    expectSnapshotShape(fromAsync)
  })

  it('awaits async resolvers mixed with sync ones', async () => {
    const reg = registry()
    const order = []
    reg.register(
      contributor('a-slow', ['DSH_SLOW'], {
        resolve: async () => {
          order.push('a-slow:start')
          await new Promise((resolve) => setTimeout(resolve, 30))
          order.push('a-slow:end')
          return { DSH_SLOW: 'slow' }
        },
      }),
    )
    reg.register(contributor('b-sync', ['DSH_SYNC'], { resolve: () => (order.push('b-sync'), { DSH_SYNC: 'sync' }) }))
    reg.register(contributor('c-promise', ['DSH_PROMISE'], { resolve: () => Promise.resolve({ DSH_PROMISE: 'p' }) }))
    reg.register(contributor('d-thenable', ['DSH_THENABLE'], { resolve: () => ({ then: (resolve) => resolve({ DSH_THENABLE: 't' }) }) }))
    const snapshot = await reg.collectAsync(agentExecution('s'))
    expect(snapshot).toEqual({
      ...BUILTINS,
      DSH_PROMISE: 'p',
      DSH_SESSION_ID: 's',
      DSH_SLOW: 'slow',
      DSH_SYNC: 'sync',
      DSH_THENABLE: 't',
    })
    expect(order[0]).toBe('a-slow:start')
    expect(order).toContain('a-slow:end')
    expectSnapshotShape(snapshot)
  })

  it('validates what async resolvers resolve to', async () => {
    const reg = registry()
    reg.register(contributor('async-bad', ['DSH_OWN'], { resolve: async () => ({ DSH_OWN: 5 }) }))
    expectCode(await rejected(() => reg.collectAsync({})), 'ERR_SHELL_ENV_NON_STRING_VALUE', 'async-bad', 'DSH_OWN')
    const reg2 = registry()
    reg2.register(contributor('async-stray', ['DSH_OWN'], { resolve: async () => ({ DSH_OTHER: 'x' }) }))
    expectCode(await rejected(() => reg2.collectAsync({})), 'ERR_SHELL_ENV_UNDECLARED_KEY', 'async-stray', 'DSH_OTHER')
  })

  it.each([
    ['rejects with an Error', () => new Error('rejected')],
    ['rejects with a string', () => 'rejected string'],
  ])('ERR_SHELL_ENV_RESOLVER_FAILED when the promise %s, the reason as cause', async (_title, make) => {
    const reason = make()
    const reg = registry()
    reg.register(contributor('rejecting', ['DSH_OWN'], { resolve: () => Promise.reject(reason) }))
    const error = await rejected(() => reg.collectAsync({}))
    expectCode(error, 'ERR_SHELL_ENV_RESOLVER_FAILED', 'rejecting')
    expect(error.cause).toBe(reason)
  })

  it('ERR_SHELL_ENV_RESOLVER_FAILED when an async function throws later', async () => {
    const original = new RangeError('later')
    const reg = registry()
    reg.register(
      contributor('late-thrower', ['DSH_OWN'], {
        resolve: async () => {
          await new Promise((resolve) => setTimeout(resolve, 10))
          throw original
        },
      }),
    )
    const error = await rejected(() => reg.collectAsync({}))
    expectCode(error, 'ERR_SHELL_ENV_RESOLVER_FAILED', 'late-thrower')
    expect(error.cause).toBe(original)
  })

  it('ERR_SHELL_ENV_RESOLVER_TIMEOUT when a resolver does not settle within timeoutMs', async () => {
    const reg = registry()
    reg.register(contributor('stuck', ['DSH_OWN'], { resolve: () => new Promise(() => {}) }))
    const started = Date.now()
    const error = await rejected(() => reg.collectAsync({}, { timeoutMs: 50 }))
    expectCode(error, 'ERR_SHELL_ENV_RESOLVER_TIMEOUT', 'stuck')
    expect(Date.now() - started).toBeGreaterThanOrEqual(40)
    expect(Date.now() - started).toBeLessThan(3_000)
  })

  it('waits for a promise garbage-collected before it settled as for any unsettled one: until the timeout or the abort', () => {
    // In a child with --expose-gc, which collects the promise 20 ms in.
    const fixture = path.join(__dirname, 'fixtures', 'collected-promise.cjs')
    const run = spawnSync(process.execPath, ['--expose-gc', fixture, path.join(__dirname, '..')], { encoding: 'utf8', timeout: 30_000 })
    expect(run.stderr).toBe('')
    expect(JSON.parse(run.stdout)).toEqual({
      first: 'ERR_SHELL_ENV_RESOLVER_TIMEOUT',
      later: 'ERR_SHELL_ENV_RESOLVER_TIMEOUT',
      aborted: 'ERR_SHELL_ENV_ABORTED',
      execute: 'ERR_SHELL_ENV_RESOLVER_TIMEOUT',
    })
  })

  it('the default timeout leaves room for a resolver that takes a while', async () => {
    const reg = registry()
    reg.register(
      contributor('patient', ['DSH_OWN'], {
        resolve: () => new Promise((resolve) => setTimeout(() => resolve({ DSH_OWN: 'done' }), 300)),
      }),
    )
    expect(await reg.collectAsync({})).toEqual({ ...BUILTINS, DSH_OWN: 'done' })
  })

  it('keeps overlapping collections apart: each snapshot is built from its own execution', async () => {
    const reg = registry()
    reg.register(
      contributor('echo', ['DSH_ECHO'], {
        resolve: async (execution) => {
          await new Promise((resolve) => setTimeout(resolve, execution.delay))
          return { DSH_ECHO: execution.agent.session.header.id }
        },
      }),
    )
    const [parent, child, none] = await Promise.all([
      reg.collectAsync(agentExecution('parent', { delay: 40 })),
      reg.collectAsync(agentExecution('child', { delay: 5 })),
      reg.collectAsync({ delay: 20 }).then(
        () => 'resolved',
        (error) => error,
      ),
    ])
    expect(parent).toEqual({ ...BUILTINS, DSH_ECHO: 'parent', DSH_SESSION_ID: 'parent' })
    expect(child).toEqual({ ...BUILTINS, DSH_ECHO: 'child', DSH_SESSION_ID: 'child' })
    // The no-agent call fails inside its own resolver without disturbing the others.
    expectCode(none, 'ERR_SHELL_ENV_RESOLVER_FAILED', 'echo')
  })

  describe('abort signal', () => {
    const ABORT_CODE = 'ERR_SHELL_ENV_ABORTED' // shape chosen by the implementation

    it('rejects at once for an already aborted signal, running no resolver', async () => {
      const reg = registry()
      let calls = 0
      reg.register(contributor('counted', ['DSH_OWN'], { resolve: () => ((calls += 1), { DSH_OWN: 'x' }) }))
      const controller = new AbortController()
      controller.abort()
      const error = await rejected(() => reg.collectAsync({}, { signal: controller.signal }))
      expect(error.code).toMatch(/^ERR_SHELL_ENV_[A-Z_]+$/)
      expectCode(error, ABORT_CODE)
      expect(calls).toBe(0) // shape chosen by the implementation
    })

    it('rejects when the signal aborts while a resolver is pending', async () => {
      const reg = registry()
      const controller = new AbortController()
      let called = false
      reg.register(
        contributor('hanging', ['DSH_OWN'], {
          resolve: () => {
            called = true
            setTimeout(() => controller.abort(), 20)
            return new Promise(() => {})
          },
        }),
      )
      const started = Date.now()
      const error = await rejected(() => reg.collectAsync({}, { signal: controller.signal, timeoutMs: 60_000 }))
      expect(called).toBe(true)
      expect(error.code).toMatch(/^ERR_SHELL_ENV_[A-Z_]+$/)
      expectCode(error, ABORT_CODE)
      expect(Date.now() - started).toBeLessThan(3_000)
    })

    it('a signal that never aborts changes nothing', async () => {
      const reg = registry()
      reg.register(contributor('c', ['DSH_OWN'], { resolve: async () => ({ DSH_OWN: 'x' }) }))
      const controller = new AbortController()
      expect(await reg.collectAsync({}, { signal: controller.signal })).toEqual({ ...BUILTINS, DSH_OWN: 'x' })
      controller.abort() // after completion: nothing to reject, nothing thrown
    })
  })
})
