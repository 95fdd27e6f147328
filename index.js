'use strict'
// The package entry point: the native binding plus the little that belongs in
// JS (frozen constants, the Cordis plugin surface).

const binding = require('./binding.js')

const RESERVED_KEYS = Object.freeze(binding.reservedKeys())

module.exports.DSH_ENV_PREFIX = binding.DSH_ENV_PREFIX
module.exports.RESERVED_KEYS = RESERVED_KEYS
module.exports.ShellEnvRegistry = binding.ShellEnvRegistry
module.exports.resolveDshHome = binding.resolveDshHome
module.exports.reconcileDshHome = binding.reconcileDshHome
