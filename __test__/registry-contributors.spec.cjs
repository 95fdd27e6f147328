'use strict'

// The registry of managed DSH_* variables on its own, without Cordis
// (cordis-*.spec.cjs have it as the service): registering contributors (what a
// registration refuses, and that a refused one leaves nothing behind), their
// disposers, and what list() and catalog() report.
//
// Real calls into the addon, no mocks. Runs unchanged under `vitest run`
// (globals: true) and `jest`. Assertions on shapes the issue leaves open are
// marked `// shape chosen by the implementation`. Shared values (the home,
// built-ins, both collection modes) are in registry-helpers.cjs.

const path = require('node:path')

const { thrown, expectCode, variablesOf, contributor } = require('./helpers.cjs')
const { D, BUILTINS, registry } = require('./registry-helpers.cjs')

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
