'use strict'
// Masking of secret values in human and JSON output. A value is masked when
// the environment pipeline's own credential rule (asked of the core, so the
// command line masks exactly what a child never gets) finds one in the
// variable. A URL with a password has only the password masked.

const { credential } = require('../native.js')

const MASK = '<masked>'

const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:)[^/\s@]+@/i

/** `{ value, masked }`: the value as it may be shown. */
function maskValue(key, value) {
  const finding = credential(key, value)
  if (finding === null) return { value, masked: false }
  if (finding === 'value' && URL_PASSWORD.test(value)) {
    const shown = value.replace(URL_PASSWORD, '$1****@')
    // Shown only when the password was the whole of the credential.
    if (credential(key, shown) === null) return { value: shown, masked: true }
  }
  return { value: MASK, masked: true }
}

/** `maskValue` unless `show` is set, in which case the value is returned as is. */
function shownValue(key, value, show) {
  return show ? { value, masked: false } : maskValue(key, value)
}

module.exports = { MASK, maskValue, shownValue }
