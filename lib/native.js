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

/** Whether full detail was asked for: `--debug` on the command line or `DEBUG` naming the package's command. */
function debugWanted() {
  const debug = process.env.DEBUG ?? ''
  return process.argv.includes('--debug') || debug.split(/[\s,]+/).some((name) => name === '*' || name === 'dsh-shell-env')
}

/**
 * The error for a platform without a loadable binary: three lines (the
 * platform and libc, the package looked for, the command that fixes it),
 * without a stack or the loader's chain of causes (whose advice about npm's
 * optional dependencies bug is wrong here); with DEBUG=dsh-shell-env (or
 * --debug), what was tried too, and the causes.
 */
function missingBinary(error) {
  const platform = platformName()
  const libc = platform.endsWith('-gnu') ? ` (glibc ${glibcVersion()})` : platform.endsWith('-musl') ? ' (musl)' : ''
  const wanted = `${PACKAGE}-${platform}`
  const version = require('../package.json').version
  // A clone builds its binary; an installed package gets it from its platform package.
  const root = path.join(__dirname, '..')
  const clone = fs.existsSync(path.join(root, 'Cargo.toml'))
  const lines = [
    `${PACKAGE}: no native binary for ${platform}${libc} (ERR_SHELL_ENV_NATIVE_BINARY_MISSING).`,
    clone
      ? `In this clone it is built, not installed: ${BINARY}.${platform}.node is missing or does not load.`
      : `It needs the package ${wanted}, an optional dependency that is not installed or does not load.`,
    clone
      ? 'To fix it: npm run build (a Rust toolchain is needed), or npm install, which builds it.'
      : `To fix it: npm install ${wanted}@${version} (or reinstall without --omit=optional).`,
  ]
  const debug = debugWanted()
  if (debug) {
    const local = path.join(root, `${BINARY}.${platform}.node`)
    lines.push(`Also looked for ${local}${fs.existsSync(local) ? ' (it exists but did not load)' : ''}. What was tried:`)
    lines.push(...loadErrors(error).map((message) => `  - ${message}`))
  }
  const missing = new Error(lines.join('\n'), debug ? { cause: error } : undefined)
  // Not enumerable: an uncaught error prints its own properties.
  Object.defineProperty(missing, 'code', { value: 'ERR_SHELL_ENV_NATIVE_BINARY_MISSING', enumerable: false })
  if (!debug) missing.stack = `Error: ${missing.message}`
  return missing
}

try {
  module.exports = require('../binding.js')
} catch (error) {
  throw error instanceof Error && /^(Cannot find|Failed to load) native binding/.test(error.message) ? missingBinary(error) : error
}
