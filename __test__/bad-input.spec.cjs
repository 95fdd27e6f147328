'use strict'

// The bad-input matrix. Every public entry point — the
// registry (constructor, register, the disposer, collect, collectAsync, list,
// catalog), the home helpers, execute(), buildEnvironment(), the
// ShellExecution handle and the Cordis service under both supported Cordis
// lines — called with wrong types, missing fields, null, huge strings, NUL
// bytes, lone surrogates, prototype-polluting keys, throwing getters, Proxies
// (revoked ones too), frozen and non-plain objects, and resolvers returning
// every wrong shape. Real calls into the addon, no mocks; runs unchanged under
// `vitest run` and `jest`.
//
// Each row of CASES is one case and asserts:
//   1. a real Error (util.types.isNativeError: Jest runs this file in its own
//      realm) with the pinned `.code`, naming the offending field;
//   2. `.cause` is the very value a getter, Proxy trap or resolver threw;
//   3. nothing was registered: list() of every registry in play is unchanged;
//   4. nothing was spawned: no new child of this process
//      (/proc/self/task/*/children), and an execute() command's marker file
//      never appears (checked once more at the end, after a pause);
//   5. the process is still healthy: a fresh register, collect, collectAsync
//      and a registry-backed execute() all work;
//   6. Object.prototype is unpolluted, in this realm and in the addon's.
// Each row of ACCEPTED is an odd but valid input with its exact behaviour.
//
// The rules themselves (coded errors, all or nothing, text unchanged or
// refused, the kernel's limits, which objects count as records, receivers)
// are the input-validation policy in CONTRIBUTING.md.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const vm = require('node:vm')
const { execFileSync } = require('node:child_process')
const { types } = require('node:util')

const { thrown, rejected, expectCode, contributor, agentExecution } = require('./helpers.cjs')
const { childPids } = require('./process-helpers.cjs')
const { WINDOWS, posix, proc, argMax, nodeArgv, portable } = require('./platform.cjs')

const pkg = require('..')
const { ShellEnvRegistry, ShellExecution, execute, buildEnvironment, resolveDshHome, reconcileDshHome } = pkg

const HOME = path.resolve(os.tmpdir(), 'dsh-bad-input-home')
const ARG_MAX = argMax.runs ? Number(execFileSync('getconf', ['ARG_MAX'], { encoding: 'utf8' }).trim()) : undefined
const MiB = 1024 * 1024
const LONE_HIGH = '\ud800'
const LONE_LOW = '\udc00'
const T = 30_000

// Made at load time: the tables below name marker files in it.
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-bad-input-'))
const markers = []

/** A shell command that would leave a marker file behind if it ever ran. */
function markCommand() {
  const marker = path.join(TMP, `marker-${markers.length}`)
  markers.push(marker)
  return `touch '${marker}'`
}

const TOUCH = ['/usr/bin/touch', '/bin/touch'].find((file) => fs.existsSync(file))

/** An argv command that would leave a marker file behind if it ever ran. */
function markArgv() {
  const marker = path.join(TMP, `marker-${markers.length}`)
  markers.push(marker)
  return WINDOWS ? nodeArgv('require("node:fs").writeFileSync(process.argv[1], "")', marker) : [TOUCH, marker]
}

// ---------------------------------------------------------------------------
// State probes.


/** Object.prototype of this realm and of the addon's realm (Jest runs specs in a vm context). */
let ADDON_OBJECT_PROTOTYPE
const prototypes = () => [...new Set([Object.prototype, ADDON_OBJECT_PROTOTYPE])]
const prototypeState = () => prototypes().map((proto) => Object.getOwnPropertyNames(proto).sort())

function expectUnpolluted(before) {
  expect(prototypeState()).toEqual(before)
  for (const proto of prototypes()) {
    for (const name of ['polluted', 'DSH_X', 'x', 'y', 'p']) expect(Object.hasOwn(proto, name)).toBe(false)
  }
  expect({}.polluted).toBe(undefined)
}

/**
 * The registry every case checks for leftovers: made fresh for each case (with
 * one contributor, `base`), so a regression shows up as its own case only.
 */
let R

function freshRegistry() {
  const registry = new ShellEnvRegistry({ dshHome: HOME })
  registry.register(contributor('base', ['DSH_BASE'], { commandDirectories: [path.resolve('/opt/base/bin')], resolve: () => ({ DSH_BASE: 'base' }) }))
  return registry
}
/** Registries of the Cordis services (filled once both lines are loaded). */
const cordis = {}

function registriesInPlay() {
  return [R, ...Object.values(cordis).map(({ service }) => service)]
}

/** A fresh registration, collection and registry-backed execution must work. */
async function expectHealthy() {
  const registry = new ShellEnvRegistry({ dshHome: HOME })
  const dispose = registry.register(
    contributor('health', ['DSH_HEALTH'], { resolve: (execution) => ({ DSH_HEALTH: execution.agent.session.header.id }) }),
  )
  expect(registry.collect(agentExecution('sync')).DSH_HEALTH).toBe('sync')
  expect((await registry.collectAsync(agentExecution('async'))).DSH_HEALTH).toBe('async')
  const run = await execute({ ...portable.print('DSH_HEALTH'), registry, execution: agentExecution('exec') })
  const result = await run.result()
  expect(result.exitCode).toBe(0)
  expect(result.stdout.text).toBe('exec')
  dispose()
  expect(registry.list()).toEqual([])
}

// ---------------------------------------------------------------------------
// Builders for bad values.

/** A fresh context per case: `boom()` makes (and remembers) the value a getter or trap throws. */
function caseContext() {
  const t = {
    thrown: undefined,
    boom(value = new Error('thrown on purpose')) {
      t.thrown = value
      return value
    },
  }
  return t
}

function revoked(target = {}) {
  const { proxy, revoke } = Proxy.revocable(target, {})
  revoke()
  return proxy
}

/** `object` with a getter for `key` that throws `t.boom(value)`. */
function throwingGetter(t, object, key, value) {
  return Object.defineProperty(object, key, {
    enumerable: true,
    get() {
      throw t.boom(value)
    },
  })
}

/** A Proxy of `target` whose `trap` throws `t.boom()`. */
function throwingTrap(t, target, trap) {
  return new Proxy(target, {
    [trap]() {
      throw t.boom()
    },
  })
}

/** An object with an own (not prototype-setting) key `__proto__`. */
const ownProto = (value) => JSON.parse(`{"__proto__": ${JSON.stringify(value)}}`)

class Thing {
  constructor(fields) {
    Object.assign(this, fields)
  }
}

/** A local registry whose only contributor's resolver returns `value` (or calls `resolve`). */
function shapeRegistry(value, { keys = ['DSH_V'], resolve } = {}) {
  const registry = new ShellEnvRegistry({ dshHome: HOME })
  registry.register(contributor('shape', keys, { resolve: resolve ?? (() => value) }))
  return registry
}

/** An environment object bigger than ARG_MAX in total, each value well under 128 KiB. */
function pastArgMax() {
  const env = {}
  const value = 'v'.repeat(4000)
  for (let i = 0; i * 4000 < ARG_MAX + 64 * 1024; i++) env[`BIG_${i}`] = value
  return env
}

const ENOUGH_KEYS = 10_000

/** A declaration of 10,000 valid keys. */
function manyKeys(prefix = 'DSH_K') {
  const variables = {}
  for (let i = 0; i < ENOUGH_KEYS; i++) variables[`${prefix}${i}`] = { description: `key ${i}` }
  return variables
}

// ---------------------------------------------------------------------------
// The matrix. A row: [entry point, title, { call(t), code, mentions?, cause?, mode }].
// `mode`: 'throws' (synchronously) or 'rejects' (a promise, never a throw).
// `cause`: 'thrown' (identical to t.thrown), 'TypeError' (V8's own, e.g. a
// revoked Proxy), a predicate, or absent (then no cause is required).
// `gate` (platform.cjs): what the row needs of the platform, when it needs anything.

const CASES = []
const add = (api, mode) => (title, call, code, { mentions = [], cause, gate } = {}) =>
  CASES.push([api, title, { call, code, mentions, cause, mode, gate }])

const INVALID_NAME = 'ERR_SHELL_ENV_INVALID_NAME'
const INVALID_CONTRIBUTOR = 'ERR_SHELL_ENV_INVALID_CONTRIBUTOR'
const INVALID_KEY = 'ERR_SHELL_ENV_INVALID_KEY'
const INVALID_DIRECTORY = 'ERR_SHELL_ENV_INVALID_DIRECTORY'
const MISSING_DESCRIPTION = 'ERR_SHELL_ENV_MISSING_DESCRIPTION'
const INVALID_OPTION = 'ERR_SHELL_ENV_INVALID_OPTION'
const INVALID_PROFILE = 'ERR_SHELL_ENV_INVALID_PROFILE'
const INVALID_EXECUTION = 'ERR_SHELL_ENV_INVALID_EXECUTION'
const INVALID_RESULT = 'ERR_SHELL_ENV_INVALID_RESULT'
const INVALID_VALUE = 'ERR_SHELL_ENV_INVALID_VALUE'
const NON_STRING = 'ERR_SHELL_ENV_NON_STRING_VALUE'
const UNDECLARED = 'ERR_SHELL_ENV_UNDECLARED_KEY'
const RESOLVER_FAILED = 'ERR_SHELL_ENV_RESOLVER_FAILED'
const INVALID_SPEC = 'ERR_SHELL_EXEC_INVALID_SPEC'
const SPAWN_FAILED = 'ERR_SHELL_EXEC_SPAWN_FAILED'
const INVALID_THIS = 'ERR_INVALID_THIS'

const isTypeError = (cause) => types.isNativeError(cause) && cause.name === 'TypeError'
const isE2big = (cause) => types.isNativeError(cause) && cause.code === 'E2BIG' && cause.syscall === 'spawn' && cause.errno < 0

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

// execute(spec) -----------------------------------------------------------------------------------
{
  const exec = add('execute', 'rejects')
  const run = (overrides) => execute({ command: markCommand(), ...overrides })
  for (const [title, spec] of [
    ['undefined', undefined],
    ['null', null],
    ['a number', 1],
    ['a string', 'echo hi'],
    ['a symbol', Symbol('spec')],
    ['an array', ['touch', '/tmp/x']],
    ['a Map', new Map([['command', 'true']])],
    ['a function', () => {}],
  ]) {
    exec(`spec ${title}`, () => execute(spec), INVALID_SPEC, { mentions: ['spec'] })
  }
  exec('spec a revoked Proxy', () => execute(revoked({ command: markCommand() })), INVALID_SPEC, { cause: isTypeError })
  exec('spec a Proxy whose get trap throws', (t) => execute(throwingTrap(t, { command: markCommand() }, 'get')), INVALID_SPEC, { cause: 'thrown' })
  exec('a command getter that throws', (t) => execute(throwingGetter(t, {}, 'command')), INVALID_SPEC, { cause: 'thrown' })
  exec('an env getter that throws a number', (t) => execute(throwingGetter(t, { command: markCommand() }, 'env', 42)), INVALID_SPEC, {
    cause: 'thrown',
  })
  for (const [title, command, field] of [
    ['missing', undefined, 'command'],
    ['null', null, 'command'],
    ['a number', 42, 'command'],
    ['an object', { program: 'true' }, 'command'],
    ['an empty array', [], 'command'],
    ['[""]', [''], 'command[0]'],
    ['an array with a number', ['touch', 5], 'command[1]'],
    ['an array with null', ['touch', null], 'command[1]'],
    ['an array with a hole', ['touch', , 'x'], 'command[1]'], // eslint-disable-line no-sparse-arrays
    ['a script with NUL', 'touch /tmp/x\0; true', 'command'],
    ['an argument with NUL', ['touch', '/tmp/x\0'], 'command[1]'],
    ['a script with a lone surrogate', `echo ${LONE_HIGH}`, 'command'],
    ['an argument with a lone surrogate', ['echo', LONE_LOW], 'command[1]'],
  ]) {
    exec(`command ${title}`, () => execute({ command }), INVALID_SPEC, { mentions: [field] })
  }
  exec('a command element getter that throws', (t) => execute({ command: throwingGetter(t, ['touch', 'x'], 1) }), INVALID_SPEC, {
    cause: 'thrown',
  })
  for (const [title, overrides, field] of [
    ['shell unknown', { shell: 'zsh' }, 'shell'],
    ['shell a number', { shell: 5 }, 'shell'],
    ['shell with NUL', { shell: '/bin/sh\0' }, 'shell'],
    ['shell with a lone surrogate', { shell: `/bin/${LONE_HIGH}sh` }, 'shell'],
    ['shell with an argv command', { shell: 'sh', command: markArgv() }, 'shell'],
    ['workdir a number', { workdir: 5 }, 'workdir'],
    ['workdir empty', { workdir: '' }, 'workdir'],
    ['workdir with NUL', { workdir: '/tmp\0' }, 'workdir'],
    ['workdir with a lone surrogate', { workdir: `/tmp/${LONE_LOW}` }, 'workdir'],
    ['timeoutMs a string', { timeoutMs: '100' }, 'timeoutMs'],
    ['timeoutMs an object', { timeoutMs: { ms: 100 } }, 'timeoutMs'],
    ['timeoutMs NaN', { timeoutMs: NaN }, 'timeoutMs'],
    ['timeoutMs a bigint', { timeoutMs: 100n }, 'timeoutMs'],
    ['graceMs negative', { graceMs: -1 }, 'graceMs'],
    ['stdoutMaxBytes fractional', { stdoutMaxBytes: 0.5 }, 'stdoutMaxBytes'],
    ['spillMaxBytes Infinity', { spillMaxBytes: Infinity }, 'spillMaxBytes'],
    ['onExpiry unknown', { onExpiry: 'never' }, 'onExpiry'],
    ['stdin a number', { stdin: 5 }, 'stdin'],
    ['stdin an array of bytes', { stdin: [104, 105] }, 'stdin'],
    ['stdin a Uint16Array', { stdin: new Uint16Array([1]) }, 'stdin'],
    ['stdin text with a lone surrogate', { stdin: `half ${LONE_HIGH}` }, 'stdin'],
    ['env a string', { env: 'A=1' }, 'env'],
    ['env an array', { env: ['A=1'] }, 'env'],
    ['env a Map', { env: new Map([['A', '1']]) }, 'env'],
    ['env a function', { env: () => ({ A: '1' }) }, 'env'],
    ['env a Date', { env: new Date(0) }, 'env'],
    ['env null', { env: null }, 'env'],
    ['an env value that is a number', { env: { BAD_INPUT: 1 } }, 'env.BAD_INPUT'],
    ['an env value that is null', { env: { BAD_INPUT: null } }, 'env.BAD_INPUT'],
    ['an env value that is an object', { env: { BAD_INPUT: { value: 'x' } } }, 'env.BAD_INPUT'],
    ['an env value that is a symbol', { env: { BAD_INPUT: Symbol('x') } }, 'env.BAD_INPUT'],
    ['an env value with NUL', { env: { BAD_INPUT: 'a\0b' } }, 'env.BAD_INPUT'],
    ['an env value with a lone surrogate', { env: { BAD_INPUT: `a${LONE_HIGH}` } }, 'env.BAD_INPUT'],
    ['an empty env name', { env: { '': 'x' } }, 'env.'],
    ['an env name with =', { env: { 'A=B': 'x' } }, 'env.A=B'],
    ['an env name with NUL', { env: { 'A\0B': 'x' } }, 'env.A'],
    ['an env name with a lone surrogate', { env: { [`A${LONE_LOW}`]: 'x' } }, 'env.A'],
    ['a symbol env name', { env: { [Symbol('BAD_INPUT')]: 'x' } }, 'env[Symbol(BAD_INPUT)]'],
    ['dshEnv an array', { dshEnv: [] }, 'dshEnv'],
    ['dshEnv a Map', { dshEnv: new Map() }, 'dshEnv'],
    ['dshEnv a non-managed key', { dshEnv: { HOME: '/evil' } }, 'dshEnv.HOME'],
    ['dshEnv an own __proto__ key', { dshEnv: ownProto('x') }, 'dshEnv.__proto__'],
    ['dshEnv a constructor key', { dshEnv: { constructor: 'x' } }, 'dshEnv.constructor'],
    ['dshEnv a number value', { dshEnv: { DSH_X: 1 } }, 'dshEnv.DSH_X'],
    ['dshEnv a value with NUL', { dshEnv: { DSH_X: '\0' } }, 'dshEnv.DSH_X'],
    ['dshEnv a value with a lone surrogate', { dshEnv: { DSH_X: LONE_LOW } }, 'dshEnv.DSH_X'],
    ['dshEnv a symbol key', { dshEnv: { [Symbol('DSH_X')]: 'x' } }, 'dshEnv[Symbol(DSH_X)]'],
    ['terminalEnv true', { terminalEnv: true }, 'terminalEnv'],
    ['terminalEnv an array', { terminalEnv: [] }, 'terminalEnv'],
    ['terminalEnv a number value', { terminalEnv: { TERM: 1 } }, 'terminalEnv.TERM'],
    ['terminalEnv a name with =', { terminalEnv: { 'A=B': 'x' } }, 'terminalEnv.A=B'],
    ['terminalEnv a lone surrogate', { terminalEnv: { TERM: LONE_HIGH } }, 'terminalEnv.TERM'],
    ['scrub a string', { scrub: 'core' }, 'scrub'],
    ['scrub an array', { scrub: ['core'] }, 'scrub'],
    ['scrub a Map', { scrub: new Map([['inherit', 'none']]) }, 'scrub'],
    ['scrub.inherit unknown', { scrub: { inherit: 'some' } }, 'scrub.inherit'],
    ['scrub.inherit a number', { scrub: { inherit: 0 } }, 'scrub.inherit'],
    ['scrub.exclude a string', { scrub: { exclude: '*KEY*' } }, 'scrub.exclude'],
    ['scrub.exclude with a number', { scrub: { exclude: [5] } }, 'scrub.exclude[0]'],
    ['scrub.exclude with an empty glob', { scrub: { exclude: [''] } }, 'scrub.exclude[0]'],
    ['scrub.exclude with NUL', { scrub: { exclude: ['*', 'A\0'] } }, 'scrub.exclude[1]'],
    ['scrub.includeOnly with a lone surrogate', { scrub: { includeOnly: [`P${LONE_HIGH}`] } }, 'scrub.includeOnly[0]'],
    ['scrub.hardening a string', { scrub: { hardening: 'yes' } }, 'scrub.hardening'],
    ['onOutput a string', { onOutput: 'console.log' }, 'onOutput'],
    ['signal a look-alike', { signal: { aborted: false } }, 'signal'],
    ['signal an AbortController', { signal: new AbortController() }, 'signal'],
    ['registry a plain object', { registry: { collect: () => ({}) } }, 'registry'],
    ['registry a look-alike inheriting ShellEnvRegistry.prototype', { registry: Object.create(ShellEnvRegistry.prototype) }, 'registry'],
    ['registry together with dshEnv', { registry: new ShellEnvRegistry({ dshHome: HOME }), dshEnv: {} }, 'registry'],
  ]) {
    exec(title, () => run(overrides), INVALID_SPEC, { mentions: [field] })
  }
  exec('a scrub getter that throws', (t) => run({ scrub: throwingGetter(t, {}, 'inherit') }), INVALID_SPEC, { cause: 'thrown' })
  exec('env a Proxy whose ownKeys trap throws', (t) => run({ env: throwingTrap(t, {}, 'ownKeys') }), INVALID_SPEC, { cause: 'thrown' })
  exec('env a revoked Proxy', () => run({ env: revoked() }), INVALID_SPEC, { cause: isTypeError })
  exec('an env value getter that throws', (t) => run({ env: throwingGetter(t, {}, 'BAD_INPUT') }), INVALID_SPEC, { cause: 'thrown' })
  exec('signal a revoked Proxy', () => run({ signal: revoked() }), INVALID_SPEC, { cause: isTypeError })
  exec('workdir missing', () => run({ workdir: path.join(os.tmpdir(), 'dsh-bad-input-no-such-dir') }), 'ERR_SHELL_EXEC_INVALID_WORKDIR')
  exec('workdir a file', () => run({ workdir: __filename }), 'ERR_SHELL_EXEC_INVALID_WORKDIR')
  exec('spillDir missing', () => run({ spillDir: path.join(os.tmpdir(), 'dsh-bad-input-no-such-spill-dir') }), 'ERR_SHELL_EXEC_INVALID_SPILL_DIR')
  exec('spillDir a file', () => run({ spillDir: __filename }), 'ERR_SHELL_EXEC_INVALID_SPILL_DIR')
  exec('a program that does not exist', () => execute({ command: ['/nonexistent/dsh-bad-input'] }), SPAWN_FAILED, {
    cause: (cause) => types.isNativeError(cause) && cause.code === 'ENOENT',
  })
  exec('a program that is not executable', () => execute({ command: [__filename] }), SPAWN_FAILED, {
    cause: (cause) => types.isNativeError(cause) && cause.code === 'EACCES',
    gate: posix,
  })

  // Past the kernel's limits: refused by execve itself, reported as E2BIG.
  exec('env larger than ARG_MAX in total', () => run({ env: pastArgMax() }), SPAWN_FAILED, { cause: isE2big, gate: argMax })
  exec('an env value of 1 MiB (over MAX_ARG_STRLEN)', () => run({ env: { BAD_INPUT: 'x'.repeat(MiB) } }), SPAWN_FAILED, { cause: isE2big, gate: argMax })
  exec('an env name of 1 MiB', () => run({ env: { ['N'.repeat(MiB)]: 'x' } }), SPAWN_FAILED, { cause: isE2big, gate: argMax })
  exec('a 1 MiB script', () => execute({ command: `${markCommand()} #${'x'.repeat(MiB)}` }), SPAWN_FAILED, { cause: isE2big, gate: argMax })
  exec('a 1 MiB argument', () => execute({ command: [...markArgv(), 'x'.repeat(MiB)] }), SPAWN_FAILED, { cause: isE2big, gate: argMax })
  // No silent defaults: a field the spec does not have is refused, not ignored.
  exec('cwd instead of workdir', () => run({ cwd: '/tmp' }), INVALID_SPEC, { mentions: ['cwd', 'did you mean workdir'] })
  exec('timeout instead of timeoutMs', () => run({ timeout: 100 }), INVALID_SPEC, { mentions: ['timeout', 'did you mean timeoutMs'] })
  exec('an unknown field on the prototype', () => execute(Object.create({ colour: 'red' }, { command: { value: markCommand(), enumerable: true } })), INVALID_SPEC, {
    mentions: ['colour', 'the fields are'],
  })
  exec('an unknown scrub field', () => run({ scrub: { hardenning: true } }), INVALID_SPEC, { mentions: ['scrub.hardenning'] })
  exec('execution without registry', () => run({ execution: { agent: { session: { header: { id: 's' } } } } }), INVALID_SPEC, {
    mentions: ['execution', 'registry'],
  })
  exec('scrub.exclude a string', () => run({ scrub: { exclude: 'KEY' } }), INVALID_SPEC, { mentions: ['must be an array of strings (got string)'] })
  exec(
    'a contributor value of 1 MiB collected right before the spawn',
    () => run({ registry: shapeRegistry({ DSH_V: 'x'.repeat(MiB) }), execution: {} }),
    SPAWN_FAILED,
    { cause: isE2big, gate: argMax },
  )

  // Collection right before the spawn fails with the registry's codes.
  exec('registry + an execution that is a number', () => run({ registry: shapeRegistry({}), execution: 5 }), INVALID_EXECUTION)
  exec('registry + a resolver returning a Map', () => run({ registry: shapeRegistry(new Map()), execution: {} }), INVALID_RESULT)
  exec('registry + a resolver returning a lone surrogate', () => run({ registry: shapeRegistry({ DSH_V: LONE_LOW }) }), INVALID_VALUE)
  exec('registry + a resolver that throws', (t) => run({ registry: shapeRegistry(undefined, { resolve: () => { throw t.boom() } }) }), RESOLVER_FAILED, {
    cause: 'thrown',
  })
  exec('registry + an execution.agent getter that throws', (t) => run({ registry: shapeRegistry({}), execution: throwingGetter(t, {}, 'agent') }), INVALID_EXECUTION, {
    cause: 'thrown',
  })
}

// buildEnvironment(spec, parentEnv) -----------------------------------------------------------------
{
  const build = add('buildEnvironment', 'throws')
  for (const [title, spec] of [
    ['undefined', undefined],
    ['null', null],
    ['a string', 'env'],
    ['an array', [{}]],
    ['a Map', new Map()],
  ]) {
    build(`spec ${title}`, () => buildEnvironment(spec), INVALID_SPEC, { mentions: ['spec'] })
  }
  for (const [title, spec, field] of [
    ['env a number', { env: 5 }, 'env'],
    ['an env value that is a number', { env: { X: 5 } }, 'env.X'],
    ['an env value with NUL', { env: { X: '\0' } }, 'env.X'],
    ['an env value with a lone surrogate', { env: { X: LONE_HIGH } }, 'env.X'],
    ['a symbol env name', { env: { [Symbol('X')]: 'x' } }, 'env[Symbol(X)]'],
    ['dshEnv a non-managed key', { dshEnv: { HOME: '/' } }, 'dshEnv.HOME'],
    ['scrub.inherit unknown', { scrub: { inherit: 'x' } }, 'scrub.inherit'],
    ['a field the spec does not have', { cwd: '/tmp' }, 'cwd'],
    ['scrub.defaultExclude a string', { scrub: { defaultExclude: 'no' } }, 'scrub.defaultExclude'],
    ['registry, which buildEnvironment does not read', { registry: {} }, 'registry'],
    ['execution, which buildEnvironment does not read', { execution: {} }, 'execution'],
    ['terminalEnv a number value', { terminalEnv: { TERM: 1 } }, 'terminalEnv.TERM'],
  ]) {
    build(title, () => buildEnvironment(spec, {}), INVALID_SPEC, { mentions: [field] })
  }
  build('spec a revoked Proxy', () => buildEnvironment(revoked()), INVALID_SPEC, { cause: isTypeError })
  build('an env getter that throws', (t) => buildEnvironment(throwingGetter(t, {}, 'env'), {}), INVALID_SPEC, { cause: 'thrown' })
  for (const [title, parentEnv] of [
    ['a number', 5],
    ['a string', 'PATH=/bin'],
    ['an array', ['PATH=/bin']],
    ['a Map', new Map([['PATH', '/bin']])],
  ]) {
    build(`parentEnv ${title}`, () => buildEnvironment({}, parentEnv), INVALID_SPEC, { mentions: ['parentEnv'] })
  }
  build('a parentEnv getter that throws', (t) => buildEnvironment({}, throwingGetter(t, {}, 'PATH')), INVALID_SPEC, {
    mentions: ['parentEnv'],
    cause: 'thrown',
  })
  build('parentEnv a revoked Proxy', () => buildEnvironment({}, revoked()), INVALID_SPEC, { mentions: ['parentEnv'], cause: isTypeError })
}

// The ShellExecution handle -------------------------------------------------------------------------
{
  const handle = add('ShellExecution', 'throws')
  handle('new ShellExecution()', () => new ShellExecution(), 'ERR_ILLEGAL_CONSTRUCTOR')
  handle('new ShellExecution(a look-alike native)', () => new ShellExecution({ wait: () => Promise.resolve({}) }), 'ERR_ILLEGAL_CONSTRUCTOR')
  for (const [receiverTitle, receiver] of [
    ['a plain object', () => ({})],
    ['null', () => null],
    ['a look-alike inheriting ShellExecution.prototype', () => Object.create(ShellExecution.prototype)],
  ]) {
    for (const method of ['kill', 'readOutput', 'ref', 'unref', 'hasRef']) {
      handle(`${method}() on ${receiverTitle}`, () => ShellExecution.prototype[method].call(receiver()), INVALID_THIS, { mentions: [method] })
    }
    for (const getter of ['pid', 'status', 'exitCode', 'signal']) {
      handle(
        `the ${getter} getter on ${receiverTitle}`,
        () => Object.getOwnPropertyDescriptor(ShellExecution.prototype, getter).get.call(receiver()),
        INVALID_THIS,
        { mentions: [getter] },
      )
    }
    add('ShellExecution', 'rejects')(`result() on ${receiverTitle} rejects`, () => ShellExecution.prototype.result.call(receiver()), INVALID_THIS)
  }
}

// The Cordis service ctx.shellEnv (cordis 3.18 and 4.0 RC, real Contexts) ----------------------------
const CORDIS_LINES = [
  ['cordis@3.18.1', async () => require('cordis3'), async (root) => { await root.start(); await root.events.flush() }],
  ['cordis@4.0.0-rc.10', async () => import('cordis4'), async () => {}],
]
for (const [line] of CORDIS_LINES) {
  const service = () => cordis[line].service
  const sync = add(`${line} ctx.shellEnv`, 'throws')
  const async = add(`${line} ctx.shellEnv`, 'rejects')
  sync('register(null)', () => service().register(null), INVALID_NAME)
  sync('register() with a lower-case key', () => service().register(contributor('cordis-bad', ['dsh_lower'])), INVALID_KEY)
  sync('register() with a name getter that throws', (t) => service().register(throwingGetter(t, contributor('x', []), 'name')), INVALID_NAME, {
    cause: 'thrown',
  })
  sync('register() of a name the service already holds', () => service().register(contributor('cordis-base', ['DSH_CORDIS_OTHER'])), 'ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR')
  sync('collect(null)', () => service().collect(null), INVALID_EXECUTION)
  sync('collect({}, 5)', () => service().collect({}, 5), INVALID_OPTION)
  sync('collect() of a lone-surrogate session id', () => service().collect(agentExecution(LONE_HIGH)), INVALID_EXECUTION)
  async('collectAsync("x")', () => service().collectAsync('x'), INVALID_EXECUTION)
  async('collectAsync({}, { timeoutMs: -1 })', () => service().collectAsync({}, { timeoutMs: -1 }), INVALID_OPTION)
  async('execute(null)', () => service().execute(null), INVALID_SPEC)
  async('execute() with a getter that throws', (t) => service().execute(throwingGetter(t, { command: markCommand() }, 'dshEnv')), INVALID_SPEC, {
    cause: 'thrown',
  })
  async('execute() with a revoked Proxy', () => service().execute(revoked({ command: markCommand() })), INVALID_SPEC, { cause: isTypeError })
  async('execute() with an env getter that throws', (t) => service().execute(throwingGetter(t, { command: markCommand() }, 'env')), INVALID_SPEC, {
    cause: 'thrown',
  })
  async('execute() with dshEnv', () => service().execute({ command: markCommand(), dshEnv: {} }), INVALID_SPEC)
  async('execute() with an execution that is a number', () => service().execute({ command: markCommand() }, 5), INVALID_EXECUTION)
  async('execute() with a lone surrogate in env', () => service().execute({ command: markCommand(), env: { X: LONE_LOW } }), INVALID_SPEC, {
    mentions: ['env.X'],
  })
  async('execute() with env past ARG_MAX', () => service().execute({ command: markCommand(), env: pastArgMax() }), SPAWN_FAILED, {
    cause: isE2big, gate: argMax,
  })
}

// ---------------------------------------------------------------------------
// Odd but valid inputs, each with its exact behaviour. A row's fourth
// element, when there is one, is what it needs of the platform (a gate of
// platform.cjs).

const ACCEPTED = [
  ['register', 'a frozen contributor with frozen declarations', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const frozen = Object.freeze({
      name: 'frozen',
      variables: Object.freeze({ DSH_FROZEN: Object.freeze({ description: 'frozen' }) }),
      commandDirectories: Object.freeze([path.resolve('/opt/frozen/bin')]),
      resolve: () => Object.freeze({ DSH_FROZEN: 'yes' }),
    })
    registry.register(frozen)
    const PATH = [path.resolve('/opt/frozen/bin'), '/bin'].join(path.delimiter)
    expect(registry.collect({}, { inheritedPath: '/bin' })).toMatchObject({ DSH_FROZEN: 'yes', PATH })
  }],
  ['register', 'null-prototype objects, a Proxy and a class instance with prototype getters', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const bare = Object.assign(Object.create(null), { name: 'bare', resolve: () => ({}) })
    bare.variables = Object.assign(Object.create(null), { DSH_BARE: Object.assign(Object.create(null), { description: 'bare' }) })
    registry.register(bare)
    registry.register(new Proxy(contributor('proxied', ['DSH_PROXIED']), {}))
    class Plugin {
      get name() { return 'classy' }
      get variables() { return { DSH_CLASSY: { description: 'from a getter' } } }
      resolve() { return { DSH_CLASSY: 'yes' } }
    }
    registry.register(new Plugin())
    expect(registry.list().map((entry) => entry.contributor)).toEqual(['bare', 'classy', 'proxied'])
    expect(registry.collect({}).DSH_CLASSY).toBe('yes')
  }],
  ['register', 'contributors named __proto__ and constructor are ordinary names', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const dispose = registry.register(contributor('__proto__', ['DSH_PROTO'], { resolve: () => ({ DSH_PROTO: 'p' }) }))
    registry.register(contributor('constructor', ['DSH_CTOR'], { resolve: () => ({ DSH_CTOR: 'c' }) }))
    expect(registry.list()).toEqual([
      { contributor: 'constructor', description: 'DSH_CTOR from constructor', key: 'DSH_CTOR' },
      { contributor: '__proto__', description: 'DSH_PROTO from __proto__', key: 'DSH_PROTO' },
    ])
    expect(registry.catalog().variables.find((entry) => entry.key === 'DSH_PROTO').owner).toBe('__proto__')
    expect(registry.collect({})).toMatchObject({ DSH_CTOR: 'c', DSH_PROTO: 'p' })
    dispose()
    expect(registry.list().map((entry) => entry.contributor)).toEqual(['constructor'])
  }],
  ['register', 'a 1 MiB description, a 1 MiB contributor name and a 1 MiB valid key', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const longKey = `DSH_${'K'.repeat(MiB)}`
    registry.register(contributor('n'.repeat(MiB), [], { variables: { [longKey]: { description: 'd'.repeat(MiB) } } }))
    const [entry] = registry.list()
    expect([entry.contributor.length, entry.description.length, entry.key.length]).toEqual([MiB, MiB, MiB + 4])
  }],
  ['register', '10,000 declared keys, all resolved', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const variables = manyKeys()
    registry.register(contributor('many', [], { variables, resolve: () => Object.fromEntries(Object.keys(variables).map((key) => [key, 'v'])) }))
    expect(registry.list()).toHaveLength(ENOUGH_KEYS)
    expect(Object.keys(registry.collect({}))).toHaveLength(ENOUGH_KEYS + 2)
  }],
  ['disposer', 'called with arguments, on a foreign receiver, twice: removes only its own registration', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const dispose = registry.register(contributor('once', ['DSH_ONCE']))
    registry.register(contributor('other', ['DSH_OTHER']))
    expect(dispose.call({ not: 'a registry' }, 'junk', 5, null)).toBe(undefined)
    expect(dispose(Symbol('again'))).toBe(undefined)
    expect(registry.list().map((entry) => entry.key)).toEqual(['DSH_OTHER'])
    registry.register(contributor('once', ['DSH_ONCE']))
    dispose()
    expect(registry.list().map((entry) => entry.key)).toEqual(['DSH_ONCE', 'DSH_OTHER'])
  }],
  ['list/catalog', 'extra arguments are ignored', () => {
    expect(R.list(5, 'x', null)).toEqual(R.list())
    expect(R.catalog({ junk: true })).toEqual(R.catalog())
  }],
  ['collect', 'a resolver returning frozen, null-prototype, Proxy and other-realm plain objects', async () => {
    for (const value of [
      Object.freeze({ DSH_V: 'x' }),
      Object.assign(Object.create(null), { DSH_V: 'x' }),
      new Proxy({ DSH_V: 'x' }, {}),
      vm.runInNewContext('({ DSH_V: "x" })'),
      Object.defineProperty({ DSH_V: 'x' }, 'hidden', { value: 5, enumerable: false }),
    ]) {
      const registry = shapeRegistry(value)
      expect(registry.collect({}).DSH_V).toBe('x')
      expect((await registry.collectAsync({})).DSH_V).toBe('x')
    }
  }],
  ['collect', 'any object is an execution, passed to resolvers unchanged; null options mean defaults', () => {
    for (const execution of [[], new Map(), () => {}, new Thing({ agent: undefined }), Object.freeze({})]) {
      let seen
      const registry = shapeRegistry(undefined, { resolve: (value) => ((seen = value), {}) })
      expect(registry.collect(execution, null)).toEqual({ DSH_HOME: HOME, DSH_SHELL: '1' })
      expect(seen).toBe(execution)
    }
    expect(new ShellEnvRegistry(null).dshHome).toBe(resolveDshHome())
  }],
  ['resolveDshHome', 'an env.DSH_HOME that could not be a real environment value counts as unset', () => {
    for (const DSH_HOME of [`/opt/${LONE_HIGH}`, '/opt\0/x', 5]) {
      expect(resolveDshHome(undefined, { DSH_HOME })).toBe(path.join(os.homedir(), '.dsh'))
    }
  }],
  ['execute', '__proto__ and constructor as variable names reach the child, and buildEnvironment() reports them', async () => {
    const env = { ...ownProto('proto-value'), constructor: 'ctor-value' }
    const spec = { env, scrub: { inherit: 'none' }, terminalEnv: false }
    const built = buildEnvironment(spec, {})
    expect(Object.keys(built.env)).toEqual(['__proto__', 'constructor'])
    expect(built.env.__proto__).toBe('proto-value') // an own property, not the prototype
    expect(Object.getPrototypeOf(built.env)).toBe(Object.getPrototypeOf(R.list()[0]))
    expect(built.sources).toEqual({ ...ownProto('explicit'), constructor: 'explicit' })
    const run = await execute({ ...spec, command: ['/usr/bin/env'] })
    const { stdout } = await run.result()
    expect(stdout.text.split('\n').filter(Boolean).sort()).toEqual(['__proto__=proto-value', 'constructor=ctor-value'])
  }, posix],
  ['buildEnvironment', 'a parent environment with __proto__, non-string, NUL and lone-surrogate entries', () => {
    const parent = {
      ...ownProto('inherited'),
      KEPT: 'yes',
      NUMBER: 5,
      WITH_NUL: 'a\0b',
      [`KEY${LONE_HIGH}`]: 'x',
      LONE: `x${LONE_LOW}`,
      [Symbol('SYM')]: 'x',
    }
    const built = buildEnvironment({ terminalEnv: false }, parent)
    expect(built.env).toEqual({ ...ownProto('inherited'), KEPT: 'yes' })
    expect(built.removed).toEqual([])
  }],
  ['buildEnvironment', 'an environment past ARG_MAX is built (nothing is executed)', () => {
    const env = pastArgMax()
    const built = buildEnvironment({ env, scrub: { inherit: 'none' }, terminalEnv: false }, {})
    const bytes = Object.entries(built.env).reduce((sum, [key, value]) => sum + key.length + value.length + 2, 0)
    expect(bytes).toBeGreaterThan(ARG_MAX)
  }, argMax],
  ['execute', 'frozen, Proxy and class-instance specs, process.env and class instances as env', async () => {
    class Spec {
      constructor() {
        this.command = ['/usr/bin/env']
        this.scrub = { inherit: 'none' }
      }
      get terminalEnv() {
        return false
      }
    }
    const specs = [
      Object.freeze({ command: ['/usr/bin/env'], scrub: Object.freeze({ inherit: 'none' }), terminalEnv: false, env: Object.freeze({ A: '1' }) }),
      new Proxy({ command: ['/usr/bin/env'], scrub: { inherit: 'none' }, terminalEnv: false, env: new Thing({ A: '1' }) }, {}),
      Object.assign(new Spec(), { env: { A: '1' } }),
    ]
    for (const spec of specs) {
      const { stdout, exitCode } = await (await execute(spec)).result()
      expect(exitCode).toBe(0)
      expect(stdout.text).toBe('A=1\n')
    }
    const { stdout } = await (await execute({ command: 'printf %s "$HOME"', env: process.env })).result()
    expect(stdout.text).toBe(process.env.HOME ?? '')
  }, posix],
  ['execute', '10,000 variables, 120 KiB values and 1 MiB of stdin reach the child', async () => {
    const env = {}
    for (let i = 0; i < ENOUGH_KEYS; i++) env[`MANY_${i}`] = String(i)
    env.LARGE = 'L'.repeat(120 * 1024)
    const run = await execute({
      command: 'env | grep -c "^MANY_"; printf "%s\\n" "${#LARGE}"; wc -c',
      env,
      stdin: 's'.repeat(MiB),
    })
    const { stdout, exitCode } = await run.result()
    expect(exitCode).toBe(0)
    expect(stdout.text.split('\n').map((line) => line.trim())).toEqual([String(ENOUGH_KEYS), String(120 * 1024), String(MiB), ''])
  }, posix],
  ['execute', 'an empty script runs and exits 0; kill() and readOutput() ignore extra arguments', async () => {
    const run = await execute({ command: '' })
    expect((await run.result()).exitCode).toBe(0)
    expect(run.kill('SIGKILL', 5)).toBe(false)
    expect(run.readOutput({ all: true })).toEqual({ stdout: '', stderr: '', lossy: false })
  }, posix],
]

// ---------------------------------------------------------------------------

beforeAll(async () => {
  R = freshRegistry()
  ADDON_OBJECT_PROTOTYPE = Object.getPrototypeOf(R.collect({}))
  for (const [line, load, start] of CORDIS_LINES) {
    const { Context } = await load()
    const root = new Context()
    root.plugin(pkg, { dshHome: HOME })
    await start(root)
    const service = root.shellEnv
    service.register(contributor('cordis-base', ['DSH_CORDIS_BASE']))
    cordis[line] = { root, service }
  }
}, T)

afterAll(async () => {
  fs.rmSync(TMP, { recursive: true, force: true })
  for (const { root } of Object.values(cordis)) if (typeof root.stop === 'function') await root.stop()
})

beforeEach(() => {
  R = freshRegistry()
})

/** The rows of `table` whose gate (`gateOf(row)`) runs here, and those it skips here. */
function byGate(table, gateOf) {
  const here = table.filter((row) => gateOf(row) === undefined || gateOf(row).runs)
  return [here, table.filter((row) => !here.includes(row))]
}
const [CASES_HERE, CASES_SKIPPED] = byGate(CASES, (row) => row[2].gate)
const [ACCEPTED_HERE, ACCEPTED_SKIPPED] = byGate(ACCEPTED, (row) => row[3])

describe('bad input: a specific code, nothing registered or spawned, the process still healthy', () => {
  /** One case of the matrix: see the conditions at the top of this file. */
  async function badCase(_api, _title, { call, code, mentions, cause, mode }) {
    const t = caseContext()
    const lists = registriesInPlay().map((registry) => registry.list())
    const children = proc.runs ? childPids() : []
    const prototypesBefore = prototypeState()

    let error
    if (mode === 'throws') {
      error = thrown(() => {
        const value = call(t)
        // A synchronous API must not report through a promise.
        if (value !== null && typeof value === 'object' && typeof value.then === 'function') value.catch(() => {})
        return value
      })
    } else {
      let promise
      expect(() => {
        promise = call(t)
      }).not.toThrow()
      error = await rejected(() => promise)
    }

    expectCode(error, code, ...mentions)
    if (cause === 'thrown') {
      expect(Object.hasOwn(error, 'cause')).toBe(true)
      expect(error.cause).toBe(t.thrown)
    } else if (typeof cause === 'function') {
      expect(cause(error.cause)).toBe(true)
    }
    expect(registriesInPlay().map((registry) => registry.list())).toEqual(lists)
    // Children are listed from /proc; elsewhere the marker files below stand guard alone.
    if (proc.runs) expect(childPids().filter((pid) => !children.includes(pid))).toEqual([])
    expectUnpolluted(prototypesBefore)
    await expectHealthy()
  }

  it.each(CASES_HERE)('%s: %s', badCase, T)
  if (CASES_SKIPPED.length > 0) it.skip.each(CASES_SKIPPED)('%s: %s', badCase, T)

  it('no rejected execute() ever ran its command (no marker file appeared)', async () => {
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(markers.length).toBeGreaterThan(100)
    expect(markers.filter((marker) => fs.existsSync(marker))).toEqual([])
  })
})

describe('odd but valid input: exact behaviour', () => {
  async function acceptedCase(_api, _title, check) {
    const lists = registriesInPlay().map((registry) => registry.list())
    const prototypesBefore = prototypeState()
    await check()
    expect(registriesInPlay().map((registry) => registry.list())).toEqual(lists)
    expectUnpolluted(prototypesBefore)
    await expectHealthy()
  }

  it.each(ACCEPTED_HERE)('%s: %s', acceptedCase, T)
  if (ACCEPTED_SKIPPED.length > 0) it.skip.each(ACCEPTED_SKIPPED)('%s: %s', acceptedCase, T)
})

describe('the matrix', () => {
  it(`holds ${CASES.length} failing and ${ACCEPTED.length} accepted cases over every public entry point`, () => {
    const apis = new Set([...CASES, ...ACCEPTED].map(([api]) => api.replace(/^cordis@\S+ /, '')))
    for (const api of [
      'new ShellEnvRegistry',
      'register',
      'disposer',
      'collect',
      'collectAsync',
      'list/catalog',
      'registry methods',
      'resolveDshHome',
      'reconcileDshHome',
      'execute',
      'buildEnvironment',
      'ShellExecution',
      'ctx.shellEnv',
    ]) {
      expect(apis.has(api)).toBe(true)
    }
    expect(CASES.length).toBeGreaterThan(300)
  })
})
