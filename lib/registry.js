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
// Where the native registry sits is `native-registry.js`; the packed text of
// answers and snapshots is `packed.js`.

const binding = require('./native.js')
const cordis = require('./cordis.js')
const { execute } = require('./execute.js')
const { codedError } = require('./js-errors.js')
const { kNative, nativeOf, warnLeftOut } = require('./native-registry.js')
const { answerAll, answerOf, leftOutIn, unpackSnapshot } = require('./packed.js')

// The native registry's collector handle, which collect() passes to the binding.
const kCollector = Symbol('ShellEnvRegistry.collector')

function invalidSpec(message, cause) {
  return codedError('ERR_SHELL_EXEC_INVALID_SPEC', message, cause)
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

/** A packed snapshot as `collect()` returns it, with the warning of what it left out of PATH. */
function snapshotOf(native, packed) {
  const snapshot = unpackSnapshot(packed)
  if (leftOutIn(packed)) warnLeftOut(native)
  return snapshot
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
    return snapshotOf(native, packed)
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
    return collected.then((packed) => snapshotOf(native, packed))
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
    const started = await execute(Object.create(spec, fields))
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

module.exports = { ShellEnvRegistry }
