'use strict'

// The registry of managed DSH_* variables on its own, without Cordis
// (cordis-*.spec.cjs have it as the service): collection, under collect() and
// collectAsync() alike: the built-ins, contributors' resolvers, PATH assembly,
// collection errors, and collect() refusing asynchronous resolvers.
//
// Real calls into the addon, no mocks. Runs unchanged under `vitest run`
// (globals: true) and `jest`. Assertions on shapes the issue leaves open are
// marked `// shape chosen by the implementation`. Shared values (the home,
// built-ins, both collection modes) are in registry-helpers.cjs.

const { spawnSync } = require('node:child_process')
const os = require('node:os')
const path = require('node:path')
const vm = require('node:vm')

const { thrown, expectCode, expectSnapshotShape, contributor, agentExecution } = require('./helpers.cjs')
const { HOME, D, BUILTINS, registry, MODES, collectionError } = require('./registry-helpers.cjs')

const { ShellEnvRegistry } = require('..')

describe('collect(): built-ins', () => {
  it('always has DSH_HOME and DSH_SHELL=1, nothing else without agent or profile', () => {
    const snapshot = registry().collect({})
    expect(snapshot).toEqual({ DSH_HOME: HOME, DSH_SHELL: '1' })
    expectSnapshotShape(snapshot)
  })

  it('DSH_HOME is the registry dshHome', () => {
    const reg = new ShellEnvRegistry({ dshHome: '~/x/../home-for-collect' })
    expect(reg.collect({}).DSH_HOME).toBe(path.join(os.homedir(), 'home-for-collect'))
    expect(reg.collect({}).DSH_HOME).toBe(reg.dshHome)
  })

  it('DSH_SESSION_ID is execution.agent.session.header.id, only when the execution has an agent', () => {
    const reg = registry()
    expect(reg.collect(agentExecution('session-42'))).toEqual({ ...BUILTINS, DSH_SESSION_ID: 'session-42' })
    expect(reg.collect({ agent: undefined })).toEqual(BUILTINS)
    expect(reg.collect({ somethingElse: { session: { header: { id: 'not-an-agent' } } } })).toEqual(BUILTINS)
  })

  it('DSH_PROFILE and DSH_PROFILE_DIR only when a profile was given', () => {
    const dir = path.resolve('/profiles/work')
    const withProfile = registry({ profile: { name: 'work', dir } })
    expect(withProfile.collect(agentExecution('s'))).toEqual({
      ...BUILTINS,
      DSH_PROFILE: 'work',
      DSH_PROFILE_DIR: dir,
      DSH_SESSION_ID: 's',
    })
    expect(registry().collect(agentExecution('s'))).toEqual({ ...BUILTINS, DSH_SESSION_ID: 's' })
  })

  it('each collect returns a new snapshot; snapshots are independent of later registrations', () => {
    const reg = registry()
    const first = reg.collect({})
    reg.register(contributor('later', ['DSH_LATER'], { resolve: () => ({ DSH_LATER: 'x' }) }))
    const second = reg.collect({})
    expect(first).toEqual(BUILTINS)
    expect(second).toEqual({ ...BUILTINS, DSH_LATER: 'x' })
    expect(second).not.toBe(first)
  })

  it('registries with different keys, and one whose keys change from call to call, each get their own keys and values', () => {
    const one = registry()
    one.register(contributor('one', ['DSH_ONE', 'DSH_MAYBE'], { resolve: (e) => (e.maybe ? { DSH_ONE: '1', DSH_MAYBE: 'm' } : { DSH_ONE: '1' }) }))
    const two = registry({ profile: { name: 'p', dir: path.resolve('/profiles/p') } })
    two.register(contributor('two', ['DSH_TWO'], { resolve: () => ({ DSH_TWO: '2' }) }))
    for (let round = 0; round < 3; round++) {
      expect(one.collect({})).toEqual({ ...BUILTINS, DSH_ONE: '1' })
      expect(two.collect(agentExecution('s'))).toEqual({
        ...BUILTINS,
        DSH_PROFILE: 'p',
        DSH_PROFILE_DIR: path.resolve('/profiles/p'),
        DSH_SESSION_ID: 's',
        DSH_TWO: '2',
      })
      expect(one.collect({ maybe: true })).toEqual({ ...BUILTINS, DSH_MAYBE: 'm', DSH_ONE: '1' })
      expect(Object.keys(one.collect({ maybe: true }))).toEqual(['DSH_HOME', 'DSH_MAYBE', 'DSH_ONE', 'DSH_SHELL'])
    }
  })
})

describe.each(MODES)('%s: contributors', (mode, collect) => {
  it('runs each resolver once, in code-point order of contributor names', async () => {
    const reg = registry()
    const calls = []
    // Code-point order: 'B' (U+42) < 'a' (U+61) < 'É' (U+C9) < '～' (U+FF5E) < '😀' (U+1F600).
    // UTF-16 order would put '😀' (D83D …) before '～'.
    for (const name of ['😀', 'É', 'a', '～', 'B']) {
      reg.register({ name, variables: {}, resolve: () => (calls.push(name), {}) })
    }
    await collect(reg, {})
    expect(calls).toEqual(['B', 'a', 'É', '～', '😀'])
  })

  it('returns long values in characters of every UTF-8 length exactly, and refuses one with a lone surrogate', async () => {
    // Past the length the binding reads in one small buffer, 1 to 4 bytes a character.
    const long = 'aé中😀'.repeat(300)
    const reg = registry()
    reg.register(contributor('long', ['DSH_LONG'], { resolve: () => ({ DSH_LONG: long }) }))
    for (let round = 0; round < 3; round++) expect((await collect(reg, {})).DSH_LONG).toBe(long)
    const lone = registry()
    lone.register(contributor('lone', ['DSH_LONE'], { resolve: () => ({ DSH_LONE: `${'x'.repeat(400)}\uD800y` }) }))
    expectCode(await collectionError(mode, lone), 'ERR_SHELL_ENV_INVALID_VALUE', 'lone surrogate')
  })

  it('merges contributor values into a frozen, key-sorted plain object', async () => {
    const reg = registry({ profile: { name: 'work', dir: path.resolve('/profiles/work') } })
    reg.register(contributor('zz', ['DSH_AAA'], { resolve: () => ({ DSH_AAA: 'first by key' }) }))
    reg.register(contributor('aa', ['DSH_ZZZ', 'DSH_MMM'], { resolve: () => ({ DSH_ZZZ: 'z', DSH_MMM: '' }) }))
    reg.register(contributor('partial', ['DSH_MAYBE'], { resolve: (execution) => (execution.agent ? { DSH_MAYBE: 'yes' } : {}) }))
    const snapshot = await collect(reg, agentExecution('s-1'))
    expect(snapshot).toEqual({
      DSH_AAA: 'first by key',
      DSH_HOME: HOME,
      DSH_MAYBE: 'yes',
      DSH_MMM: '',
      DSH_PROFILE: 'work',
      DSH_PROFILE_DIR: path.resolve('/profiles/work'),
      DSH_SESSION_ID: 's-1',
      DSH_SHELL: '1',
      DSH_ZZZ: 'z',
    })
    expectSnapshotShape(snapshot)
    expect(Object.keys(snapshot)).toEqual([
      'DSH_AAA',
      'DSH_HOME',
      'DSH_MAYBE',
      'DSH_MMM',
      'DSH_PROFILE',
      'DSH_PROFILE_DIR',
      'DSH_SESSION_ID',
      'DSH_SHELL',
      'DSH_ZZZ',
    ])
    expect(await collect(reg, {})).not.toHaveProperty('DSH_MAYBE')
  })

  it('passes every resolver the identical execution object, custom fields intact', async () => {
    const reg = registry()
    const seen = []
    const marker = Symbol('marker')
    const execution = agentExecution('s-identity', {
      custom: { nested: [1, 2, 3] },
      [marker]: 'symbol field',
      method() {
        return 'still callable'
      },
    })
    const snapshotOfFields = JSON.stringify(execution)
    for (const name of ['one', 'two']) {
      reg.register({
        name,
        variables: {},
        resolve: (received) => {
          seen.push({
            same: received === execution,
            custom: received.custom,
            symbol: received[marker],
            method: typeof received.method === 'function' ? received.method() : undefined,
          })
          return {}
        },
      })
    }
    await collect(reg, execution)
    expect(seen).toEqual([
      { same: true, custom: execution.custom, symbol: 'symbol field', method: 'still callable' },
      { same: true, custom: execution.custom, symbol: 'symbol field', method: 'still callable' },
    ])
    expect(seen[0].custom).toBe(execution.custom)
    expect(JSON.stringify(execution)).toBe(snapshotOfFields)
    expect(Object.isFrozen(execution)).toBe(false)
  })

  // A resolver's `{}` comes from whatever realm the plugin runs in: Jest runs
  // each spec in a vm context, and vm/iframe-style sandboxes do the same.
  it('accepts plain objects from another realm and null-prototype objects', async () => {
    const reg = registry()
    reg.register(contributor('other-realm', ['DSH_REALM'], { resolve: () => vm.runInNewContext('({ DSH_REALM: "vm" })') }))
    reg.register(
      contributor('null-proto', ['DSH_NULL'], { resolve: () => Object.assign(Object.create(null), { DSH_NULL: 'null' }) }),
    )
    expect(await collect(reg, {})).toEqual({ ...BUILTINS, DSH_NULL: 'null', DSH_REALM: 'vm' })
  })

  it('does not modify process.env', async () => {
    const before = { ...process.env }
    const reg = registry({ profile: { name: 'p', dir: path.resolve('/p') } })
    reg.register(contributor('c', ['DSH_C'], { commandDirectories: [path.resolve('/opt/c')], resolve: () => ({ DSH_C: 'c' }) }))
    await collect(reg, agentExecution('s'))
    expect(process.env).toEqual(before)
  })
})

describe.each(MODES)('%s: PATH assembly', (mode, collect) => {
  const dir = (name) => path.resolve('/opt', name)

  it('puts all command directories in contributor-name order, own order kept, repeats removed, then the inherited PATH', async () => {
    const reg = registry()
    reg.register(contributor('b-tools', [], { commandDirectories: [dir('b1'), dir('shared'), dir('b2')] }))
    reg.register(contributor('a-tools', [], { commandDirectories: [dir('a2'), dir('a1'), dir('shared'), dir('a2')] }))
    reg.register(contributor('c-tools', [], { commandDirectories: [dir('b1'), dir('c1')] }))
    reg.register(contributor('no-dirs', ['DSH_X'], { resolve: () => ({ DSH_X: 'x' }) }))
    const inherited = ['/usr/local/bin', '/usr/bin'].join(D)
    const snapshot = await collect(reg, {}, { inheritedPath: inherited })
    expect(snapshot.PATH).toBe([dir('a2'), dir('a1'), dir('shared'), dir('b1'), dir('b2'), dir('c1'), inherited].join(D))
    expect(snapshot).toEqual({ ...BUILTINS, DSH_X: 'x', PATH: snapshot.PATH })
    expectSnapshotShape(snapshot)
  })

  it('keeps the inherited PATH exactly as given, after the command directories', async () => {
    const reg = registry()
    reg.register(contributor('tools', [], { commandDirectories: [dir('tools')] }))
    const inherited = [dir('tools'), '/usr/bin', '/usr/bin'].join(D)
    expect((await collect(reg, {}, { inheritedPath: inherited })).PATH).toBe([dir('tools'), inherited].join(D))
  })

  it('defaults the inherited PATH to process.env.PATH', async () => {
    const reg = registry()
    reg.register(contributor('tools', [], { commandDirectories: [dir('tools')] }))
    expect((await collect(reg, {})).PATH).toBe([dir('tools'), process.env.PATH].join(D))
    expect((await collect(reg, {}, {})).PATH).toBe([dir('tools'), process.env.PATH].join(D))
  })

  for (const [mode] of MODES) {
    it(`${mode}: a process.env whose PATH getter throws is an invalid option, with the thrown value as cause`, async () => {
      const reg = registry()
      reg.register(contributor('tools', [], { commandDirectories: [dir('tools')] }))
      const original = process.env
      const boom = new Error('PATH getter')
      process.env = new Proxy({ ...original }, { get: (target, key) => { if (key === 'PATH') throw boom; return target[key] } })
      let error
      try {
        error = await collectionError(mode, reg)
      } finally {
        process.env = original
      }
      expectCode(error, 'ERR_SHELL_ENV_INVALID_OPTION', 'parentEnv')
      expect(error.cause).toBe(boom)
    })
  }

  it("without command directories, the caller's PATH is never read", async () => {
    const reg = registry()
    reg.register(contributor('plain', ['DSH_PLAIN_KEY'], { resolve: () => ({ DSH_PLAIN_KEY: 'v' }) }))
    const original = process.env
    let reads = 0
    process.env = new Proxy({ ...original }, { get: (target, key) => { if (key === 'PATH') reads++; return target[key] } })
    let snapshot
    try {
      snapshot = await collect(reg, {})
    } finally {
      process.env = original
    }
    expect(snapshot.DSH_PLAIN_KEY).toBe('v')
    expect('PATH' in snapshot).toBe(false)
    expect(reads).toBe(0)
  })

  // shape chosen by the implementation: an empty inherited PATH adds no trailing delimiter
  // (a trailing empty entry would put the working directory on PATH).
  it('adds no delimiter for an empty inherited PATH', async () => {
    const reg = registry()
    reg.register(contributor('tools', [], { commandDirectories: [dir('t1'), dir('t2')] }))
    expect((await collect(reg, {}, { inheritedPath: '' })).PATH).toBe([dir('t1'), dir('t2')].join(D))
  })

  it('has no PATH key when no contributor declares command directories', async () => {
    const reg = registry()
    reg.register(contributor('plain', ['DSH_PLAIN'], { commandDirectories: [] }))
    expect(await collect(reg, {}, { inheritedPath: '/usr/bin' })).not.toHaveProperty('PATH')
    expect(await collect(reg, {})).not.toHaveProperty('PATH')
  })

  it('drops a disposed contributor’s directories', async () => {
    const reg = registry()
    const dispose = reg.register(contributor('gone', [], { commandDirectories: [dir('gone')] }))
    reg.register(contributor('kept', [], { commandDirectories: [dir('kept')] }))
    dispose()
    expect((await collect(reg, {}, { inheritedPath: '/usr/bin' })).PATH).toBe([dir('kept'), '/usr/bin'].join(D))
  })
})

describe.each(MODES)('%s: collection errors', (mode, collect) => {
  function failing(resolve, keys = ['DSH_OWN']) {
    const reg = registry()
    reg.register(contributor('fine', ['DSH_FINE'], { resolve: () => ({ DSH_FINE: 'fine' }) }))
    reg.register(contributor('culprit', keys, { resolve }))
    return reg
  }

  it.each([
    ['another undeclared key', { DSH_OWN: 'x', DSH_STRAY: 'y' }, 'DSH_STRAY'],
    ['a key another contributor declared', { DSH_FINE: 'hijack' }, 'DSH_FINE'],
    ['a built-in key', { DSH_HOME: '/elsewhere' }, 'DSH_HOME'],
    ['PATH', { PATH: '/evil/bin' }, 'PATH'],
    ['a lower-case spelling of its key', { dsh_own: 'x' }, 'dsh_own'],
  ])('ERR_SHELL_ENV_UNDECLARED_KEY for %s', async (_title, result, key) => {
    const error = await collectionError(mode, failing(() => result))
    expectCode(error, 'ERR_SHELL_ENV_UNDECLARED_KEY', 'culprit', key)
  })

  it.each([
    ['a number', 42],
    ['null', null],
    ['an explicit undefined', undefined],
    ['a boolean', true],
    ['an object', { toString: () => 'x' }],
    ['an array', ['x']],
    ['a String object', Object('boxed')],
    ['a bigint', 1n],
    ['a symbol', Symbol('s')],
  ])('ERR_SHELL_ENV_NON_STRING_VALUE for %s', async (_title, value) => {
    const error = await collectionError(mode, failing(() => ({ DSH_OWN: value })))
    expectCode(error, 'ERR_SHELL_ENV_NON_STRING_VALUE', 'culprit', 'DSH_OWN')
  })

  it.each([
    ['in the middle', 'a\0b'],
    ['alone', '\0'],
    ['at the end', 'value\0'],
  ])('ERR_SHELL_ENV_INVALID_VALUE for a NUL byte %s', async (_title, value) => {
    const error = await collectionError(mode, failing(() => ({ DSH_OWN: value })))
    expectCode(error, 'ERR_SHELL_ENV_INVALID_VALUE', 'culprit', 'DSH_OWN')
  })

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'DSH_OWN=x'],
    ['a number', 7],
    ['an array', [['DSH_OWN', 'x']]],
    ['a Map', new Map([['DSH_OWN', 'x']])],
  ])('rejects a resolver result that is %s', async (_title, result) => {
    const error = await collectionError(mode, failing(() => result))
    // shape chosen by the implementation: the code for a non-plain-object result
    expectCode(error, 'ERR_SHELL_ENV_INVALID_RESULT', 'culprit')
  })

  it.each([
    ['an Error', () => new Error('resolver exploded')],
    ['a TypeError', () => new TypeError('bad type')],
    ['an Error with its own code', () => Object.assign(new Error('coded'), { code: 'EOWN' })],
    ['a string', () => 'a bare string'],
    ['a plain object', () => ({ reason: 'object' })],
  ])('ERR_SHELL_ENV_RESOLVER_FAILED with the thrown value as cause: %s', async (_title, make) => {
    const original = make()
    const error = await collectionError(
      mode,
      failing(() => {
        throw original
      }),
    )
    expectCode(error, 'ERR_SHELL_ENV_RESOLVER_FAILED', 'culprit')
    expect(error.cause).toBe(original)
  })

  it('stays usable after a failed collection', async () => {
    const reg = registry()
    let fail = true
    reg.register(contributor('flaky', ['DSH_FLAKY'], { resolve: () => (fail ? { DSH_FLAKY: 1 } : { DSH_FLAKY: 'ok' }) }))
    await collectionError(mode, reg)
    fail = false
    expect(await collect(reg, {})).toEqual({ ...BUILTINS, DSH_FLAKY: 'ok' })
  })
})

describe('collect(): async resolvers', () => {
  it.each([
    ['a resolved promise', () => Promise.resolve({ DSH_OWN: 'x' })],
    ['an async function', async () => ({ DSH_OWN: 'x' })],
    ['a thenable', () => ({ then: (resolve) => resolve({ DSH_OWN: 'x' }) })],
  ])('ERR_SHELL_ENV_ASYNC_RESOLVER when a resolver returns %s', (_title, resolve) => {
    const reg = registry()
    reg.register(contributor('asyncish', ['DSH_OWN'], { resolve }))
    expectCode(thrown(() => reg.collect({})), 'ERR_SHELL_ENV_ASYNC_RESOLVER', 'asyncish')
  })
})

describe('collect(): the snapshot object, collection after collection', () => {
  const keysOf = (index) => [`DSH_SHAPE${index}_A`, `DSH_SHAPE${index}_B`]
  const shaped = (index) => {
    const reg = registry()
    const [a, b] = keysOf(index)
    reg.register(contributor(`shape-${index}`, [a, b], { resolve: (execution) => ({ [a]: `a${index}`, [b]: execution.agent ? 'agent' : 'user' }) }))
    return reg
  }
  const expected = (index, agent) => {
    const [a, b] = keysOf(index)
    return { ...BUILTINS, ...(agent ? { DSH_SESSION_ID: 's-1' } : {}), [a]: `a${index}`, [b]: agent ? 'agent' : 'user' }
  }

  it('is the same sorted, frozen plain object on the first and every later collection with one key list', () => {
    const reg = shaped(0)
    for (let round = 0; round < 4; round++) {
      const snapshot = reg.collect(agentExecution('s-1'))
      expect(snapshot).toEqual(expected(0, true))
      expectSnapshotShape(snapshot)
      expect(Object.getPrototypeOf(snapshot)).toBe(Object.prototype)
    }
  })

  it('follows key lists that alternate and outnumber those kept, each with its own keys and values', () => {
    const regs = Array.from({ length: 20 }, (_, index) => shaped(index))
    for (let round = 0; round < 3; round++) {
      for (const [index, reg] of regs.entries()) {
        expect(reg.collect({})).toEqual(expected(index, false))
        const snapshot = reg.collect(agentExecution('s-1'))
        expect(snapshot).toEqual(expected(index, true))
        expectSnapshotShape(snapshot)
      }
    }
  })

  it('is built where code generation from strings is disallowed', () => {
    const script = `
      const { ShellEnvRegistry } = require(${JSON.stringify(path.resolve(__dirname, '..'))})
      const reg = new ShellEnvRegistry({ dshHome: '/srv/dsh' })
      reg.register({ name: 'one', variables: { DSH_ONE: { description: 'one' } }, resolve: () => ({ DSH_ONE: '1' }) })
      const snapshots = [1, 2, 3].map(() => reg.collect({}))
      console.log(JSON.stringify({ snapshots, frozen: snapshots.every(Object.isFrozen) }))
    `
    const run = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '-e', script], { encoding: 'utf8' })
    expect(run.stderr).toBe('')
    const snapshot = { DSH_HOME: '/srv/dsh', DSH_ONE: '1', DSH_SHELL: '1' }
    expect(JSON.parse(run.stdout)).toEqual({ snapshots: [snapshot, snapshot, snapshot], frozen: true })
  })
})
