'use strict'
// The package entry point: the native binding plus the little that belongs in
// JS (`execute.js`, `registry.js`). The wrappers pass the caller's
// `process.env` explicitly: test runners such as Jest give each test file its
// own copy, which native code cannot see.

const binding = require('./native.js')
const { ShellExecution, execute } = require('./execute.js')
const { ShellEnvRegistry } = require('./registry.js')
const cordis = require('./cordis.js')
const { packEnvironment, unpackEnvironment } = require('./environment.js')

const RESERVED_KEYS = Object.freeze(binding.reservedKeys())

function buildEnvironment(spec, parentEnv = process.env) {
  return unpackEnvironment(binding.buildEnvironmentPacked(spec, parentEnv, packEnvironment))
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
module.exports.limitMechanisms = binding.limitMechanisms
module.exports.reconcileDshHome = reconcileDshHome
module.exports.removeSpillFile = binding.removeSpillFile
module.exports.resolveDshHome = resolveDshHome

// The module is also the Cordis plugin providing `ctx.shellEnv`:
// `ctx.plugin(require('@deepseek-ai/dsh-shell-env'), config)`, or the ESM
// namespace. `cordis` itself is an optional peer dependency, never loaded here.
module.exports.name = cordis.name
module.exports.inject = cordis.inject
module.exports.Config = cordis.Config
/** Plugin entry: provides `ctx.shellEnv` for the lifetime of `ctx`'s fiber. */
module.exports.apply = function apply(ctx, config) {
  new ShellEnvRegistry(ctx, config)
}
