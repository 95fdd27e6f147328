'use strict'
// `ShellEnvRegistry`: the registry of managed `DSH_*` variables, which is also
// the Cordis service `ctx.shellEnv`. The registry itself (validation,
// snapshots) is native; this class adds the two ways of owning it:
// - `new ShellEnvRegistry(ctx, config?)` (and `ctx.plugin(ShellEnvRegistry,
//   config)`, and the module's `apply`) provides `ctx.shellEnv` for the
//   lifetime of `ctx`'s fiber; a registration belongs to the plugin whose
//   `ctx.shellEnv` made it;
// - `new ShellEnvRegistry(config?)` is a registry of its own, for scripts and
//   the CLI, whose registrations last until their disposer is called.
//
// Cordis calls methods with a proxy as `this` (its `ctx` is the caller's), and
// private fields cannot be read through a proxy: the native registry sits
// under a module-private symbol instead.

const binding = require('./native.js')
const cordis = require('./cordis.js')
const { invalidThis, codedError } = require('./js-errors.js')

// index.js requires this file, so it is read lazily: at the first call both
// modules are complete.
let pkg
const packageEntry = () => (pkg ??= require('./index.js'))

const kNative = Symbol('ShellEnvRegistry.native')
// The native registry's collector handle, which collect() passes to the binding.
const kCollector = Symbol('ShellEnvRegistry.collector')

/** The native registry behind `value`, or ERR_INVALID_THIS for anything else. */
function nativeOf(value, member) {
  const native = value !== null && typeof value === 'object' ? value[kNative] : undefined
  if (!(native instanceof binding.ShellEnvRegistry)) throw invalidThis('ShellEnvRegistry', member)
  return native
}

function invalidSpec(message, cause) {
  return codedError('ERR_SHELL_EXEC_INVALID_SPEC', message, cause)
}

// Resolvers' answers cross to the binding packed, one string per collection
// instead of a Node-API call per key and value: `<pairs>\0` then
// `<key>\0<value>\0` per pair (crates/core/src/packed.rs reads it). Only an
// answer whose every key and value is well-formed text without NUL packs,
// which is every valid answer; any other is handed over boxed, as it is, for
// the binding to read and report as before.

/**
 * One resolver's answer: packed, or `[answer]` when it does not pack (a
 * promise, not a plain object, a symbol key, a value that is not a string or
 * holds NUL or a lone surrogate). Reads the answer as the binding would: its
 * `then`, its prototype, its own enumerable keys, then each value.
 */
function answerOf(resolve, execution) {
  const answer = resolve(execution)
  if (answer === null || typeof answer !== 'object' || typeof answer.then === 'function' || Array.isArray(answer)) return [answer]
  const prototype = Object.getPrototypeOf(answer)
  if (prototype !== null && Object.getPrototypeOf(prototype) !== null) return [answer]
  if (Object.getOwnPropertySymbols(answer).length > 0) return [answer]
  const keys = Object.keys(answer)
  let packed = `${keys.length}\0`
  for (const key of keys) {
    const value = answer[key]
    if (typeof value !== 'string' || !packable(key) || !packable(value)) return [answer]
    packed += `${key}\0${value}\0`
  }
  return packed
}

function packable(text) {
  return !text.includes('\0') && text.isWellFormed()
}

/**
 * Runs `resolvers` (the contributors' own functions, in order) at once for
 * one collection: their answers packed; at the first answer that does not
 * pack or the first throw, `[answers before, index, value, threw]`; when
 * `signal` fired (a resolver aborted it), `[answers before, index]`.
 */
function answerAll(resolvers, execution, signal) {
  let packed = ''
  for (let index = 0; index < resolvers.length; index++) {
    if (signal !== undefined && signal.aborted) return [packed, index]
    let answer
    try {
      answer = answerOf(resolvers[index], execution)
    } catch (error) {
      return [packed, index, error, true]
    }
    if (typeof answer !== 'string') return [packed, index, answer, false]
    packed += answer
  }
  return packed
}

/**
 * The calling agent's session id, `execution.agent.session.header.id`, read
 * as the binding reads it: the id when it is a string, `null` for no agent.
 * Anything else is `undefined`, and the binding reads the execution itself
 * and reports what is wrong with it, as when no id is passed (a getter that
 * threw or returned something else is then called a second time).
 */
function sessionIdOf(execution) {
  if (execution === null || typeof execution !== 'object') return undefined
  try {
    const agent = execution.agent
    if (agent === undefined || agent === null) return null
    const id = agent.session?.header?.id
    return typeof id === 'string' ? id : undefined
  } catch {
    // A getter or Proxy trap threw: the binding reads again and reports it.
    return undefined
  }
}

/**
 * A packed snapshot as the frozen object `collect()` returns: `0` or `1`
 * (directories were left out), the keys, `\x01`, the values.
 */
function unpackSnapshot(native, packed) {
  const keysEnd = packed.indexOf('\x01')
  const snapshot = buildSnapshot(packed.slice(1, keysEnd), packed, keysEnd + 1)
  if (packed[0] === '1') warnLeftOut(native)
  return snapshot
}

// How snapshots are built, by key list (as packed). A registry's key list
// seldom changes between collections (with its contributors, and with
// whether the execution has an agent), so each list is split once, and from
// its second use on its snapshots are built by a function compiled for it:
// it cuts each value out of the packed text in turn (twice as fast as
// splitting it) and makes the snapshot as one object literal, which V8 makes
// one fast object, where an object built key by key turns into a slower
// dictionary past a dozen keys. The last list is checked first; a few more
// are kept.
const SHAPES_KEPT = 16
const shapes = new Map()
let lastShape = { keyText: '', keys: [], build: undefined }

/**
 * The frozen snapshot of `keyText`'s keys (each ending with a NUL) and their
 * values, in the same order, in `packed` from `from` on (each ending with a NUL).
 */
function buildSnapshot(keyText, packed, from) {
  let shape = lastShape
  if (keyText !== shape.keyText) {
    shape = shapes.get(keyText)
    if (shape === undefined) {
      if (shapes.size >= SHAPES_KEPT) shapes.clear()
      shape = { keyText, keys: keyText.split('\0').slice(0, -1), build: undefined }
      shapes.set(keyText, shape)
      lastShape = shape
      return buildByKey(shape.keys, packed, from)
    }
    lastShape = shape
  }
  shape.build ??= compileBuild(shape.keys)
  return shape.build(packed, from)
}

function buildByKey(keys, packed, from) {
  const values = packed.slice(from).split('\0')
  const snapshot = {}
  for (let index = 0; index < keys.length; index++) snapshot[keys[index]] = values[index]
  return Object.freeze(snapshot)
}

/** A function building the snapshot of `keys` from packed values, as one object literal. */
function compileBuild(keys) {
  // Keys are `DSH_*` names and PATH (the core admits no other), so each is
  // an identifier of its own; anything else is built key by key.
  if (!keys.every((key) => /^[A-Z_][A-Z0-9_]*$/.test(key))) return (packed, from) => buildByKey(keys, packed, from)
  const cut = keys.map((_, index) => `end = packed.indexOf('\\0', from); const v${index} = packed.slice(from, end); from = end + 1`)
  const literal = keys.map((key, index) => `${key}: v${index}`)
  try {
    return new Function('packed', 'from', `let end\n${cut.join('\n')}\nreturn Object.freeze({ ${literal.join(', ')} })`)
  } catch {
    // Code generation from strings is disallowed here (--disallow-code-generation-from-strings).
    return (packed, from) => buildByKey(keys, packed, from)
  }
}

/** The registry of managed `DSH_*` variables and the `ctx.shellEnv` service (see index.d.ts). */
class ShellEnvRegistry {
  /** Loaded as a class plugin, the registry needs no other service. */
  static inject = cordis.inject
  /** Cordis reads a class plugin's config schema here. */
  static Config = cordis.Config

  constructor(...args) {
    const service = cordis.isContext(args[0])
    if (!service && args.length > 1) {
      throw codedError(
        'ERR_SHELL_ENV_INVALID_OPTION',
        'invalid option ctx: new ShellEnvRegistry(ctx, config) needs a Cordis context as ctx; without Cordis, construct it as new ShellEnvRegistry(config)',
      )
    }
    const [ctx, config] = service ? args : [undefined, args[0]]
    // The native constructor validates the config: coded errors naming the
    // field, unknown fields refused. Nothing is provided if it throws.
    const native = new binding.ShellEnvRegistry(config, process.env)
    Object.defineProperty(this, kNative, { value: native })
    Object.defineProperty(this, kCollector, { value: native.collector() })
    /** The providing context; through `ctx.shellEnv`, the caller's. `undefined` without Cordis. */
    this.ctx = ctx
    if (service) cordis.provide(ctx, this)
  }

  /** Absolute Harness home, resolved once at construction. */
  get dshHome() {
    return nativeOf(this, 'dshHome').dshHome
  }

  /**
   * Registers a contributor. Under Cordis the registration is an effect of
   * the calling plugin, removed when that plugin is disposed (or reloaded);
   * the returned disposer removes it earlier and is idempotent. Throws, with
   * nothing registered, on an invalid declaration.
   */
  register(contributor) {
    const native = nativeOf(this, 'register()')
    const ctx = this.ctx
    if (ctx === undefined) return native.register(contributor, answerOf)
    const dispose = ctx.effect(() => native.register(contributor, answerOf), 'ctx.shellEnv.register()')
    return () => void dispose()
  }

  collect(execution, options) {
    const native = nativeOf(this, 'collect()')
    const packed = binding.collectPacked(this[kCollector], execution, options, process.env, answerAll, sessionIdOf(execution))
    return unpackSnapshot(native, packed)
  }

  collectAsync(execution, options) {
    // Rejects, like every other failure of collectAsync.
    let native
    let collected
    try {
      native = nativeOf(this, 'collectAsync()')
      collected = binding.collectAsyncPacked(this[kCollector], execution, options, process.env, answerAll)
    } catch (error) {
      return Promise.reject(error)
    }
    return collected.then((packed) => unpackSnapshot(native, packed))
  }

  list() {
    return nativeOf(this, 'list()').list()
  }

  catalog() {
    return nativeOf(this, 'catalog()').catalog()
  }

  untrustedDirectories() {
    return nativeOf(this, 'untrustedDirectories()').untrustedDirectories()
  }

  /**
   * Collects for `execution` and spawns: Rust collects right before the spawn,
   * so a call sees the registrations current at its start. `execution`
   * defaults to `spec.execution`, then `{}` (no agent). Under Cordis the
   * command belongs to the calling plugin: disposing it kills the command's
   * process group (SIGTERM, then SIGKILL after `graceMs`) if it still runs.
   */
  async execute(spec, execution) {
    const native = nativeOf(this, 'execute()')
    if (spec === null || typeof spec !== 'object') throw invalidSpec('spec: must be an object')
    let managed
    try {
      managed = spec.dshEnv !== undefined || spec.registry !== undefined
    } catch (error) {
      // A getter or Proxy trap of the caller's spec threw: coded, like execute() reports it.
      throw invalidSpec('invalid spec field spec: reading the spec threw', error)
    }
    if (managed) {
      throw invalidSpec('spec: ctx.shellEnv.execute() collects the managed environment itself; do not pass dshEnv or registry')
    }
    // The caller's spec stays the prototype, so the native side reads every
    // field from it itself (getters and Proxy traps included, each failure
    // coded) instead of a copy made here.
    const fields = { registry: { value: native, enumerable: true } }
    if (execution !== undefined && execution !== null) fields.execution = { value: execution, enumerable: true }
    const started = await packageEntry().execute(Object.create(spec, fields))
    const ctx = this.ctx
    if (ctx === undefined) return started
    let disown
    try {
      disown = ctx.effect(() => () => started.kill(), 'ctx.shellEnv.execute()')
    } catch {
      // The calling plugin was disposed while the command was starting.
      started.kill()
      return started
    }
    // Once the group is gone there is nothing to kill: the effect goes too.
    started.done.then(() => disown())
    return started
  }
}

/**
 * Warns of the command directories collections of `native` left out of
 * PATH because they cannot be trusted now, each directory and reason once in
 * the registry's life (code `DSH_SHELL_ENV_UNTRUSTED_DIRECTORY`).
 */
function warnLeftOut(native) {
  for (const { contributor, directory, reason } of native.takeLeftOut()) {
    process.emitWarning(`command directory ${directory} of contributor ${contributor} ${reason}; it is left out of PATH`, {
      type: 'DshShellEnvWarning',
      code: 'DSH_SHELL_ENV_UNTRUSTED_DIRECTORY',
    })
  }
}

/**
 * The native registry behind `value` when it is a ShellEnvRegistry (what
 * `execute({ registry })` collects from), else `value` itself, for the
 * binding to report.
 */
function registryOf(value) {
  if (value === null || typeof value !== 'object') return value
  const native = value[kNative]
  return native instanceof binding.ShellEnvRegistry ? native : value
}

module.exports = { ShellEnvRegistry, registryOf, warnLeftOut, answerAll }
