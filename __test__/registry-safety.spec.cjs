'use strict'

// The registry of managed DSH_* variables on its own, without Cordis
// (cordis-*.spec.cjs have it as the service): resolvers re-entering the
// registry during a collection, and process safety: throwing resolvers never
// crash the process, and the addon works from several worker_threads at once.
//
// Real calls into the addon, no mocks. Runs unchanged under `vitest run`
// (globals: true) and `jest`. Assertions on shapes the issue leaves open are
// marked `// shape chosen by the implementation`. Shared values (the home,
// built-ins, both collection modes) are in registry-helpers.cjs.

const path = require('node:path')
const { Worker } = require('node:worker_threads')

const { ROOT, FIXTURES, expectCode, contributor, runNode, lastJsonLine } = require('./helpers.cjs')
const { D, BUILTINS, registry, MODES, collectionError } = require('./registry-helpers.cjs')

describe.each(MODES)('%s: re-entrancy', (mode, collect) => {
  it('resolvers may call list(), catalog(), register() and a disposer; the collection keeps its starting set', async () => {
    const reg = registry()
    const seen = {}
    let lateCalls = 0
    let goneCalls = 0
    let firstRun = true
    let disposeLate
    reg.register(
      contributor('a-reentrant', ['DSH_A'], {
        resolve: () => {
          if (firstRun) {
            firstRun = false
            seen.listDuring = reg.list().map((entry) => entry.key)
            seen.catalogDuring = reg.catalog().variables.map((entry) => entry.key) // shape chosen by the implementation
            disposeLate = reg.register(
              contributor('b-late', ['DSH_LATE'], { resolve: () => ((lateCalls += 1), { DSH_LATE: 'late' }) }),
            )
            disposeGone()
            seen.listAfter = reg.list().map((entry) => entry.key)
          }
          return { DSH_A: 'a' }
        },
      }),
    )
    const disposeGone = reg.register(contributor('c-gone', ['DSH_GONE'], { resolve: () => ((goneCalls += 1), { DSH_GONE: 'gone' }) }))

    const first = await collect(reg, {})
    // The set as it was when the collection started: c-gone still resolved, b-late not.
    expect(first).toEqual({ ...BUILTINS, DSH_A: 'a', DSH_GONE: 'gone' })
    expect(goneCalls).toBe(1)
    expect(lateCalls).toBe(0)
    expect(seen.listDuring).toEqual(['DSH_A', 'DSH_GONE'])
    expect(seen.catalogDuring).toEqual(['DSH_A', 'DSH_GONE', 'DSH_HOME', 'DSH_SESSION_ID', 'DSH_SHELL'])
    expect(seen.listAfter).toEqual(['DSH_A', 'DSH_LATE'])

    const second = await collect(reg, {})
    expect(second).toEqual({ ...BUILTINS, DSH_A: 'a', DSH_LATE: 'late' })
    expect(lateCalls).toBe(1)
    expect(goneCalls).toBe(1)
    disposeLate()
    expect(reg.list().map((entry) => entry.key)).toEqual(['DSH_A'])
  })

  it('a resolver may dispose its own registration', async () => {
    const reg = registry()
    let dispose
    dispose = reg.register(contributor('once', ['DSH_ONCE'], { resolve: () => (dispose(), { DSH_ONCE: 'once' }) }))
    expect(await collect(reg, {})).toEqual({ ...BUILTINS, DSH_ONCE: 'once' })
    expect(await collect(reg, {})).toEqual(BUILTINS)
  })

  it('a registration error inside a resolver surfaces as RESOLVER_FAILED with that error as cause', async () => {
    const reg = registry()
    let inner
    reg.register(
      contributor('clasher', ['DSH_CLASH'], {
        resolve: () => {
          try {
            reg.register(contributor('other', ['DSH_CLASH']))
          } catch (error) {
            inner = error
            throw error
          }
          return {}
        },
      }),
    )
    const error = await collectionError(mode, reg)
    expectCode(error, 'ERR_SHELL_ENV_RESOLVER_FAILED', 'clasher')
    expectCode(inner, 'ERR_SHELL_ENV_DUPLICATE_KEY', 'clasher', 'other')
    expect(error.cause).toBe(inner)
  })
})

describe('process safety', () => {
  // The second run makes Node treat an exception escaping a N-API callback as
  // uncaught (the policy Node announces as its future default, DEP0168).
  it.each([
    ['default policy', []],
    ['--force-node-api-uncaught-exceptions-policy', ['--force-node-api-uncaught-exceptions-policy=true']],
  ])('a throwing resolver never crashes the process or leaves an exception behind (child process, %s)', (_title, flags) => {
    const child = runNode([...flags, path.join(FIXTURES, 'throwing-resolvers.cjs')])
    expect(child.signal).toBe(null)
    expect(child.stderr.toLowerCase()).not.toContain('uncaught')
    expect(child.stderr.toLowerCase()).not.toContain('fatal')
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    const codes = lastJsonLine(child.stdout)
    const failed = (cause) => `ERR_SHELL_ENV_RESOLVER_FAILED (cause: ${cause})`
    expect(codes).toEqual({
      'sync-error:async': failed('object'),
      'sync-error:sync': failed('object'),
      'sync-string:async': failed('string'),
      'sync-string:sync': failed('string'),
      'sync-undefined:async': failed('undefined'),
      'sync-undefined:sync': failed('undefined'),
      // Values that cannot be turned into text still come back coded, as the very cause.
      'sync-symbol:async': failed('symbol'),
      'sync-symbol:sync': failed('symbol'),
      'sync-bad-tostring:async': failed('object'),
      'sync-bad-tostring:sync': failed('object'),
      'sync-revoked-proxy:async': failed('object'),
      'sync-revoked-proxy:sync': failed('object'),
      'async-reject:async': failed('object'),
      'async-reject-symbol:async': failed('symbol'),
      'async-throw:async': failed('object'),
      'later-reject:async': failed('object'),
      'throwing-thenable:async': failed('object'),
      // shape chosen by the implementation: a getter throwing while the result is read
      'throwing-getter:async': failed('object'),
      'throwing-getter:sync': failed('object'),
    })
  }, 30_000)

  it('loads in several worker_threads at once; each collects sync and async on its own thread', async () => {
    const count = 4
    const entry = path.join(FIXTURES, 'registry-worker.cjs')
    const runs = Array.from(
      { length: count },
      (_, index) =>
        new Promise((resolve, reject) => {
          const worker = new Worker(entry, { workerData: { root: ROOT, index } })
          let message
          worker.on('message', (value) => (message = value))
          worker.on('error', reject)
          // No terminate(): the worker has to finish on its own.
          worker.on('exit', (code) => resolve({ code, message }))
        }),
    )
    const results = await Promise.all(runs)
    results.forEach(({ code, message }, index) => {
      expect(message.error).toBeUndefined()
      expect(code).toBe(0)
      expectWorkerResult(message, index)
    })
  }, 30_000)

  it('a process using the addon from several workers (one terminated mid-collection) exits cleanly', () => {
    const child = runNode([path.join(FIXTURES, 'workers-main.cjs'), '4'], { timeout: 30_000 })
    expect(child.signal).toBe(null) // killed by the timeout: something kept the process alive
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    const { results, main } = lastJsonLine(child.stdout)
    expect(results).toHaveLength(5)
    results.slice(0, 4).forEach(({ code, message }, index) => {
      expect(code).toBe(0)
      expectWorkerResult(message, index)
    })
    expect(results[4].message).toEqual({ index: 4, pending: true })
    expect(results[4].code).toBe(1) // terminate() exit code
    expect(main).toEqual({ DSH_HOME: path.resolve('/tmp/dsh-main'), DSH_SHELL: '1' })
  }, 40_000)
})

function expectWorkerResult(message, index) {
  const home = path.resolve(`/tmp/dsh-worker-${index}`)
  const session = `session-${index}`
  const expected = {
    DSH_HOME: home,
    DSH_SESSION_ID: session,
    DSH_SHELL: '1',
    DSH_WORKER: String(index),
    PATH: [path.resolve(`/opt/worker-${index}/bin`), `/worker-${index}/path`].join(D),
  }
  expect(message.index).toBe(index)
  expect(message.sync).toEqual(expected)
  expect(message.async).toEqual(expected)
  expect(message.frozen).toBe(true)
  expect(message.sameExecution).toBe(true)
  expect(message.delayed).toEqual({ DSH_DELAYED: session, DSH_HOME: home, DSH_SESSION_ID: session, DSH_SHELL: '1' })
  expect(message.failure).toEqual({ code: 'ERR_SHELL_ENV_RESOLVER_FAILED', sameCause: true })
  expect(message.list).toEqual([{ contributor: `worker-${index}`, description: 'the worker index', key: 'DSH_WORKER' }])
}
