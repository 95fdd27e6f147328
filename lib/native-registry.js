'use strict'
// Where a `ShellEnvRegistry` keeps its native registry, and what reads it
// there: the registry's own methods (`nativeOf`), `execute({ registry })`
// (`registryOf`) and the warning of directories a collection left out of
// PATH. Its own module, so that `registry.js` and `execute.js` both reach
// it and neither needs the other's.

const binding = require('./native.js')
const { invalidThis } = require('./js-errors.js')

// Cordis calls methods with a proxy as `this` (its `ctx` is the caller's),
// and private fields cannot be read through a proxy: the native registry
// sits under a module-private symbol instead.
const kNative = Symbol('ShellEnvRegistry.native')

/** The native registry behind `value`, or ERR_INVALID_THIS for anything else. */
function nativeOf(value, member) {
  const native = value !== null && typeof value === 'object' ? value[kNative] : undefined
  if (!(native instanceof binding.ShellEnvRegistry)) throw invalidThis('ShellEnvRegistry', member)
  return native
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

module.exports = { kNative, nativeOf, registryOf, warnLeftOut }
