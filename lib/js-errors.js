'use strict'
// The errors the JS layer raises itself; every other error comes coded from
// the native binding.

/** An `Error` with a stable `.code`, and `.cause` when given. */
function codedError(code, message, cause) {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code })
}

/**
 * A method or getter called on something that is not an instance of its
 * class, e.g. a destructured `const { collect } = registry`: a TypeError with
 * Node's own code for this case, instead of V8's bare "Illegal invocation".
 */
function invalidThis(className, member) {
  const message = `${className}.${member} must be called on a ${className}; it was called on another value (a destructured or rebound method?)`
  return Object.assign(new TypeError(message), { code: 'ERR_INVALID_THIS' })
}

module.exports = { codedError, invalidThis }
