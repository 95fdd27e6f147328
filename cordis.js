'use strict'
// The Cordis plugin and its service `ctx.shellEnv`.
//
// `cordis` is an optional peer dependency: this file never loads it. It speaks
// the protocol both supported lines (3.18 and 4.0 RC) share:
// - `ctx.provide(name)` then `ctx.set(name, value)` installs the service for
//   the lifetime of the providing plugin;
// - a value carrying `Symbol.for('cordis.tracker')` is handed out as a proxy
//   whose `ctx` is the *caller's* context, so `this.ctx.effect(...)` inside a
//   method ties the effect to the plugin that called it.

const Schema = require('schemastery')

// index.js re-exports this file, so it is read lazily: at the first call both
// modules are complete, whichever was required first.
let pkg
const packageEntry = () => (pkg ??= require('./index.js'))

const name = 'shell-env'
const inject = []
const SERVICE = 'shellEnv'

const kRegistry = Symbol('shellEnv.registry')
const kTracker = Symbol.for('cordis.tracker')

/** Accepted by both lines: callable for cordis 3, Standard Schema (`~standard`) for cordis 4. */
const Config = Schema.object({
  dshHome: Schema.string().description('Absolute Harness home exposed as DSH_HOME; default $DSH_HOME, then ~/.dsh.'),
  profile: Schema.object({
    name: Schema.string().required().description('Profile name, exposed as DSH_PROFILE.'),
    dir: Schema.string().required().description('Absolute profile directory, exposed as DSH_PROFILE_DIR.'),
  }).default(undefined).description('The profile the harness was launched with; adds DSH_PROFILE and DSH_PROFILE_DIR.'),
})

function invalidSpec(message, cause) {
  const error = new Error(message, cause === undefined ? undefined : { cause })
  error.code = 'ERR_SHELL_EXEC_INVALID_SPEC'
  return error
}

/**
 * The `ctx.shellEnv` service: a native ShellEnvRegistry whose registrations
 * belong to the plugin that made them.
 */
class ShellEnvService {
  constructor(ctx, config = {}) {
    const options = {}
    if (config.dshHome !== undefined) options.dshHome = config.dshHome
    if (config.profile !== undefined) options.profile = config.profile
    // Symbol-keyed: methods run with a Cordis proxy as `this`, where private
    // fields are out of reach.
    Object.defineProperty(this, kRegistry, { value: new (packageEntry().ShellEnvRegistry)(options) })
    Object.defineProperty(this, kTracker, { value: { associate: SERVICE, property: 'ctx' } })
    this.ctx = ctx
  }

  /** Absolute Harness home, resolved once when the plugin started. */
  get dshHome() {
    return this[kRegistry].dshHome
  }

  /**
   * Registers a contributor for as long as the calling plugin lives. Throws
   * (nothing registered) on an invalid declaration; the returned disposer is
   * idempotent and also ends the Cordis effect.
   */
  register(contributor) {
    const registry = this[kRegistry]
    const disposeEffect = this.ctx.effect(() => registry.register(contributor), 'ctx.shellEnv.register()')
    return () => {
      disposeEffect()
    }
  }

  collect(execution, options) {
    return this[kRegistry].collect(execution, options)
  }

  collectAsync(execution, options) {
    return this[kRegistry].collectAsync(execution, options)
  }

  list() {
    return this[kRegistry].list()
  }

  catalog() {
    return this[kRegistry].catalog()
  }

  /**
   * Collects for `execution` and spawns: Rust collects right before the spawn,
   * so a call sees the registrations current at its start. `execution`
   * defaults to `spec.execution`, then `{}` (no agent). The command belongs to
   * the calling plugin: disposing it kills the command's process group
   * (SIGTERM, then SIGKILL after `graceMs`) if it is still running.
   */
  async execute(spec, execution) {
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
    const fields = { registry: { value: this[kRegistry], enumerable: true } }
    if (execution !== undefined && execution !== null) fields.execution = { value: execution, enumerable: true }
    const started = await packageEntry().execute(Object.create(spec, fields))
    let disown
    try {
      disown = this.ctx.effect(() => () => started.kill(), 'ctx.shellEnv.execute()')
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

/** Plugin entry: provides `ctx.shellEnv` for the lifetime of this plugin. */
function apply(ctx, config) {
  const service = new ShellEnvService(ctx, config ?? {})
  ctx.provide(SERVICE)
  ctx.set(SERVICE, service)
}

module.exports = { name, inject, Config, apply, ShellEnvService }
