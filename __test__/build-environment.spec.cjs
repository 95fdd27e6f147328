'use strict'

// buildEnvironment(spec, parentEnv): the child's environment without running
// anything, with the source of every variable and the reason for every
// removal; parentEnv defaulting to the caller's process.env, whatever object
// it is (a plain object, a Proxy, a worker's own, Node's own on a main
// thread); and exactly what execute() gives the child. Runs unchanged under
// `vitest run` (globals: true) and `jest`.
//
// Conventions (see helpers.cjs): errors are checked with
// `util.types.isNativeError` (Jest runs this file in its own realm), never
// `instanceof`. Where a case spawns, it is a real child process, no mocks.

const path = require('node:path')

const { ROOT, FIXTURES, runNode, lastJsonLine } = require('./helpers.cjs')
const { parseEnv0 } = require('./process-helpers.cjs')
const { posix } = require('./platform.cjs')
const { T, TERMINAL_DEFAULTS, ENV_PROGRAM, withEnv, childEnv } = require('./execute-helpers.cjs')

const { buildEnvironment } = require('..')

// ---------------------------------------------------------------------------

describe('buildEnvironment(spec, parentEnv)', () => {
  const parent = {
    PATH: '/usr/bin:/bin',
    HOME: '/home/ada',
    TERM: 'xterm',
    DSH_SESSION_ID: 'stale',
    dsh_lower: 'stale-lower',
    MY_API_TOKEN: 'secret',
    BASH_ENV: '/tmp/evil.sh',
    EXEC_FN: '() { echo hi; }',
    UNSET_ME: 'bye',
    NOT_INCLUDED: 'x',
    KEPT: 'kept',
  }

  it('reports the source of every variable and every removal with its reason', () => {
    const built = buildEnvironment(
      {
        scrub: { hardening: true, includeOnly: ['PATH', 'HOME', 'TERM', 'UNSET_ME', 'KEPT', '*TOKEN*', 'BASH_ENV', 'EXEC_FN', 'DSH_*'] },
        env: { UNSET_ME: undefined, EXPLICIT: 'e', NEVER_THERE: undefined },
        dshEnv: { DSH_SESSION_ID: 'fresh', PATH: '/managed/bin:/usr/bin:/bin' },
      },
      parent,
    )
    expect(built.env).toEqual({
      PATH: '/managed/bin:/usr/bin:/bin',
      HOME: '/home/ada',
      TERM: 'dumb',
      KEPT: 'kept',
      NO_COLOR: '1',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      EXPLICIT: 'e',
      DSH_SESSION_ID: 'fresh',
    })
    expect(built.sources).toEqual({
      PATH: 'managed',
      HOME: 'inherited',
      TERM: 'terminal',
      KEPT: 'inherited',
      NO_COLOR: 'terminal',
      PAGER: 'terminal',
      GIT_PAGER: 'terminal',
      EXPLICIT: 'explicit',
      DSH_SESSION_ID: 'managed',
    })
    const reasons = Object.fromEntries(built.removed.map(({ key, reason }) => [key, reason]))
    expect(reasons).toEqual({
      DSH_SESSION_ID: 'managed-prefix',
      dsh_lower: 'managed-prefix',
      MY_API_TOKEN: 'credential',
      BASH_ENV: 'hardening',
      EXEC_FN: 'hardening',
      NOT_INCLUDED: 'include-only',
      UNSET_ME: 'explicit-unset',
    })
    expect(built.removed).toHaveLength(7)
    for (const removal of built.removed) expect(Object.keys(removal).sort()).toEqual(['key', 'reason'])
  })

  it("every parent entry a child does not get is in removed: what holds no text as 'unrepresentable'", () => {
    const lone = '\ud800'
    const given = {
      ...parent,
      LONE_VALUE: `half ${lone}`,
      [`LONE${lone}NAME`]: 'x',
      WITH_NUL: 'a\0b',
      'A=B': 'x',
      NUMBER: 5,
      UNDEFINED: undefined,
      [Symbol('SYM')]: 'x',
    }
    const built = buildEnvironment({ terminalEnv: false }, given)
    const reasons = Object.fromEntries(built.removed.map(({ key, reason }) => [key, reason]))
    for (const key of Object.keys(given)) {
      if (key === 'UNDEFINED') continue // no entry at all
      const shown = key.replace(lone, '\ufffd')
      expect([key, shown in built.env || shown in reasons]).toEqual([key, true])
    }
    expect(built.removed.filter(({ reason }) => reason === 'unrepresentable')).toEqual(
      ['A=B', 'LONE_VALUE', 'LONE\ufffdNAME', 'NUMBER', 'WITH_NUL'].map((key) => ({ key, reason: 'unrepresentable' })),
    )
    // First in pipeline order.
    expect(built.removed.slice(0, 5).map(({ reason }) => reason)).toEqual(Array(5).fill('unrepresentable'))
    expect(reasons.UNDEFINED).toBeUndefined()
  })

  it("reports 'inherit' for what inherit core or none leaves behind", () => {
    const core = buildEnvironment({ scrub: { inherit: 'core' }, terminalEnv: false }, parent)
    expect(core.env).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/ada' })
    const reasons = Object.fromEntries(core.removed.map(({ key, reason }) => [key, reason]))
    for (const key of ['TERM', 'UNSET_ME', 'NOT_INCLUDED', 'KEPT', 'BASH_ENV', 'EXEC_FN']) expect(reasons[key]).toBe('inherit')
    expect(reasons.DSH_SESSION_ID).toBe('managed-prefix')
    const none = buildEnvironment({ scrub: { inherit: 'none' }, terminalEnv: false }, parent)
    expect(none.env).toEqual({})
    expect(none.sources).toEqual({})
    expect(none.removed.find((removal) => removal.key === 'PATH')).toEqual({ key: 'PATH', reason: 'inherit' })
  })

  it('hardening, when asked for, drops the sudo-style list and function values; by default they stay', () => {
    const hostile = {
      BASH_ENV: '/x',
      ENV: '/x',
      'BASH_FUNC_ls%%': '() { :; }',
      EXEC_FUNCTION_VALUE: '() { :; }',
      LD_PRELOAD: '/x.so',
      LD_LIBRARY_PATH: '/x',
      IFS: ' ',
      PS4: '+',
      SHELLOPTS: 'xtrace',
      PERL5OPT: '-d',
      PYTHONSTARTUP: '/x.py',
      NODE_OPTIONS: '--require /x.js',
    }
    const safe = { SAFE_PARENS: '(not a function)', SAFE_LATER: 'x () { :; }' }
    const built = buildEnvironment({ scrub: { hardening: true } }, { ...hostile, ...safe })
    for (const key of Object.keys(hostile)) {
      expect(built.env[key]).toBeUndefined()
      expect(built.removed).toContainEqual({ key, reason: 'hardening' })
    }
    expect(built.env).toEqual(expect.objectContaining(safe))
    // Off by default: the host's environment is its user's own.
    const byDefault = buildEnvironment({}, hostile)
    for (const key of Object.keys(hostile)) expect(byDefault.sources[key]).toBe('inherited')
    const soft = buildEnvironment({ scrub: { hardening: false } }, hostile)
    for (const key of Object.keys(hostile)) expect(soft.sources[key]).toBe('inherited')
  })

  it('explicit env cannot displace managed keys', () => {
    const built = buildEnvironment(
      { env: { DSH_SESSION_ID: 'forged', PATH: '/forged' }, dshEnv: { DSH_SESSION_ID: 'real', PATH: '/real' } },
      parent,
    )
    expect(built.env.DSH_SESSION_ID).toBe('real')
    expect(built.env.PATH).toBe('/real')
    expect(built.sources.DSH_SESSION_ID).toBe('managed')
    expect(built.sources.PATH).toBe('managed')
  })

  // What the scrub made of a parent before is never used for one that changed since.
  it('a parent changed between two calls is built as it is now, whether the same object or another', () => {
    const token = 'ghp_0123456789abcdefghijABCDEFGHIJ012345'
    const host = { PATH: '/usr/bin:/bin', NOTE: 'note', CHANGING: 'plain' }
    const spec = { terminalEnv: false }
    for (let round = 0; round < 2; round++) expect(buildEnvironment(spec, host).env).toEqual(host)
    // A credential-looking variable set on the same object.
    host.DB_PASSWORD = 'hunter2'
    let built = buildEnvironment(spec, host)
    expect(built.env.DB_PASSWORD).toBeUndefined()
    expect(built.removed).toEqual([{ key: 'DB_PASSWORD', reason: 'credential' }])
    // A value changed in place, to a token.
    host.CHANGING = token
    built = buildEnvironment(spec, host)
    expect(built.env).toEqual({ PATH: '/usr/bin:/bin', NOTE: 'note' })
    expect(built.removed).toEqual([
      { key: 'DB_PASSWORD', reason: 'credential' },
      { key: 'CHANGING', reason: 'secret-value' },
    ])
    // A value changed in place to one of the same length: a switch, then a password.
    host.DB_PASSWORD = 'true'
    expect(buildEnvironment(spec, host).env.DB_PASSWORD).toBe('true')
    host.DB_PASSWORD = 'hunt'
    expect(buildEnvironment(spec, host).env.DB_PASSWORD).toBeUndefined()
    // A key removed.
    delete host.NOTE
    expect(buildEnvironment(spec, host).env).toEqual({ PATH: '/usr/bin:/bin' })
    // Another object with what the first held at first: a test file's own process.env.
    expect(buildEnvironment(spec, { PATH: '/usr/bin:/bin', NOTE: 'note', CHANGING: 'plain' }).env).toEqual({ PATH: '/usr/bin:/bin', NOTE: 'note', CHANGING: 'plain' })
    expect(buildEnvironment(spec, { PATH: '/usr/bin:/bin', NOTE: token }).env).toEqual({ PATH: '/usr/bin:/bin' })
  })

  posix.it('process.env changed between two calls is built as it is now', async () => {
    await withEnv({ EXEC_SPEC_CHANGING: 'plain', EXEC_SPEC_NOTE: 'note', EXEC_SPEC_API_KEY: undefined }, () => {
      expect(buildEnvironment({}).env).toMatchObject({ EXEC_SPEC_CHANGING: 'plain', EXEC_SPEC_NOTE: 'note' })
      process.env.EXEC_SPEC_API_KEY = 'Zq8Lw3Xv9Tp2Nc7Rb4HmZq8Lw3Xv9Tp2'
      process.env.EXEC_SPEC_CHANGING = 'postgres://app:s3cret@db/app'
      delete process.env.EXEC_SPEC_NOTE
      const built = buildEnvironment({})
      for (const key of ['EXEC_SPEC_API_KEY', 'EXEC_SPEC_CHANGING', 'EXEC_SPEC_NOTE']) expect(key in built.env).toBe(false)
      expect(built.removed).toEqual(
        expect.arrayContaining([
          { key: 'EXEC_SPEC_API_KEY', reason: 'credential' },
          { key: 'EXEC_SPEC_CHANGING', reason: 'secret-value' },
        ]),
      )
      delete process.env.EXEC_SPEC_API_KEY
    })
  })

  posix.it('parentEnv defaults to process.env', async () => {
    await withEnv({ EXEC_SPEC_DEFAULT_PARENT: 'yes', DSH_EXEC_SPEC_STALE: 'stale' }, () => {
      const built = buildEnvironment({})
      expect(built.env.EXEC_SPEC_DEFAULT_PARENT).toBe('yes')
      expect(built.sources.EXEC_SPEC_DEFAULT_PARENT).toBe('inherited')
      expect(built.removed).toContainEqual({ key: 'DSH_EXEC_SPEC_STALE', reason: 'managed-prefix' })
    })
  })

  // What the caller's process.env holds is what the child inherits, whatever
  // kind of object it is (not the process environment underneath).
  posix.it('an object assigned to process.env is what the child inherits, not the OS environment', async () => {
    const original = process.env
    process.env = { ...original, EXEC_SPEC_ONLY_IN_OBJECT: 'object' }
    delete process.env.PATH
    try {
      expect(buildEnvironment({}).env.EXEC_SPEC_ONLY_IN_OBJECT).toBe('object')
      expect(buildEnvironment({}).env.PATH).toBeUndefined()
      const env = await childEnv()
      expect(env.EXEC_SPEC_ONLY_IN_OBJECT).toBe('object')
      expect(env.PATH).toBeUndefined()
    } finally {
      process.env = original
    }
    expect(buildEnvironment({}).env.EXEC_SPEC_ONLY_IN_OBJECT).toBeUndefined()
  }, T)

  posix.it('a Proxy assigned to process.env is read through its traps', async () => {
    const original = process.env
    process.env = new Proxy({ ...original }, { get: (target, key) => (key === 'HOME' ? '/from-proxy' : target[key]) })
    try {
      expect(buildEnvironment({}).env.HOME).toBe('/from-proxy')
    } finally {
      process.env = original
    }
  })

  posix.it("a worker's own process.env is what its children inherit", async () => {
    const { Worker } = require('node:worker_threads')
    const source = `
      const { parentPort } = require('node:worker_threads')
      const { execute, buildEnvironment } = require(${JSON.stringify(ROOT)})
      process.env.EXEC_SPEC_WORKER_ONLY = 'worker'
      execute({ command: [${JSON.stringify(ENV_PROGRAM)}, '-0'] })
        .then((execution) => execution.result())
        .then((result) => parentPort.postMessage({ built: buildEnvironment({}).env.EXEC_SPEC_WORKER_ONLY, child: result.stdout.text }))
    `
    const message = await new Promise((resolve, reject) => {
      const worker = new Worker(source, { eval: true })
      worker.once('message', resolve)
      worker.once('error', reject)
    })
    expect(message.built).toBe('worker')
    expect(parseEnv0(message.child).EXEC_SPEC_WORKER_ONLY).toBe('worker')
    expect(process.env.EXEC_SPEC_WORKER_ONLY).toBeUndefined()
  }, T)

  // Node's own process.env on a plain `node` main thread, not a test runner's copy.
  posix.it('the main thread’s own process.env gives what reading a copy of it gives', () => {
    const child = runNode([path.join(FIXTURES, 'host-env.cjs'), ROOT, 'genuine'])
    expect(child.stderr).toBe('')
    const { first, second } = lastJsonLine(child.stdout)
    for (const { built, copy, child: seen } of [first, second]) {
      expect(built).toEqual(copy)
      expect(seen).toEqual(built)
    }
    expect(first.built).toMatchObject({ HOST_ENV_SET: 'é = € 😀', HOST_ENV_EMPTY: '', host_env_lower: 'lower' })
    // Changes made between calls are seen by the next one.
    expect(second.built.HOST_ENV_SET).toBeUndefined()
    expect(second.built.HOST_ENV_EMPTY).toBe('now set')
  }, T)

  it('reading process.env is safe while a SHARE_ENV worker adds and deletes variables', () => {
    const child = runNode([path.join(FIXTURES, 'host-env-shared.cjs'), ROOT, '1000'])
    expect(child.signal).toBe(null)
    expect(child.status).toBe(0)
    const { reads, unexpected } = lastJsonLine(child.stdout)
    expect(unexpected).toEqual([])
    expect(reads).toBeGreaterThan(0)
  }, T)

  posix.it('a plain object assigned to process.env before the package loads is read as that object', () => {
    const child = runNode([path.join(FIXTURES, 'host-env.cjs'), ROOT, 'replaced'], { env: { HOST_ENV_ONLY_IN_OS: 'os' } })
    expect(child.stderr).toBe('')
    const { first } = lastJsonLine(child.stdout)
    for (const seen of [first.built, first.child]) {
      expect(seen.HOST_ENV_ONLY_IN_OBJECT).toBe('object')
      expect(seen.HOST_ENV_ONLY_IN_OS).toBeUndefined()
    }
  }, T)

  // Both reach the OS environment, yet are not Node's own object over it.
  posix.it.each(['proxy', 'inherit'])('a process.env replaced before the package loads by a Proxy over the real one, or an object inheriting from it, is read as that object (%s)', (mode) => {
    const child = runNode([path.join(FIXTURES, 'host-env.cjs'), ROOT, mode], { env: { HOST_ENV_ONLY_IN_OS: 'os' } })
    expect(child.stderr).toBe('')
    const { first } = lastJsonLine(child.stdout)
    expect(first.built).toEqual(first.copy)
    expect(first.child).toEqual(first.built)
    expect(first.built.HOST_ENV_ONLY_IN_OS).toBeUndefined()
  }, T)

  it('values of every length around 256 UTF-8 bytes come through whole, whatever their characters', () => {
    for (const unit of ['x', 'é', '€', '😀']) {
      for (let bytes = 240; bytes <= 270; bytes++) {
        const value = unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit)))
        expect(buildEnvironment({ env: { X: value } }, { [value]: value }).env).toEqual({ [value]: value, X: value, ...TERMINAL_DEFAULTS })
      }
    }
  })

  posix.it('is exactly what execute() gives the child (one pipeline)', async () => {
    const spec = {
      scrub: { exclude: ['*KEY*', 'EXEC_SPEC_DROP*'], hardening: true },
      terminalEnv: { TERM: 'vt100' },
      env: { EXEC_SPEC_EXPLICIT: 'e', EXEC_SPEC_GONE: undefined },
      dshEnv: { DSH_SESSION_ID: 'same', DSH_EXEC_SPEC_X: 'x' },
    }
    await withEnv({ EXEC_SPEC_DROP_ME: '1', EXEC_SPEC_GONE: '1', DSH_SESSION_ID: 'stale', BASH_ENV: '/nonexistent' }, async () => {
      const built = buildEnvironment(spec)
      const env = await childEnv(spec)
      expect(env).toEqual(built.env)
    })
  }, T)
})
