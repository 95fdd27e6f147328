'use strict'
// Masking of secret-looking values in human and JSON output. A value is masked
// when its name matches one of the default exclude globs of the environment
// pipeline (asked of the core, which owns that rule) or the
// value itself looks like a credential: a well-known token prefix, a JWT, a
// long mixed-case base64-like string, or a URL with a password (only the
// password is masked there).

const { excludedByDefault } = require('../binding.js')

const MASK = '<masked>'

const TOKEN_VALUE = [
  /^(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,}$/, // GitHub
  /^glpat-[A-Za-z0-9_-]{20,}$/, // GitLab
  /^sk-[A-Za-z0-9_-]{20,}$/, // OpenAI, Anthropic, DeepSeek style API keys
  /^xox[abposr]-[A-Za-z0-9-]{10,}$/, // Slack
  /^(?:AKIA|ASIA)[0-9A-Z]{16}$/, // AWS access key id
  /^npm_[A-Za-z0-9]{36}$/, // npm
  /^eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*$/, // JWT
]

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
  if (TOKEN_VALUE.some((pattern) => pattern.test(value)) || looksRandom(value)) return { value: MASK, masked: true }
  if (URL_PASSWORD.test(value)) return { value: value.replace(URL_PASSWORD, '$1****@'), masked: true }
  return { value, masked: false }
}

/** `maskValue` unless `show` is set, in which case the value is returned as is. */
function shownValue(key, value, show) {
  return show ? { value, masked: false } : maskValue(key, value)
}

module.exports = { MASK, isSecretName, maskValue, shownValue }
