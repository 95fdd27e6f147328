'use strict'

// Shared by the `dsh-shell-env` command specs (cli-*.spec.cjs): the bin, the
// fixtures under fixtures/cli/, the home every case passes (a path only: no
// case and no command creates it, so the files share it), the command
// directories the fixtures declare (fixtures/cli/region.cjs, pair.mjs; never
// created either), and the helpers that run the command and check what it
// printed. Not a spec file (no `.spec.`), so the runners do not collect it.
// Its functions run inside a test, where the runner's `expect` is global, like
// helpers.cjs.

const { spawnSync } = require('node:child_process')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES } = require('./helpers.cjs')

const BIN = path.join(ROOT, 'bin', 'dsh-shell-env.js')
const CLI_FIXTURES = path.join(FIXTURES, 'cli')
const fixture = (name) => path.join(CLI_FIXTURES, name)
const HOME = path.resolve(os.tmpdir(), 'dsh-cli-spec-home')
// The fixtures' command directories (fixtures/cli/region.cjs, pair.mjs).
const REGION_BIN = path.resolve('/opt/dsh-cli-spec/region/bin')
const PAIR_BIN = path.resolve('/opt/dsh-cli-spec/pair/bin')
/** `text` matched literally in a RegExp. */
const literal = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const ESC = '\u001b'

/** The runner's environment without anything that would change the command's output. */
function baseEnv() {
  const env = { ...process.env }
  for (const key of Object.keys(env)) {
    if (key.toUpperCase().startsWith('DSH_') || ['NO_COLOR', 'FORCE_COLOR', 'COLUMNS'].includes(key)) delete env[key]
    // What `npm test` itself sets: the cases that need a launcher's variables set their own.
    if (key.startsWith('npm_') || key === 'INIT_CWD' || key === 'DEBUG') delete env[key]
  }
  return env
}

/** Runs the command; `env` entries override (undefined removes), `node` are extra node flags. */
function cli(args, { env = {}, node = [], cwd = ROOT, timeout = 20_000, input } = {}) {
  const merged = { ...baseEnv(), ...env }
  for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key]
  const result = spawnSync(process.execPath, [...node, BIN, ...args], { cwd, env: merged, encoding: 'utf8', timeout, input })
  if (result.error) throw result.error
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr }
}

/** Runs the command with `--json` and returns the parsed output (the run must succeed). */
function cliJson(args, options) {
  const result = cli([...args, '--json'], options)
  if (result.status !== 0) throw new Error(`exit ${result.status}: ${result.stderr}`)
  expect(result.stderr).toBe('')
  return JSON.parse(result.stdout)
}

const byKey = (entries) => Object.fromEntries(entries.map((entry) => [entry.key, entry]))
const codePoints = (line) => Array.from(line).length

/** Every line fits `width` columns and no escape sequence is written. */
function expectPlainTable(text, width = 80) {
  expect(text).not.toContain(ESC)
  for (const line of text.split('\n')) expect(codePoints(line)).toBeLessThanOrEqual(width)
}

/** A failure the command reports: exit 1, one line on stderr. */
function expectFailure(result, ...mentions) {
  expect(result.status).toBe(1)
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
  expect(result.stderr.startsWith('dsh-shell-env: ')).toBe(true)
  for (const mention of mentions) expect(result.stderr).toContain(mention)
}

module.exports = {
  BIN,
  fixture,
  HOME,
  REGION_BIN,
  PAIR_BIN,
  literal,
  ESC,
  baseEnv,
  cli,
  cliJson,
  byKey,
  codePoints,
  expectPlainTable,
  expectFailure,
}
