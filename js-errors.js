'use strict'
// The errors the JS layer raises itself; every other error comes coded from
// the native binding.

/** An `Error` with a stable `.code`, and `.cause` when given. */
function codedError(code, message, cause) {
  const error = new Error(message, cause === undefined ? undefined : { cause })
  error.code = code
  return error
}

/**
 * A method or getter called on something that is not an instance of its
 * class, e.g. a destructured `const { collect } = registry`: a TypeError with
 * Node's own code for this case, instead of V8's bare "Illegal invocation".
 */
function invalidThis(className, member) {
  const error = new TypeError(
    `${className}.${member} must be called on a ${className}; it was called on another value (a destructured or rebound method?)`,
  )
  error.code = 'ERR_INVALID_THIS'
  return error
}

module.exports = { codedError, invalidThis }
