'use strict'

// Shared by the bad-input matrix (bad-input-*.spec.cjs and the tables of
// cases in bad-input-*-cases.cjs). Every public entry point — the
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
//   1. a real Error (util.types.isNativeError: Jest runs each spec file in its own
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
//
// This module holds what more than one of those files uses: the constants,
// the state probes, the builders for bad values, the row format, the codes
// shared by both tables of CASES, the Cordis lines, and the hooks' bodies and
// badCase(), the check of one row of CASES.

const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { types } = require('node:util')

const { thrown, rejected, expectCode, contributor, agentExecution } = require('./helpers.cjs')
const { childPids } = require('./process-helpers.cjs')
const { proc, argMax, portable } = require('./platform.cjs')

const pkg = require('..')
const { ShellEnvRegistry, execute } = pkg

const HOME = path.resolve(os.tmpdir(), 'dsh-bad-input-home')
const ARG_MAX = argMax.runs ? Number(execFileSync('getconf', ['ARG_MAX'], { encoding: 'utf8' }).trim()) : undefined
const MiB = 1024 * 1024
const LONE_HIGH = '\ud800'
const LONE_LOW = '\udc00'
const T = 30_000

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

/** Tables whose rows name R follow it through followRegistry(): each is handed every fresh R. */
const followers = []
const followRegistry = (follow) => followers.push(follow)

/** A fresh R for the next case (beforeEach), handed to the tables too. */
function renewRegistry() {
  R = freshRegistry()
  for (const follow of followers) follow(R)
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

/** The `add` of a table of CASES: `add(api, mode)(title, call, code, options)` appends a row to `CASES`. */
const adder = (CASES) => (api, mode) => (title, call, code, { mentions = [], cause, gate } = {}) =>
  CASES.push([api, title, { call, code, mentions, cause, mode, gate }])

const INVALID_NAME = 'ERR_SHELL_ENV_INVALID_NAME'
const INVALID_KEY = 'ERR_SHELL_ENV_INVALID_KEY'
const INVALID_OPTION = 'ERR_SHELL_ENV_INVALID_OPTION'
const INVALID_EXECUTION = 'ERR_SHELL_ENV_INVALID_EXECUTION'
const INVALID_RESULT = 'ERR_SHELL_ENV_INVALID_RESULT'
const INVALID_VALUE = 'ERR_SHELL_ENV_INVALID_VALUE'
const RESOLVER_FAILED = 'ERR_SHELL_ENV_RESOLVER_FAILED'
const INVALID_THIS = 'ERR_INVALID_THIS'

const isTypeError = (cause) => types.isNativeError(cause) && cause.name === 'TypeError'

/** The Cordis lines the service ctx.shellEnv is checked under: [line, load, start]. */
const CORDIS_LINES = [
  ['cordis@3.18.1', async () => require('cordis3'), async (root) => { await root.start(); await root.events.flush() }],
  ['cordis@4.0.0-rc.10', async () => import('cordis4'), async () => {}],
]

// ---------------------------------------------------------------------------
// The hooks' bodies, for each spec file that runs rows.

/** beforeAll: R, the addon's Object.prototype, and a started root Context of each Cordis line. */
async function setUp() {
  renewRegistry()
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
}

/** afterAll: stops the Cordis roots setUp() started. */
async function tearDown() {
  for (const { root } of Object.values(cordis)) if (typeof root.stop === 'function') await root.stop()
}

/** The rows of `table` whose gate (`gateOf(row)`) runs here, and those it skips here. */
function byGate(table, gateOf) {
  const here = table.filter((row) => gateOf(row) === undefined || gateOf(row).runs)
  return [here, table.filter((row) => !here.includes(row))]
}

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
  // Children are listed from /proc; elsewhere the marker files (bad-input-execute.spec.cjs) stand guard alone.
  if (proc.runs) expect(childPids().filter((pid) => !children.includes(pid))).toEqual([])
  expectUnpolluted(prototypesBefore)
  await expectHealthy()
}

module.exports = {
  HOME,
  ARG_MAX,
  MiB,
  LONE_HIGH,
  LONE_LOW,
  T,
  followRegistry,
  renewRegistry,
  cordis,
  revoked,
  throwingGetter,
  throwingTrap,
  ownProto,
  Thing,
  shapeRegistry,
  pastArgMax,
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
  CORDIS_LINES,
  setUp,
  tearDown,
  byGate,
  badCase,
  registriesInPlay,
  prototypeState,
  expectUnpolluted,
  expectHealthy,
}
