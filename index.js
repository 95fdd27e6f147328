'use strict'
// The package entry point: the native binding plus the little that belongs in
// JS. The wrappers pass the caller's `process.env` explicitly: test runners
// such as Jest give each test file its own copy, which native code cannot see.

const binding = require('./binding.js')
const hostSignals = require('./host-signals.js')

const RESERVED_KEYS = Object.freeze(binding.reservedKeys())

/**
 * A method or getter called on something that is not an instance of its
 * class, e.g. a destructured `const { collect } = registry`: a TypeError with
 * Node's own code for this case, instead of V8's bare "Illegal invocation".
 */
function invalidThis(className, member) {
  const error = new TypeError(`${className}.${member} must be called on a ${className}; it was called on another value (a destructured or rebound method?)`)
  error.code = 'ERR_INVALID_THIS'
  return error
}

/** The registry of managed `DSH_*` variables (see index.d.ts). */
class ShellEnvRegistry extends binding.ShellEnvRegistry {
  // Brand: `#registry in value` tells a real instance from a look-alike.
  #registry = true

  constructor(options) {
    super(options, process.env)
  }

  static #is(value) {
    return value !== null && typeof value === 'object' && #registry in value
  }

  static #check(value, member) {
    if (!ShellEnvRegistry.#is(value)) throw invalidThis('ShellEnvRegistry', member)
  }

  get dshHome() {
    ShellEnvRegistry.#check(this, 'dshHome')
    return super.dshHome
  }

  register(contributor) {
    ShellEnvRegistry.#check(this, 'register()')
    return super.register(contributor)
  }

  collect(execution, options) {
    ShellEnvRegistry.#check(this, 'collect()')
    return super.collect(execution, options, process.env)
  }

  collectAsync(execution, options) {
    // Rejects, like every other failure of collectAsync.
    if (!ShellEnvRegistry.#is(this)) return Promise.reject(invalidThis('ShellEnvRegistry', 'collectAsync()'))
    return super.collectAsync(execution, options, process.env)
  }

  list() {
    ShellEnvRegistry.#check(this, 'list()')
    return super.list()
  }

  catalog() {
    ShellEnvRegistry.#check(this, 'catalog()')
    return super.catalog()
  }
}

/** Only `execute()` makes executions: `new ShellExecution()` throws. */
const kConstruct = Symbol('ShellExecution.construct')

/**
 * A running or finished command. `done` and `result()` are settled from one
 * native wait, so every caller sees the same promise and the same result.
 */
class ShellExecution {
  #native
  #result

  constructor(token, native) {
    if (token !== kConstruct) {
      const error = new TypeError('Illegal constructor: ShellExecution instances come from execute()')
      error.code = 'ERR_ILLEGAL_CONSTRUCTOR'
      throw error
    }
    this.#native = native
    this.#result = native.wait()
    /** Settles (never rejects) once the whole process group is gone. */
    this.done = this.#result.then(hostSignals.commandEnded)
  }

  static #nativeOf(execution, member) {
    if (execution === null || typeof execution !== 'object' || !(#native in execution)) {
      throw invalidThis('ShellExecution', member)
    }
    return execution.#native
  }

  get pid() {
    return ShellExecution.#nativeOf(this, 'pid').pid
  }

  get status() {
    return ShellExecution.#nativeOf(this, 'status').status
  }

  get exitCode() {
    return ShellExecution.#nativeOf(this, 'exitCode').exitCode ?? null
  }

  get signal() {
    return ShellExecution.#nativeOf(this, 'signal').signal ?? null
  }

  /** SIGTERM to the group, SIGKILL after the grace; `true` once while running. */
  kill() {
    return ShellExecution.#nativeOf(this, 'kill()').kill()
  }

  /** Output produced since the previous call. */
  readOutput() {
    return ShellExecution.#nativeOf(this, 'readOutput()').readOutput()
  }

  /** The run's result; the same promise on every call (never rejects). */
  result() {
    if (this === null || typeof this !== 'object' || !(#result in this)) {
      return Promise.reject(invalidThis('ShellExecution', 'result()'))
    }
    return this.#result
  }
}

/** Starts a command; resolves once the child runs. */
async function execute(spec) {
  // Counted from before the spawn, so a signal can never find a command unseen.
  hostSignals.commandStarting()
  let native
  try {
    native = await binding.execute(spec, process.env)
  } catch (error) {
    hostSignals.commandEnded()
    throw error
  }
  return new ShellExecution(kConstruct, native)
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
