'use strict'

// The registry of managed DSH_* variables on its own, without Cordis
// (cordis.spec.cjs has it as the service). Real calls into the addon, no
// mocks. Runs unchanged under `vitest run` (globals: true) and `jest`.
// Assertions on shapes the issue leaves open are marked
// `// shape chosen by the implementation`.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const vm = require('node:vm')
const { Worker } = require('node:worker_threads')

const {
  ROOT,
  FIXTURES,
  thrown,
  rejected,
  expectCode,
  expectSnapshotShape,
  variablesOf,
  contributor,
  agentExecution,
  runNode,
  lastJsonLine,
} = require('./helpers.cjs')

const pkg = require('..')
const { DSH_ENV_PREFIX, RESERVED_KEYS, ShellEnvRegistry, resolveDshHome, reconcileDshHome } = pkg

const HOME = path.resolve('/tmp/dsh-spec-home')
const D = path.delimiter
const BUILTINS = { DSH_HOME: HOME, DSH_SHELL: '1' }

function registry(options = {}) {
  return new ShellEnvRegistry({ dshHome: HOME, ...options })
}

/** Both collection entry points, so collection rules are checked on each. */
const MODES = [
  ['collect', (reg, execution, options) => reg.collect(execution, options)],
  ['collectAsync', (reg, execution, options) => reg.collectAsync(execution, options)],
]

/** The error a collection fails with: thrown synchronously by collect, a rejection from collectAsync. */
async function collectionError(mode, reg, execution = {}, options) {
  return mode === 'collect'
    ? thrown(() => reg.collect(execution, options))
    : rejected(() => reg.collectAsync(execution, options))
}

describe('exports', () => {
  it('DSH_ENV_PREFIX is "DSH_"', () => {
    expect(DSH_ENV_PREFIX).toBe('DSH_')
  })

  it('RESERVED_KEYS is the frozen list of built-ins', () => {
    expect(Array.isArray(RESERVED_KEYS)).toBe(true)
    expect([...RESERVED_KEYS]).toEqual(['DSH_HOME', 'DSH_SHELL', 'DSH_SESSION_ID', 'DSH_PROFILE', 'DSH_PROFILE_DIR'])
    expect(Object.isFrozen(RESERVED_KEYS)).toBe(true)
    expect(() => RESERVED_KEYS.push('DSH_EXTRA')).toThrow()
    expect(RESERVED_KEYS).toHaveLength(5)
  })

  it('exports the registry class and the home helpers', () => {
    expect(typeof ShellEnvRegistry).toBe('function')
    expect(typeof resolveDshHome).toBe('function')
    expect(typeof reconcileDshHome).toBe('function')
  })
})

describe('resolveDshHome', () => {
  const userHome = os.homedir()

  it.each([
    ['a configured path wins over env.DSH_HOME', '/opt/dsh', { DSH_HOME: '/env/dsh' }, path.resolve('/opt/dsh')],
    ['env.DSH_HOME when nothing is configured', undefined, { DSH_HOME: '/env/dsh' }, path.resolve('/env/dsh')],
    ['an empty configured string counts as not configured', '', { DSH_HOME: '/env/dsh' }, path.resolve('/env/dsh')],
    ['~/.dsh when env.DSH_HOME is absent', undefined, {}, path.join(userHome, '.dsh')],
    ['~/.dsh when env.DSH_HOME is empty', undefined, { DSH_HOME: '' }, path.join(userHome, '.dsh')],
    ['~/.dsh when env.DSH_HOME is blank', '', { DSH_HOME: ' \t\n' }, path.join(userHome, '.dsh')],
    ['~ alone is the home directory', '~', {}, userHome],
    ['~/x expands under the home directory', '~/harness', {}, path.join(userHome, 'harness')],
    ['~ expands in env.DSH_HOME too', undefined, { DSH_HOME: '~/from-env' }, path.join(userHome, 'from-env')],
    ['a trailing slash is removed', '/opt/dsh/', {}, path.resolve('/opt/dsh')],
    ['. and .. segments and doubled slashes are resolved', '/opt/./a/../dsh//', {}, path.resolve('/opt/dsh')],
    ['.. in a ~ path is resolved', '~/a/../b/', {}, path.join(userHome, 'b')],
    ['a relative path becomes absolute against the cwd', 'rel/dsh', {}, path.resolve('rel/dsh')],
    // shape chosen by the implementation: only `~` and `~/…` expand, `~user` is a relative name
    ['~user is not expanded', '~someone/x', {}, path.resolve('~someone/x')],
  ])('%s', (_title, configured, env, expected) => {
    expect(resolveDshHome(configured, env)).toBe(expected)
  })

  it('defaults env to process.env', () => {
    const fromEnv = process.env.DSH_HOME
    const expected =
      fromEnv !== undefined && fromEnv.trim() !== '' ? path.resolve(fromEnv) : path.join(userHome, '.dsh')
    expect(resolveDshHome()).toBe(expected)
    expect(resolveDshHome(undefined)).toBe(expected)
    expect(resolveDshHome('/configured')).toBe(path.resolve('/configured'))
  })

  it('reads the live process.env and a registry resolves its home once (child process)', () => {
    const envHome = path.resolve('/tmp/dsh-home-from-env')
    const child = runNode([path.join(FIXTURES, 'home-env.cjs')], { env: { DSH_HOME: envHome } })
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    const { before, after } = lastJsonLine(child.stdout)
    expect(before).toEqual({ resolved: envHome, reconciled: envHome, dshHome: envHome, collected: envHome })
    const changed = path.resolve('/tmp/dsh-home-changed')
    expect(after).toEqual({ resolved: changed, dshHome: envHome, collected: envHome, fresh: changed })
  })
})

describe('reconcileDshHome', () => {
  it.each([
    ['neither given: the resolved default', undefined, undefined, () => resolveDshHome()],
    ['only the top-level home', '/opt/top', undefined, () => path.resolve('/opt/top')],
    ['only skills.local', undefined, '/opt/skills', () => path.resolve('/opt/skills')],
    ['both, spelled differently but the same directory', '/opt/dsh', '/opt/x/../dsh/', () => path.resolve('/opt/dsh')],
    ['both, ~ and its expansion', '~/dsh', path.join(os.homedir(), 'dsh'), () => path.join(os.homedir(), 'dsh')],
    ['an empty top-level home counts as not given', '', '/opt/skills', () => path.resolve('/opt/skills')],
  ])('%s', (_title, top, skillsLocal, expected) => {
    expect(reconcileDshHome(top, skillsLocal)).toBe(expected())
  })

  it('throws ERR_SHELL_ENV_HOME_CONFLICT when both resolve differently', () => {
    const error = thrown(() => reconcileDshHome('/opt/top-home', '/opt/skills-home'))
    expectCode(error, 'ERR_SHELL_ENV_HOME_CONFLICT', '/opt/top-home', '/opt/skills-home')
  })
})

describe('new ShellEnvRegistry', () => {
  it('resolves dshHome once, with the resolveDshHome rules', () => {
    expect(registry().dshHome).toBe(HOME)
    expect(new ShellEnvRegistry({ dshHome: '/opt/./x/../dsh/' }).dshHome).toBe(path.resolve('/opt/dsh'))
    expect(new ShellEnvRegistry({ dshHome: '~/dsh' }).dshHome).toBe(path.join(os.homedir(), 'dsh'))
    expect(new ShellEnvRegistry({ dshHome: '' }).dshHome).toBe(resolveDshHome())
    expect(new ShellEnvRegistry({}).dshHome).toBe(resolveDshHome())
    // shape chosen by the implementation: the options object itself is optional
    expect(new ShellEnvRegistry().dshHome).toBe(resolveDshHome())
  })

  it('without a Cordis context it is a registry of its own: no ctx, and registrations last until disposed', () => {
    const reg = registry()
    expect(reg.ctx).toBeUndefined()
    const dispose = reg.register(contributor('standalone', ['DSH_STANDALONE']))
    expect(reg.list().map((entry) => entry.key)).toEqual(['DSH_STANDALONE'])
    dispose()
    expect(reg.list()).toEqual([])
  })

  it.each([
    ['a misspelt field', { dshhome: HOME }, 'dshhome'],
    ['a field of the original that the seed removed', { sessionJsonl: true }, 'sessionJsonl'],
    ['an undefined unknown field', { extra: undefined }, 'extra'],
    ['a symbol-keyed field', { [Symbol('meta')]: 1 }, 'Symbol(meta)'],
  ])('refuses a config with %s: ERR_SHELL_ENV_INVALID_OPTION naming it', (_title, config, field) => {
    expectCode(thrown(() => new ShellEnvRegistry(config)), 'ERR_SHELL_ENV_INVALID_OPTION', field, 'unknown field', 'dshHome, profile')
  })

  it('refuses a profile with a field other than name and dir: ERR_SHELL_ENV_INVALID_PROFILE naming it', () => {
    const profile = { name: 'work', dir: '/profiles/work', path: '/elsewhere' }
    expectCode(thrown(() => registry({ profile })), 'ERR_SHELL_ENV_INVALID_PROFILE', 'profile.path')
  })

  it.each([
    ['a config object', { dshHome: HOME }],
    ['null', null],
    ['a look-alike context', { effect() {}, provide() {}, set() {} }],
  ])('with two arguments the first must be a Cordis context, not %s: ERR_SHELL_ENV_INVALID_OPTION', (_title, first) => {
    expectCode(thrown(() => new ShellEnvRegistry(first, { dshHome: HOME })), 'ERR_SHELL_ENV_INVALID_OPTION', 'Cordis context', 'new ShellEnvRegistry(config)')
  })

  it.each([
    ['an empty name', { name: '', dir: '/profiles/work' }],
    ['a blank name', { name: ' \t', dir: '/profiles/work' }],
    ['a relative dir', { name: 'work', dir: 'profiles/work' }],
    ['an empty dir', { name: 'work', dir: '' }],
  ])('rejects a profile with %s: ERR_SHELL_ENV_INVALID_PROFILE', (_title, profile) => {
    expectCode(thrown(() => registry({ profile })), 'ERR_SHELL_ENV_INVALID_PROFILE')
  })
})

describe('register: validation', () => {
  // Each case fails registration of contributor `name` (or of a blank name).
  // Afterwards nothing of it may remain: list() and catalog() are unchanged and
  // the same name registers fine with a valid declaration.
  const invalidKeys = [
    'dsh_region',
    'Dsh_REGION',
    'DSH_region',
    'DSH_Region',
    'DSH_',
    'DSH_1REGION',
    'DSH__REGION',
    'REGION',
    'DSHREGION',
    'DSH-REGION',
    'DSH_REG-ION',
    'DSH_REG.ION',
    'DSH_A=B',
    'DSH_A\0',
    'DSH_A\0B',
    'DSH_A B',
    ' DSH_A',
    'DSH_A\n',
    'DSH_RÉGION',
    'DSH_Ä',
    'DSH_\uFF21', // fullwidth A
    'DSH_A\u0130', // İ, upper case but not ASCII
  ]
  const cases = [
    ['an empty name', 'ERR_SHELL_ENV_INVALID_NAME', contributor('', ['DSH_FRESH']), []],
    ['a blank name', 'ERR_SHELL_ENV_INVALID_NAME', contributor(' \t\n', ['DSH_FRESH']), []],
    // shape chosen by the implementation: a missing or non-string name is also INVALID_NAME
    ['a missing name', 'ERR_SHELL_ENV_INVALID_NAME', contributor(undefined, ['DSH_FRESH']), []],
    ...invalidKeys.map((key) => [
      `invalid key ${JSON.stringify(key)}`,
      'ERR_SHELL_ENV_INVALID_KEY',
      contributor('bad-key', ['DSH_FRESH', key]),
      // The message names the key; control characters may appear escaped, so only the part before one is checked.
      ['bad-key', key.replace(/[\0-\x1f][^]*$/, '')],
    ]),
    ...['DSH_HOME', 'DSH_SHELL', 'DSH_SESSION_ID', 'DSH_PROFILE', 'DSH_PROFILE_DIR'].map((key) => [
      `reserved key ${key}`,
      'ERR_SHELL_ENV_RESERVED_KEY',
      contributor('reserving', ['DSH_FRESH', key]),
      ['reserving', key],
    ]),
    ...[
      ['absent', {}],
      ['undefined', { description: undefined }],
      ['empty', { description: '' }],
      ['blank', { description: ' \t\n' }],
    ].map(([what, declaration]) => [
      `a description that is ${what}`,
      'ERR_SHELL_ENV_MISSING_DESCRIPTION',
      { name: 'undescribed', variables: { DSH_FRESH: { description: 'ok' }, DSH_TERSE: declaration }, resolve: () => ({}) },
      ['undescribed', 'DSH_TERSE'],
    ]),
    ...[
      ['relative', 'relative/bin'],
      ['dot-relative', './bin'],
      ['a bare name', 'bin'],
      ['empty', ''],
      ['containing NUL', '/opt/a\0b/bin'],
      ['containing the PATH delimiter', `/opt/a${D}b/bin`],
    ].map(([what, dir]) => [
      `a command directory that is ${what}`,
      'ERR_SHELL_ENV_INVALID_DIRECTORY',
      contributor('dirs', ['DSH_FRESH'], { commandDirectories: [path.resolve('/opt/good/bin'), dir] }),
      ['dirs'],
    ]),
  ]

  it.each(cases)('rejects %s with %s, registering nothing', (_title, code, declaration, mentions) => {
    const reg = registry()
    reg.register(contributor('existing', ['DSH_EXISTING'], { commandDirectories: [path.resolve('/opt/existing')] }))
    const listBefore = reg.list()
    const catalogBefore = reg.catalog()
    let resolved = 0
    const error = thrown(() => reg.register({ ...declaration, resolve: () => ((resolved += 1), {}) }))
    expectCode(error, code, ...mentions)

    expect(reg.list()).toEqual(listBefore)
    expect(reg.catalog()).toEqual(catalogBefore)
    expect(reg.collect({}, { inheritedPath: '/usr/bin' })).toEqual({
      ...BUILTINS,
      PATH: [path.resolve('/opt/existing'), '/usr/bin'].join(D),
    })
    expect(resolved).toBe(0)
    // The name and the valid key it declared are free again.
    const name = typeof declaration.name === 'string' && declaration.name.trim() !== '' ? declaration.name : 'renamed'
    expect(typeof reg.register(contributor(name, ['DSH_FRESH']))).toBe('function')
  })

  it('rejects a duplicate contributor name: ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR', () => {
    const reg = registry()
    reg.register(contributor('region', ['DSH_REGION'], { resolve: () => ({ DSH_REGION: 'first' }) }))
    const error = thrown(() => reg.register(contributor('region', ['DSH_OTHER'])))
    expectCode(error, 'ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR', 'region')
    expect(reg.list()).toEqual([{ contributor: 'region', description: 'DSH_REGION from region', key: 'DSH_REGION' }])
    expect(reg.collect({})).toEqual({ ...BUILTINS, DSH_REGION: 'first' })
    // DSH_OTHER was not claimed by the failed registration.
    reg.register(contributor('other', ['DSH_OTHER']))
  })

  it('rejects a key another contributor owns: ERR_SHELL_ENV_DUPLICATE_KEY naming both owners', () => {
    const reg = registry()
    reg.register(contributor('first-owner', ['DSH_SHARED']))
    const listBefore = reg.list()
    const error = thrown(() => reg.register(contributor('second-owner', ['DSH_UNIQUE', 'DSH_SHARED'])))
    expectCode(error, 'ERR_SHELL_ENV_DUPLICATE_KEY', 'DSH_SHARED', 'first-owner', 'second-owner')
    expect(reg.list()).toEqual(listBefore)
    // Nothing of second-owner was registered: its name and DSH_UNIQUE are free.
    reg.register(contributor('second-owner', ['DSH_UNIQUE']))
    expect(reg.list().map((entry) => entry.key)).toEqual(['DSH_SHARED', 'DSH_UNIQUE'])
  })

  it('accepts every well-formed key, and a contributor with no variables', () => {
    const reg = registry()
    const keys = ['DSH_A', 'DSH_Z9', 'DSH_A_B_C', 'DSH_X_', 'DSH_REGION_2', 'DSH_SESSION']
    reg.register(contributor('well-formed', keys))
    reg.register(contributor('empty', [], { commandDirectories: [path.resolve('/opt/empty/bin')] }))
    expect(reg.list().map((entry) => entry.key)).toEqual([...keys].sort())
  })
})

describe('register: disposers', () => {
  it('returns a disposer that removes the registration and is idempotent', () => {
    const reg = registry()
    const dispose = reg.register(contributor('temp', ['DSH_TEMP'], { resolve: () => ({ DSH_TEMP: 't' }) }))
    expect(typeof dispose).toBe('function')
    expect(reg.collect({})).toEqual({ ...BUILTINS, DSH_TEMP: 't' })
    dispose()
    expect(reg.list()).toEqual([])
    expect(reg.collect({})).toEqual(BUILTINS)
    expect(() => dispose()).not.toThrow()
    expect(reg.list()).toEqual([])
  })

  it('frees the name and keys for a new registration', () => {
    const reg = registry()
    reg.register(contributor('temp', ['DSH_TEMP']))()
    reg.register(contributor('other', ['DSH_TEMP']))
    expect(reg.list()).toEqual([{ contributor: 'other', description: 'DSH_TEMP from other', key: 'DSH_TEMP' }])
  })

  it('a stale disposer never removes a later registration of the same name', () => {
    const reg = registry()
    const stale = reg.register(contributor('plugin', ['DSH_V1'], { resolve: () => ({ DSH_V1: 'one' }) }))
    stale()
    const current = reg.register(contributor('plugin', ['DSH_V2'], { resolve: () => ({ DSH_V2: 'two' }) }))
    stale()
    stale()
    expect(reg.list()).toEqual([{ contributor: 'plugin', description: 'DSH_V2 from plugin', key: 'DSH_V2' }])
    expect(reg.collect({})).toEqual({ ...BUILTINS, DSH_V2: 'two' })
    current()
    expect(reg.list()).toEqual([])
  })

  it('disposers of one registry never touch another registry', () => {
    const a = registry()
    const b = registry()
    const disposeA = a.register(contributor('same', ['DSH_SAME']))
    b.register(contributor('same', ['DSH_SAME']))
    disposeA()
    expect(a.list()).toEqual([])
    expect(b.list()).toHaveLength(1)
  })
})

describe('list()', () => {
  it('lists plugin declarations sorted by key, without built-ins and without running resolvers', () => {
    const reg = registry({ profile: { name: 'work', dir: path.resolve('/profiles/work') } })
    let calls = 0
    const resolve = () => ((calls += 1), {})
    reg.register({
      name: 'zeta',
      variables: { DSH_B: { description: 'bee' }, DSH_Y: { description: 'why' } },
      commandDirectories: [path.resolve('/opt/zeta/bin')],
      resolve,
    })
    reg.register({ name: 'alpha', variables: { DSH_Z: { description: 'zed' }, DSH_A: { description: 'ay' } }, resolve })
    expect(reg.list()).toEqual([
      { contributor: 'alpha', description: 'ay', key: 'DSH_A' },
      { contributor: 'zeta', description: 'bee', key: 'DSH_B' },
      { contributor: 'zeta', description: 'why', key: 'DSH_Y' },
      { contributor: 'alpha', description: 'zed', key: 'DSH_Z' },
    ])
    expect(calls).toBe(0)
  })

  it('is empty for a fresh registry', () => {
    expect(registry().list()).toEqual([])
  })
})

describe('catalog()', () => {
  function builtinRows(withProfile) {
    return [
      { key: 'DSH_HOME', owner: 'built-in', when: 'always' },
      ...(withProfile
        ? [
            { key: 'DSH_PROFILE', owner: 'built-in', when: 'profile' },
            { key: 'DSH_PROFILE_DIR', owner: 'built-in', when: 'profile' },
          ]
        : []),
      { key: 'DSH_SESSION_ID', owner: 'built-in', when: 'agent' },
      { key: 'DSH_SHELL', owner: 'built-in', when: 'always' },
    ]
  }

  it('lists built-ins and contributions with their owner and availability, sorted by key', () => {
    const reg = registry({ profile: { name: 'work', dir: path.resolve('/profiles/work') } })
    let calls = 0
    reg.register({
      name: 'tools',
      variables: variablesOf('tools', ['DSH_TOOL']),
      commandDirectories: [path.resolve('/opt/tools/bin'), path.resolve('/opt/tools/sbin')],
      resolve: () => ((calls += 1), {}),
    })
    reg.register(contributor('plain', ['DSH_PLAIN', 'DSH_ALPHA'], { resolve: () => ((calls += 1), {}) }))
    const catalog = reg.catalog()
    // shape chosen by the implementation: { variables: [...], commandDirectories: [{ contributor, directories }] }
    const rows = catalog.variables.map(({ key, owner, when }) => ({ key, owner, when }))
    const expected = [
      ...builtinRows(true),
      { key: 'DSH_ALPHA', owner: 'plain', when: 'resolver' },
      { key: 'DSH_PLAIN', owner: 'plain', when: 'resolver' },
      { key: 'DSH_TOOL', owner: 'tools', when: 'resolver' },
    ].sort((a, b) => (a.key < b.key ? -1 : 1))
    expect(rows).toEqual(expected)
    for (const entry of catalog.variables) {
      expect(Object.keys(entry).sort()).toEqual(['description', 'key', 'owner', 'when'])
      expect(typeof entry.description).toBe('string')
      expect(entry.description.trim()).not.toBe('')
    }
    expect(catalog.variables.find((entry) => entry.key === 'DSH_TOOL').description).toBe('DSH_TOOL from tools')
    // shape chosen by the implementation
    expect(catalog.commandDirectories).toEqual([
      { contributor: 'tools', directories: [path.resolve('/opt/tools/bin'), path.resolve('/opt/tools/sbin')] },
    ])
    expect(calls).toBe(0)
  })

  it('omits the profile built-ins when the registry has no profile', () => {
    const catalog = registry().catalog()
    expect(catalog.variables.map(({ key, owner, when }) => ({ key, owner, when }))).toEqual(builtinRows(false))
    // shape chosen by the implementation
    expect(catalog.commandDirectories).toEqual([])
  })

  it('every `when` is one of always | agent | profile | resolver', () => {
    const reg = registry({ profile: { name: 'p', dir: path.resolve('/p') } })
    reg.register(contributor('c', ['DSH_C']))
    for (const entry of reg.catalog().variables) {
      expect(['always', 'agent', 'profile', 'resolver']).toContain(entry.when)
    }
  })
})

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

describe('ESM', () => {
  it('`import` of the package by name works in plain Node (child process)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-shell-env-esm-'))
    try {
      const scope = path.join(dir, 'node_modules', '@deepseek-ai')
      fs.mkdirSync(scope, { recursive: true })
      fs.symlinkSync(ROOT, path.join(scope, 'dsh-shell-env'), 'junction')
      const script = path.join(dir, 'check.mjs')
      fs.writeFileSync(
        script,
        [
          "import { createRequire } from 'node:module'",
          "import { DSH_ENV_PREFIX, RESERVED_KEYS, ShellEnvRegistry, resolveDshHome, reconcileDshHome } from '@deepseek-ai/dsh-shell-env'",
          "import pkg from '@deepseek-ai/dsh-shell-env'",
          "const cjs = createRequire(import.meta.url)('@deepseek-ai/dsh-shell-env')",
          // shape chosen by the implementation: index.mjs re-exports the CommonJS entry (one set of objects)
          'const same = ShellEnvRegistry === cjs.ShellEnvRegistry && RESERVED_KEYS === cjs.RESERVED_KEYS && pkg.ShellEnvRegistry === ShellEnvRegistry',
          "const registry = new ShellEnvRegistry({ dshHome: '/tmp/dsh-esm' })",
          "registry.register({ name: 'esm', variables: { DSH_ESM: { description: 'from ESM' } }, resolve: () => ({ DSH_ESM: 'yes' }) })",
          'const snapshot = registry.collect({})',
          'const fromAsync = await registry.collectAsync({})',
          'console.log(JSON.stringify({ prefix: DSH_ENV_PREFIX, reserved: RESERVED_KEYS.length, same, snapshot, fromAsync, home: typeof resolveDshHome(), reconciled: typeof reconcileDshHome() }))',
        ].join('\n'),
      )
      const child = runNode([script], { cwd: dir })
      expect(child.stderr).toBe('')
      expect(child.status).toBe(0)
      const expected = { DSH_ESM: 'yes', DSH_HOME: path.resolve('/tmp/dsh-esm'), DSH_SHELL: '1' }
      expect(lastJsonLine(child.stdout)).toEqual({
        prefix: 'DSH_',
        reserved: 5,
        same: true,
        snapshot: expected,
        fromAsync: expected,
        home: 'string',
        reconciled: 'string',
      })
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
