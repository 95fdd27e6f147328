'use strict'

// Shared helpers for the specs. Plain CommonJS so that Vitest (globals: true)
// and Jest load the very same files.
//
// Jest runs each spec in its own vm realm while the native addon lives in the
// outer realm: objects the addon creates (errors, snapshots, arrays) are not
// `instanceof` the spec's `Error`/`Object`. Every check here is realm-agnostic.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { types } = require('node:util')

const ROOT = path.resolve(__dirname, '..')
const FIXTURES = path.join(__dirname, 'fixtures')

/** Runs `fn` and returns what it threw; fails the test when it returns normally. */
function thrown(fn) {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('expected the call to throw, but it returned')
}

/** Calls `fn`, which must return a promise, and returns its rejection reason. */
async function rejected(fn) {
  const promise = fn()
  if (promise === null || typeof promise !== 'object' || typeof promise.then !== 'function') {
    throw new Error(`expected a promise, got ${typeof promise}`)
  }
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected the promise to reject, but it resolved')
}

/** Asserts a registry error: a real Error with the pinned code, naming `mentions` in its message. */
function expectCode(error, code, ...mentions) {
  expect(types.isNativeError(error)).toBe(true)
  expect(error.code).toBe(code)
  for (const mention of mentions) expect(error.message).toContain(mention)
}

/** A frozen plain object (in whichever realm created it) whose own keys are sorted. */
function expectSnapshotShape(snapshot) {
  expect(Object.prototype.toString.call(snapshot)).toBe('[object Object]')
  const proto = Object.getPrototypeOf(snapshot)
  expect(proto === null || Object.getPrototypeOf(proto) === null).toBe(true)
  expect(Object.isFrozen(snapshot)).toBe(true)
  const keys = Object.keys(snapshot)
  expect(keys).toEqual([...keys].sort())
}

/** A declaration of `keys` (each with a description) for contributor `name`. */
function variablesOf(name, keys) {
  return Object.fromEntries(keys.map((key) => [key, { description: `${key} from ${name}` }]))
}

/** A valid contributor; `overrides` replace any field. */
function contributor(name, keys = [], overrides = {}) {
  return { name, variables: variablesOf(name, keys), resolve: () => ({}), ...overrides }
}

/** An execution made by an agent whose session id is `id`. */
function agentExecution(id, extra = {}) {
  return { agent: { session: { header: { id } } }, ...extra }
}

/**
 * Whether `dir` and each directory above it (and where links on the way
 * lead) belong to this user or root and are not writable by group or others:
 * where a command directory is trusted (see the core's `trust`).
 */
function trustedPlace(dir) {
  const uid = process.getuid?.()
  if (uid === undefined) return true
  for (const candidate of [dir, fs.realpathSync(dir)]) {
    for (let at = candidate; ; at = path.dirname(at)) {
      const stat = fs.lstatSync(at)
      if (stat.uid !== uid && stat.uid !== 0) return false
      if (!stat.isSymbolicLink() && (stat.mode & 0o022) !== 0) return false
      if (path.dirname(at) === at) break
    }
  }
  return true
}

/**
 * A fresh private directory (0755) where command directories are trusted:
 * under the workspace's `target/`, else the home directory, never the
 * system's temporary directory, which others can write.
 */
function trustedScratch(prefix) {
  const base = [path.join(ROOT, 'target'), os.homedir()].find((dir) => fs.existsSync(dir) && trustedPlace(dir))
  if (base === undefined) throw new Error('neither target/ nor the home directory is a trusted place for command directories')
  const dir = fs.mkdtempSync(path.join(base, `.${prefix}`))
  fs.chmodSync(dir, 0o755)
  return dir
}

/** Runs a Node script file in a fresh process and returns `{ status, signal, stdout, stderr }`. */
function runNode(args, { env = {}, timeout = 30_000, cwd = ROOT, killSignal = 'SIGTERM' } = {}) {
  const result = spawnSync(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout,
    killSignal,
  })
  if (result.error) throw result.error
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr }
}

/** The last line of a child's stdout, parsed as JSON. */
function lastJsonLine(stdout) {
  const lines = stdout.trim().split('\n')
  return JSON.parse(lines[lines.length - 1])
}

module.exports = {
  ROOT,
  trustedScratch,
  FIXTURES,
  thrown,
  rejected,
  expectCode,
  expectSnapshotShape,
  variablesOf,
  contributor,
  agentExecution,
  runNode,
  lastJsonLine,
}
