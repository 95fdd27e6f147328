'use strict'
// The native addon, through the loader `napi build` generates (binding.js).
// When no binary loads, the error says which platform and package were looked
// for and what to do, instead of the loader's generic advice.

const fs = require('node:fs')
const path = require('node:path')

const PACKAGE = '@deepseek-ai/dsh-shell-env'
const BINARY = 'dsh-shell-env'

/** `linux-x64-gnu`, `linux-arm64-musl`, `darwin-arm64`, `win32-x64-msvc`, …: the platform package suffix napi-rs uses. */
function platformName() {
  const base = `${process.platform}-${process.arch}`
  if (process.platform === 'win32') return `${base}-msvc`
  if (process.platform !== 'linux') return base
  const glibc = glibcVersion()
  return `${base}-${glibc ? 'gnu' : 'musl'}`
}

/** The running glibc's version (`undefined` for musl and other systems), from Node's diagnostic report. */
function glibcVersion() {
  const report = /** @type {{ header?: { glibcVersionRuntime?: string } } | undefined} */ (process.report?.getReport?.())
  return report?.header?.glibcVersionRuntime
}

/** The messages of the loader's load errors, which it chains through `cause`. */
function loadErrors(error) {
  const messages = []
  for (let cause = error.cause; cause instanceof Error && messages.length < 8; cause = cause.cause) {
    messages.push(cause.message.split('\n')[0])
  }
  return messages.reverse()
}

function missingBinary(error) {
  const platform = platformName()
  const libc = platform.endsWith('-gnu') ? ` (glibc ${glibcVersion()})` : ''
  const local = path.join(__dirname, `${BINARY}.${platform}.node`)
  const found = fs.existsSync(local) ? ' (it exists but did not load)' : ''
  const lines = [
    `${PACKAGE} has no native binary that loads on ${platform}${libc}.`,
    `It looked for the package ${PACKAGE}-${platform} (installed as an optional dependency) and for ${local}${found}.`,
    'To fix it: install the package again without --omit=optional (or --no-optional), so that npm installs the',
    `binary for this platform; check that ${platform} is in the platform table of the README; or build from`,
    'source in a clone of the repository (npm install builds the addon, with Rust installed).',
  ]
  const details = loadErrors(error)
  if (details.length > 0) lines.push('What was tried:', ...details.map((message) => `  - ${message}`))
  return Object.assign(new Error(lines.join('\n'), { cause: error }), { code: 'ERR_SHELL_ENV_NATIVE_BINARY_MISSING' })
}

try {
  module.exports = require('./binding.js')
} catch (error) {
  throw error instanceof Error && /^(Cannot find|Failed to load) native binding/.test(error.message) ? missingBinary(error) : error
}
