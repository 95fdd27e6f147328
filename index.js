'use strict'
// The package entry point: the native binding plus the little that belongs in
// JS. The wrappers pass the caller's `process.env` explicitly: test runners
// such as Jest give each test file its own copy, which native code cannot see.

const binding = require('./binding.js')

const RESERVED_KEYS = Object.freeze(binding.reservedKeys())

/** The registry of managed `DSH_*` variables (see index.d.ts). */
class ShellEnvRegistry extends binding.ShellEnvRegistry {
  constructor(options) {
    super(options, process.env)
  }

  collect(execution, options) {
    return super.collect(execution, options, process.env)
  }

  collectAsync(execution, options) {
    return super.collectAsync(execution, options, process.env)
  }
}

/**
 * A running or finished command. `done` and `result()` are settled from one
 * native wait, so every caller sees the same promise and the same result.
 */
class ShellExecution {
  #native
  #result

  constructor(native) {
    this.#native = native
    this.#result = native.wait()
    /** Settles (never rejects) once the whole process group is gone. */
    this.done = this.#result.then(() => undefined)
  }

  get pid() {
    return this.#native.pid
  }

  get status() {
    return this.#native.status
  }

  get exitCode() {
    return this.#native.exitCode ?? null
  }

  get signal() {
    return this.#native.signal ?? null
  }

  /** SIGTERM to the group, SIGKILL after the grace; `true` once while running. */
  kill() {
    return this.#native.kill()
  }

  /** Output produced since the previous call. */
  readOutput() {
    return this.#native.readOutput()
  }

  /** The run's result; the same promise on every call. */
  result() {
    return this.#result
  }
}

/** Starts a command; resolves once the child runs. */
async function execute(spec) {
  return new ShellExecution(await binding.execute(spec, process.env))
}

function buildEnvironment(spec, parentEnv = process.env) {
  return binding.buildEnvironment(spec, parentEnv)
}

function resolveDshHome(configured, env = process.env) {
  return binding.resolveDshHome(configured, env)
}

function reconcileDshHome(top, skillsLocal) {
  return binding.reconcileDshHome(top, skillsLocal, process.env)
}

module.exports.DSH_ENV_PREFIX = binding.DSH_ENV_PREFIX
module.exports.RESERVED_KEYS = RESERVED_KEYS
module.exports.ShellEnvRegistry = ShellEnvRegistry
module.exports.ShellExecution = ShellExecution
module.exports.buildEnvironment = buildEnvironment
module.exports.execute = execute
module.exports.reconcileDshHome = reconcileDshHome
module.exports.resolveDshHome = resolveDshHome

// The package's main export is also the Cordis plugin providing `ctx.shellEnv`
// (cordis.js; `cordis` itself is an optional peer dependency, never loaded here).
const cordisPlugin = require('./cordis.js')

module.exports.name = cordisPlugin.name
module.exports.inject = cordisPlugin.inject
module.exports.Config = cordisPlugin.Config
module.exports.apply = cordisPlugin.apply
module.exports.ShellEnvService = cordisPlugin.ShellEnvService
