'use strict'
// Masking of secret values in human and JSON output, by the core: the command
// line masks exactly the variables the environment pipeline's credential rule
// keeps from a child, and a URL whose password was the whole of the
// credential shows with only the password masked.

const { maskedValue } = require('../lib/native.js')

/** `{ value, masked }`: the value as it may be shown. */
function maskValue(key, value) {
  const shown = maskedValue(key, value)
  return shown === null ? { value, masked: false } : { value: shown, masked: true }
}

/** `maskValue` unless `show` is set, in which case the value is returned as is. */
function shownValue(key, value, show) {
  return show ? { value, masked: false } : maskValue(key, value)
}

module.exports = { maskValue, shownValue }
