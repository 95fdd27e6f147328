'use strict'

// How the parent environment is read. The package reads it in JS in one pass
// and hands it to the binding packed (environment.js), and gets
// buildEnvironment()'s result back packed; the raw binding still reads the
// object itself and builds the result in Rust. Each parent below is built
// both ways, and must come to the same result (with its keys in the same
// order) or the same error (code, message and cause); the traps and getters
// it has run the same number of times, in the same order. Runs unchanged
// under `vitest run` (globals: true) and `jest`.

const { spawnSync } = require('node:child_process')
const path = require('node:path')

const { posix } = require('./platform.cjs')

const binding = require('../lib/native.js')
const { buildEnvironment, execute } = require('..')

const LONE = '\ud800'
const TOKEN = 'ghp_0123456789abcdefghijABCDEFGHIJ012345'

/** `[title, parent]`: `parent(log)` makes a fresh parent, noting its reads in `log`. */
const PARENTS = [
  ['a plain object', () => ({ PATH: '/usr/bin:/bin', HOME: '/home/ada', LANG: 'C.UTF-8' })],
  ['no variables', () => ({})],
  ['credentials, stale DSH_* and hardening targets', () => ({ PATH: '/bin', API_TOKEN: 'secret', NOTE: TOKEN, DSH_SESSION_ID: 'stale', dsh_lower: 'x', BASH_ENV: '/x', FN: '() { :; }' })],
  ['empty names and values, = in a name, a leading =', () => ({ '': 'empty', EMPTY: '', 'A=B': 'x', '=C:': 'C:\\' })],
  ['non-ASCII names and values', () => ({ 'ZÜRICH_東京': 'é = € 😀', NOTE: '\ufffd is a real character' })],
  ['a NUL in a name or a value', () => ({ 'NUL\0NAME': 'x', NUL_VALUE: 'a\0b', KEPT: 'kept' })],
  ['a NUL in a name whose value is undefined', () => ({ 'NUL\0NAME': undefined, KEPT: 'kept' })],
  ['a lone surrogate in a name or a value', () => ({ [`LONE${LONE}NAME`]: 'x', LONE_VALUE: `half ${LONE}`, KEPT: 'kept' })],
  ['values that are not strings', () => ({ NUMBER: 5, BOOL: true, NULL: null, OBJECT: { toString: () => 'x' }, UNDEFINED: undefined, KEPT: 'kept' })],
  ['symbol keys', () => ({ [Symbol('SYM')]: 'x', KEPT: 'kept' })],
  ['integer-like names', () => ({ 10: 'ten', 2: 'two', B: 'b', A: 'a' })],
  ['__proto__ and constructor as names', () => Object.defineProperty({ constructor: 'c', toString: 't' }, '__proto__', { value: 'proto', enumerable: true })],
  ['a non-enumerable variable', () => Object.defineProperty({ KEPT: 'kept' }, 'HIDDEN', { value: 'x' })],
  ['inherited variables', () => Object.assign(Object.create({ INHERITED: 'x' }), { OWN: 'own' })],
  ['a prototype-less object', () => Object.assign(Object.create(null), { PATH: '/bin' })],
  ['a frozen object', () => Object.freeze({ PATH: '/bin', API_KEY: 'Zq8Lw3Xv9Tp2Nc7Rb4HmZq8Lw3Xv9Tp2' })],
  ['a class instance', () => new (class Env { PATH = '/bin' })()],
  ['getters', (log) => ({ get PATH() { log.push('get PATH'); return '/bin' }, get NOTE() { log.push('get NOTE'); return 5 } })],
  ['a getter that throws', (log) => ({ KEPT: 'kept', get PATH() { log.push('get PATH'); throw new Error('getter failed') } })],
  ['a getter that throws something that is not an Error', () => ({ get PATH() { throw 'a string' } })],
  ['a variable deleted by a getter before it is read', () => { const env = { get FIRST() { delete env.SECOND; return '1' }, SECOND: '2', THIRD: '3' }; return env }],
  ['a Proxy', (log) => new Proxy({ PATH: '/bin', HOME: '/home/ada' }, traps(log))],
  ['a Proxy whose get trap changes values', () => new Proxy({ PATH: '/bin', HOME: '/home' }, { get: (target, key) => (key === 'HOME' ? '/from-proxy' : target[key]) })],
  ['a Proxy whose ownKeys trap throws', () => new Proxy({}, { ownKeys() { throw new Error('ownKeys failed') } })],
  ['a Proxy whose getOwnPropertyDescriptor trap throws', () => new Proxy({ PATH: '/bin' }, { getOwnPropertyDescriptor() { throw new Error('descriptor failed') } })],
  ['a Proxy whose ownKeys trap lists a name twice', () => new Proxy({ PATH: '/bin' }, { ownKeys: () => ['PATH', 'PATH'] })],
  ['a revoked Proxy', () => { const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); return proxy }],
  ['10,000 variables', () => Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`VAR_${index}`, `value ${index}`]))],
  ['a 1 MiB value', () => ({ LARGE: 'x'.repeat(1024 * 1024), PATH: '/bin' })],
  ['a number', () => 5],
  ['a string', () => 'PATH=/bin'],
  ['an array', () => ['PATH=/bin']],
  ['a Map', () => new Map([['PATH', '/bin']])],
  ['a function', () => () => ({ PATH: '/bin' })],
]

/** Proxy traps that note each call in `log`. */
function traps(log) {
  return {
    ownKeys: (target) => (log.push('ownKeys'), Reflect.ownKeys(target)),
    getOwnPropertyDescriptor: (target, key) => (log.push(`descriptor ${String(key)}`), Reflect.getOwnPropertyDescriptor(target, key)),
    get: (target, key, receiver) => (log.push(`get ${String(key)}`), Reflect.get(target, key, receiver)),
  }
}

const SPECS = [
  ['the default spec', {}],
  ['every layer', { scrub: { exclude: ['*_KEY'], hardening: true, includeOnly: ['*'] }, terminalEnv: { TERM: 'vt100' }, env: { EXPLICIT: 'e', KEPT: undefined }, dshEnv: { DSH_SESSION_ID: 'fresh' } }],
]

// The addon's realm, whose objects the binding returns: under Jest, not the test file's.
const ADDON_OBJECT = Object.getPrototypeOf(binding.buildEnvironment({}, {}))
const ADDON_ARRAY = Object.getPrototypeOf(binding.buildEnvironment({}, {}).removed)

/** Each object of a result, and whether it is a plain object (or array) of the addon's realm. */
function realms(built) {
  const objects = [built, built.env, built.sources, ...built.removed]
  return [...objects.map((object) => Object.getPrototypeOf(object) === ADDON_OBJECT), Object.getPrototypeOf(built.removed) === ADDON_ARRAY]
}

/** Whether `value` is an object of the addon's realm (an error the engine threw there, say). */
function realmOf(value) {
  if (value === null || typeof value !== 'object') return undefined
  let prototype = value
  while (Object.getPrototypeOf(prototype) !== null) prototype = Object.getPrototypeOf(prototype)
  return prototype === ADDON_OBJECT ? 'addon' : 'other'
}

/** What building came to: the result with its keys in order, or the error's code, message and cause; and the reads. */
function outcome(build, parent) {
  const log = []
  const value = parent(log)
  try {
    const built = build(value)
    return { built, order: Object.keys(built.env), sources: Object.keys(built.sources), realms: realms(built), log }
  } catch (error) {
    const cause = error.cause === undefined ? undefined : String(error.cause)
    return { code: error.code, message: error.message, cause, causeRealm: realmOf(error.cause), log }
  }
}

describe('a parent environment read through the package and by the raw binding comes to the same', () => {
  describe.each(SPECS)('%s', (_title, spec) => {
    it.each(PARENTS)('a parent that is %s', (_title, parent) => {
      const expected = outcome((value) => binding.buildEnvironment(spec, value), parent)
      expect(outcome((value) => buildEnvironment(spec, value), parent)).toEqual(expected)
      // Twice: the second build may reuse what the first judged.
      expect(outcome((value) => buildEnvironment(spec, value), parent)).toEqual(expected)
    })
  })

  it("the result's objects are the addon realm's plain objects, and __proto__ is a variable like the others", () => {
    const parent = Object.defineProperty({ PATH: '/bin', API_TOKEN: 'x' }, '__proto__', { value: 'proto', enumerable: true })
    for (let round = 0; round < 2; round++) {
      const built = buildEnvironment({ terminalEnv: false }, parent)
      expect(realms(built)).toEqual([true, true, true, true, true])
    }
    const built = buildEnvironment({ terminalEnv: false }, parent)
    expect(Object.getOwnPropertyDescriptor(built.env, '__proto__')).toEqual({ value: 'proto', writable: true, enumerable: true, configurable: true })
    expect({ ...built.sources }).toEqual(Object.defineProperty({ PATH: 'inherited' }, '__proto__', { value: 'inherited', writable: true, enumerable: true, configurable: true }))
  })

  it('results built by a compiled shape are the addon realm\'s objects too', () => {
    const parent = { PATH: '/bin', HOME: '/home/ada', API_TOKEN: 'x' }
    for (let round = 0; round < 3; round++) expect(realms(buildEnvironment({}, parent))).toEqual([true, true, true, true, true])
  })

  it('results follow shapes (names and sources) that alternate and outnumber those kept', () => {
    const parents = Array.from({ length: 20 }, (_, index) => Object.fromEntries(Array.from({ length: index + 1 }, (_, at) => [`SHAPE_${index}_${at}`, `value ${at}`])))
    for (let round = 0; round < 3; round++) {
      for (const [index, parent] of parents.entries()) {
        const spec = index % 2 === 0 ? {} : { env: { [`SHAPE_${index}_0`]: 'explicit' } }
        expect(buildEnvironment(spec, parent)).toEqual(binding.buildEnvironment(spec, parent))
      }
    }
  })

  it('is built where code generation from strings is disallowed', () => {
    const script = `
      const { buildEnvironment } = require(${JSON.stringify(path.resolve(__dirname, '..'))})
      const builds = [1, 2, 3].map(() => buildEnvironment({ terminalEnv: false }, { PATH: '/bin', API_TOKEN: 'x' }))
      console.log(JSON.stringify(builds))
    `
    const run = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '-e', script], { encoding: 'utf8' })
    expect(run.stderr).toBe('')
    const built = { env: { PATH: '/bin' }, sources: { PATH: 'inherited' }, removed: [{ key: 'API_TOKEN', reason: 'credential' }] }
    expect(JSON.parse(run.stdout)).toEqual([built, built, built])
  })

  it('a spec field that is wrong is reported before the parent is read', () => {
    const log = []
    const parent = new Proxy({ PATH: '/bin' }, traps(log))
    let error
    try {
      buildEnvironment({ env: 5 }, parent)
    } catch (caught) {
      error = caught
    }
    expect(error.code).toBe('ERR_SHELL_EXEC_INVALID_SPEC')
    expect(error.message).toContain('env')
    expect(log).toEqual([])
  })

  posix.it("execute() reads the caller's process.env once per command, each variable once", async () => {
    const original = process.env
    const log = []
    process.env = new Proxy({ ...original }, traps(log))
    let result
    try {
      result = await (await execute({ command: ['/bin/sh', '-c', 'printf %s "$PATH"'], terminalEnv: false })).result()
    } finally {
      process.env = original
    }
    expect(result.stdout.text).toBe(original.PATH)
    const reads = log.filter((entry) => entry === 'get PATH' || entry === 'ownKeys')
    expect(reads).toEqual(['ownKeys', 'get PATH'])
  })
})
