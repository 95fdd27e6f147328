'use strict'

// The bad-input matrix, the registry's rows of CASES (run by
// bad-input-registry.spec.cjs, counted by bad-input-matrix.spec.cjs): new
// ShellEnvRegistry(options), register(), list(), catalog(), dshHome and the
// registry methods on a foreign receiver, collect() and collectAsync() (with
// resolvers returning every wrong shape), resolveDshHome() and
// reconcileDshHome(). The row format and the helpers are in
// bad-input-helpers.cjs.

const path = require('node:path')
const vm = require('node:vm')

const { contributor, agentExecution } = require('./helpers.cjs')
const {
  HOME,
  MiB,
  LONE_HIGH,
  LONE_LOW,
  followRegistry,
  revoked,
  throwingGetter,
  throwingTrap,
  ownProto,
  Thing,
  shapeRegistry,
  ENOUGH_KEYS,
  manyKeys,
  adder,
  INVALID_NAME,
  INVALID_KEY,
  INVALID_OPTION,
  INVALID_EXECUTION,
  INVALID_RESULT,
  INVALID_VALUE,
  RESOLVER_FAILED,
  INVALID_THIS,
  isTypeError,
} = require('./bad-input-helpers.cjs')

const { ShellEnvRegistry, resolveDshHome, reconcileDshHome } = require('..')

/**
 * R of bad-input-helpers.cjs, the registry every case checks for leftovers
 * (made fresh for each case), followed here for the rows that call it.
 */
let R
followRegistry((registry) => {
  R = registry
})

const CASES = []
const add = adder(CASES)

const INVALID_CONTRIBUTOR = 'ERR_SHELL_ENV_INVALID_CONTRIBUTOR'
const INVALID_DIRECTORY = 'ERR_SHELL_ENV_INVALID_DIRECTORY'
const MISSING_DESCRIPTION = 'ERR_SHELL_ENV_MISSING_DESCRIPTION'
const INVALID_PROFILE = 'ERR_SHELL_ENV_INVALID_PROFILE'
const NON_STRING = 'ERR_SHELL_ENV_NON_STRING_VALUE'
const UNDECLARED = 'ERR_SHELL_ENV_UNDECLARED_KEY'

// new ShellEnvRegistry(options) -------------------------------------------------------------
{
  const ctor = add('new ShellEnvRegistry', 'throws')
  const make = (options) => new ShellEnvRegistry(options)
  for (const [title, options] of [
    ['options a number', 5],
    ['options a string', '/opt/dsh'],
    ['options true', true],
    ['options a symbol', Symbol('options')],
    ['options a bigint', 1n],
    ['options an array', [{ dshHome: '/opt/dsh' }]],
    ['options a Map', new Map([['dshHome', '/opt/dsh']])],
    ['options a function', () => ({ dshHome: '/opt/dsh' })],
    ['options a Date', new Date(0)],
  ]) {
    ctor(title, () => make(options), INVALID_OPTION, { mentions: ['options'] })
  }
  ctor('options a revoked Proxy', () => make(revoked()), INVALID_OPTION, { mentions: ['options'], cause: isTypeError })
  for (const [title, dshHome] of [
    ['dshHome a number', 5],
    ['dshHome an object', { path: '/opt/dsh' }],
    ['dshHome an array', ['/opt/dsh']],
    ['dshHome true', true],
    ['dshHome with a NUL byte', '/opt/dsh\0/evil'],
    ['dshHome with a lone high surrogate', `/opt/dsh${LONE_HIGH}`],
    ['dshHome with a lone low surrogate', `${LONE_LOW}/opt`],
  ]) {
    ctor(title, () => make({ dshHome }), INVALID_OPTION, { mentions: ['dshHome'] })
  }
  ctor('a dshHome getter that throws', (t) => make(throwingGetter(t, {}, 'dshHome')), INVALID_OPTION, {
    mentions: ['dshHome'],
    cause: 'thrown',
  })
  ctor('a dshHome getter that throws a string', (t) => make(throwingGetter(t, {}, 'dshHome', 'a string')), INVALID_OPTION, {
    cause: 'thrown',
  })
  ctor('options a Proxy whose get trap throws', (t) => make(throwingTrap(t, {}, 'get')), INVALID_OPTION, { cause: 'thrown' })
  for (const [title, profile] of [
    ['profile a string', 'work'],
    ['profile null', null],
    ['profile an array', ['work', '/p']],
    ['profile a Map', new Map([['name', 'work']])],
    ['profile without fields', {}],
    ['profile.name a number', { name: 1, dir: '/p' }],
    ['profile.name blank', { name: ' ', dir: '/p' }],
    ['profile.dir relative', { name: 'work', dir: 'profiles/work' }],
    ['profile.dir missing', { name: 'work' }],
    ['profile.name with NUL', { name: 'wo\0rk', dir: '/p' }],
    ['profile.dir with NUL', { name: 'work', dir: '/p\0' }],
    ['profile.name with a lone surrogate', { name: `work${LONE_HIGH}`, dir: '/p' }],
    ['profile.dir with a lone surrogate', { name: 'work', dir: `/p/${LONE_LOW}` }],
  ]) {
    ctor(title, () => make({ dshHome: HOME, profile }), INVALID_PROFILE)
  }
  ctor('a profile.name getter that throws', (t) => make({ profile: throwingGetter(t, { dir: '/p' }, 'name') }), INVALID_PROFILE, {
    mentions: ['profile.name'],
    cause: 'thrown',
  })
  ctor('an options.profile getter that throws', (t) => make(throwingGetter(t, {}, 'profile')), INVALID_PROFILE, {
    cause: 'thrown',
  })
  ctor('profile a revoked Proxy', () => make({ profile: revoked() }), INVALID_PROFILE, { cause: isTypeError })
}

// registry.register(contributor) --------------------------------------------------------------
{
  const reg = add('register', 'throws')
  const register = (value) => R.register(value)
  const base = (overrides) => contributor('bad-input', ['DSH_FRESH'], overrides)
  for (const [title, value] of [
    ['undefined', undefined],
    ['null', null],
    ['a number', 5],
    ['a string', 'bad-input'],
    ['true', true],
    ['a symbol', Symbol('contributor')],
  ]) {
    reg(`contributor ${title}`, () => register(value), INVALID_NAME)
  }
  for (const [title, name] of [
    ['missing', undefined],
    ['null', null],
    ['a number', 7],
    ['an object', { toString: () => 'named' }],
    ['empty', ''],
    ['blank', ' \t\n'],
    ['with a NUL byte', 'bad\0input'],
    ['with a lone surrogate', `bad${LONE_HIGH}input`],
  ]) {
    reg(`name ${title}`, () => register(base({ name })), INVALID_NAME)
  }
  reg('a name getter that throws', (t) => register(throwingGetter(t, base(), 'name')), INVALID_NAME, { cause: 'thrown' })
  reg('a name getter that throws undefined', (t) => register(throwingGetter(t, base(), 'name', undefined)), INVALID_NAME, {
    cause: 'thrown',
  })
  reg('contributor a revoked Proxy', () => register(revoked(base())), INVALID_NAME, { cause: isTypeError })
  reg('contributor a Proxy whose get trap throws', (t) => register(throwingTrap(t, base(), 'get')), INVALID_NAME, {
    cause: 'thrown',
  })
  for (const [title, variables] of [
    ['missing', undefined],
    ['null', null],
    ['a string', 'DSH_FRESH'],
    ['a number', 1],
    ['an array', [{ description: 'x' }]],
    ['an array of keys', ['DSH_FRESH']],
    ['a Map', new Map([['DSH_FRESH', { description: 'x' }]])],
    ['a Set', new Set(['DSH_FRESH'])],
    ['a function', function DSH_FRESH() {}],
  ]) {
    reg(`variables ${title}`, () => register(base({ variables })), INVALID_CONTRIBUTOR, { mentions: ['bad-input', 'variables'] })
  }
  reg('a variables getter that throws', (t) => register(throwingGetter(t, base(), 'variables')), INVALID_CONTRIBUTOR, {
    mentions: ['variables'],
    cause: 'thrown',
  })
  reg('variables a Proxy whose ownKeys trap throws', (t) => register(base({ variables: throwingTrap(t, {}, 'ownKeys') })), INVALID_CONTRIBUTOR, {
    cause: 'thrown',
  })
  reg(
    'variables a Proxy whose getOwnPropertyDescriptor trap throws',
    (t) => register(base({ variables: throwingTrap(t, { DSH_FRESH: { description: 'x' } }, 'getOwnPropertyDescriptor') })),
    INVALID_CONTRIBUTOR,
    { cause: 'thrown' },
  )
  reg('variables a revoked Proxy', () => register(base({ variables: revoked() })), INVALID_CONTRIBUTOR, { cause: isTypeError })
  for (const [title, key] of [
    ['lower case', 'dsh_fresh'],
    ['the bare prefix', 'DSH_'],
    ['outside the namespace', 'HOME'],
    ['with =', 'DSH_A=B'],
    ['with NUL', 'DSH_A\0'],
    ['non-ASCII', 'DSH_É'],
    ['with a lone surrogate', `DSH_A${LONE_LOW}`],
    ['constructor', 'constructor'],
    ['an array index', '0'],
    ['1 MiB long and lower case', `DSH_${'a'.repeat(MiB)}`],
  ]) {
    reg(`key ${title}`, () => register(base({ variables: { [key]: { description: 'x' } } })), INVALID_KEY)
  }
  reg('key __proto__ (an own property)', () => register(base({ variables: ownProto({ description: 'x' }) })), INVALID_KEY, {
    mentions: ['__proto__'],
  })
  reg('a symbol key', () => register(base({ variables: { [Symbol('DSH_SYM')]: { description: 'x' } } })), INVALID_KEY, {
    mentions: ['Symbol(DSH_SYM)'],
  })
  reg('key reserved (DSH_SESSION_ID)', () => register(base({ variables: { DSH_SESSION_ID: { description: 'x' } } })), 'ERR_SHELL_ENV_RESERVED_KEY')
  reg('10,000 keys, the last one invalid', () => register(base({ variables: { ...manyKeys(), dsh_last: { description: 'x' } } })), INVALID_KEY, {
    mentions: ['dsh_last'],
  })
  reg(
    '10,000 keys, the last one owned by another contributor',
    () => register(base({ variables: { ...manyKeys(), DSH_BASE: { description: 'x' } } })),
    'ERR_SHELL_ENV_DUPLICATE_KEY',
    { mentions: ['DSH_BASE', 'base'] },
  )
  reg('a name already registered', () => register(contributor('base', ['DSH_OTHER'])), 'ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR')
  for (const [title, declaration] of [
    ['a string instead of { description }', 'the description'],
    ['null', null],
    ['without description', {}],
    ['an empty description', { description: '' }],
    ['a blank description', { description: '  ' }],
    ['a number description', { description: 5 }],
    ['a boxed string description', { description: new String('boxed') }],
  ]) {
    reg(`declaration ${title}`, () => register(base({ variables: { DSH_FRESH: declaration } })), MISSING_DESCRIPTION, {
      mentions: ['DSH_FRESH'],
    })
  }
  reg('a description with NUL', () => register(base({ variables: { DSH_FRESH: { description: 'a\0b' } } })), INVALID_CONTRIBUTOR, {
    mentions: ['DSH_FRESH', 'NUL'],
  })
  reg(
    'a description with a lone surrogate',
    () => register(base({ variables: { DSH_FRESH: { description: `half ${LONE_HIGH}` } } })),
    INVALID_CONTRIBUTOR,
    { mentions: ['DSH_FRESH', 'well-formed'] },
  )
  reg('a declaration getter that throws', (t) => register(base({ variables: throwingGetter(t, {}, 'DSH_FRESH') })), INVALID_CONTRIBUTOR, {
    mentions: ['variables.DSH_FRESH'],
    cause: 'thrown',
  })
  reg(
    'a description getter that throws',
    (t) => register(base({ variables: { DSH_FRESH: throwingGetter(t, {}, 'description') } })),
    INVALID_CONTRIBUTOR,
    { mentions: ['variables.DSH_FRESH.description'], cause: 'thrown' },
  )
  for (const [title, commandDirectories] of [
    ['a string', '/opt/bin'],
    ['an object', { 0: '/opt/bin', length: 1 }],
    ['null', null],
    ['a Set', new Set(['/opt/bin'])],
    ['a Proxy of an array', new Proxy(['/opt/bin'], {})],
  ]) {
    reg(`commandDirectories ${title}`, () => register(base({ commandDirectories })), INVALID_CONTRIBUTOR, {
      mentions: ['commandDirectories'],
    })
  }
  for (const [title, directories] of [
    ['relative', ['opt/bin']],
    ['empty', ['']],
    ['a number', [5]],
    ['null', [null]],
    ['a hole', [, '/opt/bin']], // eslint-disable-line no-sparse-arrays
    ['with NUL', ['/opt/\0bin']],
    ['with the PATH delimiter', [`${path.resolve('/opt/bin')}${path.delimiter}${path.resolve('/usr/bin')}`]],
    ['with a lone surrogate', [`/opt/${LONE_HIGH}`]],
    ['a valid one, then a relative one', [path.resolve('/opt/bin'), 'bin']],
  ]) {
    reg(`a command directory ${title}`, () => register(base({ commandDirectories: directories })), INVALID_DIRECTORY)
  }
  reg(
    'a command directory getter that throws',
    (t) => register(base({ commandDirectories: throwingGetter(t, ['/opt/bin'], 0) })),
    INVALID_CONTRIBUTOR,
    { mentions: ['commandDirectories[0]'], cause: 'thrown' },
  )
  reg('a commandDirectories getter that throws', (t) => register(throwingGetter(t, base(), 'commandDirectories')), INVALID_CONTRIBUTOR, {
    cause: 'thrown',
  })
  for (const [title, resolve] of [
    ['missing', undefined],
    ['null', null],
    ['a string', 'resolve'],
    ['an object', { call: () => ({}) }],
  ]) {
    reg(`resolve ${title}`, () => register(base({ resolve })), INVALID_CONTRIBUTOR, { mentions: ['resolve'] })
  }
  reg('a resolve getter that throws', (t) => register(throwingGetter(t, base(), 'resolve')), INVALID_CONTRIBUTOR, {
    mentions: ['resolve'],
    cause: 'thrown',
  })
  reg('a frozen contributor with an invalid key', () => register(Object.freeze(base({ variables: Object.freeze({ bad: { description: 'x' } }) }))), INVALID_KEY)
  reg('a class instance with an invalid directory', () => register(new Thing(base({ commandDirectories: ['rel'] }))), INVALID_DIRECTORY)
}

// list(), catalog(), dshHome and the registry methods on a foreign receiver ---------------------
{
  const foreign = add('registry methods', 'throws')
  const receivers = [
    ['a plain object', () => ({})],
    ['undefined', () => undefined],
    ['a look-alike inheriting ShellEnvRegistry.prototype', () => Object.create(ShellEnvRegistry.prototype)],
  ]
  for (const [receiverTitle, receiver] of receivers) {
    for (const method of ['list', 'catalog', 'register', 'collect']) {
      foreign(`${method}() on ${receiverTitle}`, () => ShellEnvRegistry.prototype[method].call(receiver(), {}), INVALID_THIS, {
        mentions: [method],
      })
    }
    foreign(
      `the dshHome getter on ${receiverTitle}`,
      () => Object.getOwnPropertyDescriptor(ShellEnvRegistry.prototype, 'dshHome').get.call(receiver()),
      INVALID_THIS,
    )
  }
  foreign('a destructured collect()', () => {
    const { collect } = R
    return collect({})
  }, INVALID_THIS)
  add('registry methods', 'rejects')('a destructured collectAsync() rejects', () => {
    const { collectAsync } = R
    return collectAsync({})
  }, INVALID_THIS)
}

// collect(execution, options) and collectAsync(execution, options) ------------------------------
const MODES = [
  ['collect', 'throws', (registry, execution, options) => registry.collect(execution, options)],
  ['collectAsync', 'rejects', (registry, execution, options) => registry.collectAsync(execution, options)],
]
for (const [api, mode, collect] of MODES) {
  const row = add(api, mode)
  for (const [title, execution] of [
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['a string', 'session-1'],
    ['false', false],
    ['a symbol', Symbol('execution')],
  ]) {
    row(`execution ${title}`, () => collect(R, execution), INVALID_EXECUTION)
  }
  // A malformed agent is the execution's fault, named as such.
  const AGENT_ID = 'execution.agent.session.header.id'
  row('an execution.agent getter that throws', (t) => collect(R, throwingGetter(t, {}, 'agent')), INVALID_EXECUTION, {
    mentions: [AGENT_ID],
    cause: 'thrown',
  })
  row('a session id getter that throws', (t) => collect(R, { agent: { session: { header: throwingGetter(t, {}, 'id') } } }), INVALID_EXECUTION, {
    cause: 'thrown',
  })
  row('execution a revoked Proxy', () => collect(R, revoked()), INVALID_EXECUTION, { cause: isTypeError })
  for (const [title, id, found] of [
    ['a number', 42, 'number'],
    ['null', null, 'null'],
    ['an object', { id: 'x' }, 'object'],
    ['with NUL', 'session\0x', 'NUL'],
    ['with a lone surrogate', `session-${LONE_HIGH}`, 'surrogate'],
  ]) {
    row(`a session id ${title}`, () => collect(R, agentExecution(id)), INVALID_EXECUTION, { mentions: [AGENT_ID, found] })
  }
  row('an agent without a session', () => collect(R, { agent: {} }), INVALID_EXECUTION, { mentions: [AGENT_ID, 'undefined'] })
  for (const [title, options] of [
    ['a number', 5],
    ['a string', '/usr/bin'],
    ['an array', ['/usr/bin']],
    ['a Map', new Map([['inheritedPath', '/usr/bin']])],
    ['a function', () => {}],
  ]) {
    row(`options ${title}`, () => collect(R, {}, options), INVALID_OPTION, { mentions: ['options'] })
  }
  row('options a revoked Proxy', () => collect(R, {}, revoked()), INVALID_OPTION, { cause: isTypeError })
  for (const [title, inheritedPath] of [
    ['a number', 5],
    ['an array', ['/usr/bin']],
    ['null', null],
    ['with NUL', '/usr/bin\0/evil'],
    ['with a lone surrogate', `/usr/${LONE_LOW}bin`],
  ]) {
    row(`inheritedPath ${title}`, () => collect(R, {}, { inheritedPath }), INVALID_OPTION, { mentions: ['inheritedPath'] })
  }
  row('an inheritedPath getter that throws', (t) => collect(R, {}, throwingGetter(t, {}, 'inheritedPath')), INVALID_OPTION, {
    mentions: ['inheritedPath'],
    cause: 'thrown',
  })

  // Resolvers returning each wrong shape.
  const shapes = [
    ['a number', () => 5, INVALID_RESULT],
    ['a string', () => 'DSH_V=x', INVALID_RESULT],
    ['null', () => null, INVALID_RESULT],
    ['undefined', () => undefined, INVALID_RESULT],
    ['true', () => true, INVALID_RESULT],
    ['a bigint', () => 5n, INVALID_RESULT],
    ['a symbol', () => Symbol('DSH_V'), INVALID_RESULT],
    ['a function', () => () => ({ DSH_V: 'x' }), INVALID_RESULT],
    ['an array', () => ['x'], INVALID_RESULT],
    ['an array of entries', () => [['DSH_V', 'x']], INVALID_RESULT],
    ['a Map', () => new Map([['DSH_V', 'x']]), INVALID_RESULT],
    ['a Set', () => new Set(['x']), INVALID_RESULT],
    ['a Date', () => new Date(0), INVALID_RESULT],
    ['a class instance', () => new Thing({ DSH_V: 'x' }), INVALID_RESULT],
    ['an object inheriting its value', () => Object.create({ DSH_V: 'x' }), INVALID_RESULT],
    ['a { __proto__: … } literal (a prototype, not a key)', () => ({ __proto__: { polluted: 'yes' }, DSH_V: 'x' }), INVALID_RESULT],
    ['a nested object value', () => ({ DSH_V: { nested: 'x' } }), NON_STRING],
    ['an array value', () => ({ DSH_V: ['x'] }), NON_STRING],
    ['a number value', () => ({ DSH_V: 1 }), NON_STRING],
    ['a null value', () => ({ DSH_V: null }), NON_STRING],
    ['an undefined value', () => ({ DSH_V: undefined }), NON_STRING],
    ['a boxed string value', () => ({ DSH_V: new String('x') }), NON_STRING],
    ['a symbol value', () => ({ DSH_V: Symbol('x') }), NON_STRING],
    ['a value with NUL', () => ({ DSH_V: 'a\0b' }), INVALID_VALUE],
    ['a value with a lone surrogate', () => ({ DSH_V: `a${LONE_LOW}b` }), INVALID_VALUE],
    ['a value that is a lone surrogate pair reversed', () => ({ DSH_V: '\ude00\ud83d' }), INVALID_VALUE],
    ['an undeclared key', () => ({ DSH_OTHER: 'x' }), UNDECLARED],
    ['a reserved key', () => ({ DSH_HOME: '/evil' }), UNDECLARED],
    ['PATH', () => ({ PATH: '/evil' }), UNDECLARED],
    ['an own __proto__ key', () => ownProto({ polluted: 'yes' }), UNDECLARED],
    ['a constructor key', () => ({ constructor: 'x' }), UNDECLARED],
    ['a symbol key', () => ({ DSH_V: 'x', [Symbol('DSH_V')]: 'x' }), UNDECLARED],
    ['a key with a lone surrogate', () => ({ [`DSH_V${LONE_HIGH}`]: 'x' }), UNDECLARED],
    ['an array-like object', () => ({ 0: 'x', length: 1 }), UNDECLARED],
    ['10,000 undeclared keys', () => Object.fromEntries(Array.from({ length: ENOUGH_KEYS }, (_, i) => [`DSH_U${i}`, 'x'])), UNDECLARED],
  ]
  for (const [title, resolve, code] of shapes) {
    row(`a resolver returning ${title}`, () => collect(shapeRegistry(undefined, { resolve }), {}), code, { mentions: ['shape'] })
  }
  row('a resolver returning a revoked Proxy', () => collect(shapeRegistry(revoked({ DSH_V: 'x' })), {}), RESOLVER_FAILED, {
    cause: isTypeError,
  })
  row('a resolver returning an object with a throwing getter', (t) => collect(shapeRegistry(throwingGetter(t, {}, 'DSH_V')), {}), RESOLVER_FAILED, {
    cause: 'thrown',
  })
  row('a resolver returning a Proxy whose ownKeys trap throws', (t) => collect(shapeRegistry(throwingTrap(t, { DSH_V: 'x' }, 'ownKeys')), {}), RESOLVER_FAILED, {
    cause: 'thrown',
  })
  row('a resolver returning an object whose then getter throws', (t) => collect(shapeRegistry(throwingGetter(t, {}, 'then')), {}), RESOLVER_FAILED, {
    cause: 'thrown',
  })
  for (const [title, make] of [
    ['an Error', () => new Error('resolver threw')],
    ['a string', () => 'resolver threw a string'],
    ['undefined', () => undefined],
    ['a plain object', () => ({ reason: 'resolver threw an object' })],
  ]) {
    row(`a resolver throwing ${title}`, (t) => {
      const value = make()
      return collect(shapeRegistry(undefined, { resolve: () => { throw t.boom(value) } }), {})
    }, RESOLVER_FAILED, { mentions: ['shape'], cause: 'thrown' })
  }
  const cross = vm.runInNewContext('({ DSH_V: 5 })')
  row('a resolver returning another realm’s object with a number', () => collect(shapeRegistry(cross), {}), NON_STRING)
}
{
  // Shapes only one of the two modes treats as errors.
  const sync = add('collect', 'throws')
  sync('a resolver returning a promise (sync collect)', () => shapeRegistry(Promise.resolve({ DSH_V: 'x' })).collect({}), 'ERR_SHELL_ENV_ASYNC_RESOLVER', {
    mentions: ['collectAsync'],
  })
  sync('a resolver returning a thenable (sync collect)', () => shapeRegistry({ then: (resolve) => resolve({ DSH_V: 'x' }) }).collect({}), 'ERR_SHELL_ENV_ASYNC_RESOLVER')
  sync('an async resolver (sync collect)', () => shapeRegistry(undefined, { resolve: async () => ({ DSH_V: 'x' }) }).collect({}), 'ERR_SHELL_ENV_ASYNC_RESOLVER')

  const later = add('collectAsync', 'rejects')
  later('a promise resolving to a Map', () => shapeRegistry(Promise.resolve(new Map())).collectAsync({}), INVALID_RESULT)
  later('a promise resolving to a number value', () => shapeRegistry(Promise.resolve({ DSH_V: 1 })).collectAsync({}), NON_STRING)
  later('a promise resolving to a lone surrogate', () => shapeRegistry(Promise.resolve({ DSH_V: LONE_HIGH })).collectAsync({}), INVALID_VALUE)
  later('a promise rejecting with a string', (t) => shapeRegistry(undefined, { resolve: () => Promise.reject(t.boom('rejected')) }).collectAsync({}), RESOLVER_FAILED, {
    cause: 'thrown',
  })
  later('a promise that never settles (timeoutMs 50)', () => shapeRegistry(new Promise(() => {})).collectAsync({}, { timeoutMs: 50 }), 'ERR_SHELL_ENV_RESOLVER_TIMEOUT')
  for (const [title, timeoutMs] of [
    ['0', 0],
    ['negative', -1],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['a string', '50'],
    ['null', null],
  ]) {
    later(`timeoutMs ${title}`, () => R.collectAsync({}, { timeoutMs }), INVALID_OPTION, { mentions: ['timeoutMs'] })
  }
  later('a timeoutMs getter that throws', (t) => R.collectAsync({}, throwingGetter(t, {}, 'timeoutMs')), INVALID_OPTION, { cause: 'thrown' })
  for (const [title, signal] of [
    ['a string', 'abort'],
    ['a look-alike', { aborted: false }],
    ['an AbortController', new AbortController()],
    ['null', null],
  ]) {
    later(`signal ${title}`, () => R.collectAsync({}, { signal }), INVALID_OPTION, { mentions: ['signal'] })
  }
  later('a signal getter that throws', (t) => R.collectAsync({}, throwingGetter(t, {}, 'signal')), INVALID_OPTION, { cause: 'thrown' })
  later('signal a revoked Proxy', () => R.collectAsync({}, { signal: revoked() }), INVALID_OPTION, { cause: isTypeError })
  later('an aborted signal', () => R.collectAsync({}, { signal: AbortSignal.abort() }), 'ERR_SHELL_ENV_ABORTED')
}

// resolveDshHome(configured, env) and reconcileDshHome(top, skillsLocal) -------------------------
{
  const home = add('resolveDshHome', 'throws')
  for (const [title, configured] of [
    ['a number', 5],
    ['an object', { path: '/opt' }],
    ['an array', ['/opt']],
    ['true', true],
    ['a symbol', Symbol('home')],
    ['with NUL', '/opt/dsh\0'],
    ['with a lone surrogate', `/opt/${LONE_HIGH}`],
  ]) {
    home(`configured ${title}`, () => resolveDshHome(configured, {}), INVALID_OPTION, { mentions: ['configured'] })
  }
  for (const [title, env] of [
    ['a number', 5],
    ['a string', 'DSH_HOME=/opt'],
    ['an array', ['/opt']],
    ['a Map', new Map([['DSH_HOME', '/opt']])],
  ]) {
    home(`env ${title}`, () => resolveDshHome(undefined, env), INVALID_OPTION, { mentions: ['env'] })
  }
  home('an env.DSH_HOME getter that throws', (t) => resolveDshHome(undefined, throwingGetter(t, {}, 'DSH_HOME')), INVALID_OPTION, {
    mentions: ['env'],
    cause: 'thrown',
  })
  home('env a revoked Proxy', () => resolveDshHome(undefined, revoked()), INVALID_OPTION, { cause: isTypeError })

  const reconcile = add('reconcileDshHome', 'throws')
  for (const [title, top, skillsLocal, field] of [
    ['top a number', 5, undefined, 'top'],
    ['skillsLocal an object', '/opt', { home: '/opt' }, 'skillsLocal'],
    ['top with NUL', '/opt\0', undefined, 'top'],
    ['skillsLocal with a lone surrogate', undefined, `/opt${LONE_LOW}`, 'skillsLocal'],
  ]) {
    reconcile(title, () => reconcileDshHome(top, skillsLocal), INVALID_OPTION, { mentions: [field] })
  }
  reconcile('two different homes', () => reconcileDshHome('/opt/a', '/opt/b'), 'ERR_SHELL_ENV_HOME_CONFLICT', { mentions: ['/opt/a', '/opt/b'] })
}

module.exports = { CASES }
