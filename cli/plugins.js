'use strict'
// `--plugin FILE`: an ES module or CommonJS file, loaded with a dynamic
// import() of its file URL (which handles both), exporting
// - a contributor (`{ name, variables, commandDirectories?, resolve }`),
// - an array of contributors, or
// - a Cordis plugin: an object with `apply` (a module namespace with `apply`
//   counts) or a function/class, which Cordis calls with its context.
// The default export is looked at first (for CommonJS it is module.exports),
// then the module namespace itself.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

const { PluginError } = require('./errors.js')

/** An Error with a code, for `plugin FILE: CODE: message` lines. */
function coded(code, message) {
  return Object.assign(new Error(message), { code })
}

function isCordisPlugin(value) {
  if (typeof value === 'function') return true
  return value !== null && typeof value === 'object' && typeof value.apply === 'function' && value.apply !== Function.prototype.apply
}

function isContributor(value) {
  return value !== null && typeof value === 'object' && ('variables' in value || 'resolve' in value)
}

/** `{ kind: 'contributors', contributors } | { kind: 'cordis', plugin }`, or undefined. */
function classify(value) {
  if (Array.isArray(value)) return { kind: 'contributors', contributors: [...value] }
  if (isCordisPlugin(value)) return { kind: 'cordis', plugin: value }
  // A module namespace is not a plain object: the registry gets a copy.
  if (isContributor(value)) return { kind: 'contributors', contributors: [{ ...value }] }
  return undefined
}

/**
 * Where a syntax error is in `absolute` when the error does not say (an ES
 * module's does not): what `node --check` prints first, `FILE:LINE`.
 */
function syntaxErrorLine(error, absolute) {
  if (!(error instanceof SyntaxError)) return undefined
  const checked = spawnSync(process.execPath, ['--check', absolute], { encoding: 'utf8', timeout: 10_000 })
  return lineIn({ stack: checked.stderr ?? '' }, absolute)
}

/**
 * The line (and column) of `absolute` an error of loading it points at: a
 * syntax error's first stack line (`FILE:LINE`), or the first stack frame in
 * the file for an error thrown while it ran (`(FILE:LINE:COLUMN)`).
 * `undefined` when the stack does not name the file.
 */
function lineIn(error, absolute) {
  const stack = error !== null && typeof error === 'object' && typeof error.stack === 'string' ? error.stack : ''
  for (const name of [absolute, pathToFileURL(absolute).href]) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    const found = new RegExp(`${escaped}:(\\d+)(?::(\\d+))?`).exec(stack)
    if (found) return found[2] ? `${found[1]}:${found[2]}` : found[1]
  }
  return undefined
}

/**
 * Loads one plugin file; `file` is the path as given (relative to `cwd`).
 * Resolves to `{ file, absolute, kind, contributors?, plugin? }`; rejects with
 * a PluginError naming the file.
 */
async function loadPluginFile(file, cwd = process.cwd()) {
  const absolute = path.resolve(cwd, file)
  let stat
  try {
    stat = fs.statSync(absolute)
  } catch (error) {
    throw new PluginError(file, error.code === 'ENOENT' ? coded('ENOENT', `no such file: ${absolute}`) : error)
  }
  if (!stat.isFile()) throw new PluginError(file, coded('EISDIR', `not a file: ${absolute}`))

  let namespace
  try {
    namespace = await import(pathToFileURL(absolute).href)
  } catch (error) {
    throw new PluginError(file, error, lineIn(error, absolute) ?? syntaxErrorLine(error, absolute))
  }
  let found
  try {
    found = ('default' in namespace ? classify(namespace.default) : undefined) ?? classify(namespace)
  } catch (error) {
    // An export whose getter throws, read here (`apply`) or copied (a contributor's fields).
    throw new PluginError(file, error, lineIn(error, absolute))
  }
  if (!found) {
    throw new PluginError(
      file,
      new Error('exports no contributor, array of contributors or Cordis plugin (an object or function with apply)'),
    )
  }
  return { file, absolute, ...found }
}

/** Every file, in order; the first failure rejects. */
async function loadPluginFiles(files, cwd) {
  const loaded = []
  for (const file of files) loaded.push(await loadPluginFile(file, cwd))
  return loaded
}

module.exports = { loadPluginFile, loadPluginFiles, classify }
