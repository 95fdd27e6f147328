'use strict'
// Masking of secret-looking values in human and JSON output. A value is masked
// when the environment pipeline's own credential rules (asked of the core, so
// the command line masks exactly what a child never gets) match its name or
// its value, or when it is a long mixed-case base64-like string. A URL with a
// password has only the password masked.

const { excludedByDefault, secretValue } = require('../native.js')

const MASK = '<masked>'

const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:)[^/\s@]+@/i

/** A long string of base64/base64url characters with digits, lower and upper case letters. */
function looksRandom(value) {
  return value.length >= 32 && /^[A-Za-z0-9+/_=.-]+$/.test(value) && /\d/.test(value) && /[a-z]/.test(value) && /[A-Z]/.test(value)
}

/** Whether the variable's name alone marks it secret. */
function isSecretName(key) {
  return excludedByDefault(key)
}

/** `{ value, masked }`: the value as it may be shown. */
function maskValue(key, value) {
  if (isSecretName(key)) return { value: MASK, masked: true }
  if (URL_PASSWORD.test(value)) return { value: value.replace(URL_PASSWORD, '$1****@'), masked: true }
  if (secretValue(value) || looksRandom(value)) return { value: MASK, masked: true }
  return { value, masked: false }
}

/** `maskValue` unless `show` is set, in which case the value is returned as is. */
function shownValue(key, value, show) {
  return show ? { value, masked: false } : maskValue(key, value)
}

module.exports = { MASK, isSecretName, maskValue, shownValue }
