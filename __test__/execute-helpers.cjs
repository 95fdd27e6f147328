'use strict'

// Shared by the execute() and buildEnvironment() specs (execute-*.spec.cjs,
// build-environment.spec.cjs): the per-test timeout, the terminal defaults,
// env(1), the home every registry there is made with, and the helpers that
// set the caller's environment, read the child's, and write scripts. Not a
// spec file (no `.spec.`), so the runners do not collect it. Its functions run
// inside a test, where the runner's `expect` is global, like helpers.cjs.

const fs = require('node:fs')
const path = require('node:path')

const { run, parseEnv0 } = require('./process-helpers.cjs')

const { ShellEnvRegistry } = require('..')

/** Per-test timeout for anything that spawns. */
const T = 30_000
const TERMINAL_DEFAULTS = { NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' }
const ENV_PROGRAM = ['/usr/bin/env', '/bin/env'].find((file) => fs.existsSync(file))
const HOME = path.resolve('/tmp/dsh-exec-spec-home')

/** Sets (or, for `undefined`, deletes) `process.env` entries around `fn`, restoring them afterwards. */
async function withEnv(vars, fn) {
  const saved = Object.keys(vars).map((key) => [key, Object.prototype.hasOwnProperty.call(process.env, key), process.env[key]])
  for (const [key, value] of Object.entries(vars)) {
    if (value === undefined) delete process.env[key]
    else process.env[key] = value
  }
  try {
    return await fn()
  } finally {
    for (const [key, had, value] of saved) {
      if (had) process.env[key] = value
      else delete process.env[key]
    }
  }
}

/** The exact environment a child receives (argv run directly, so no shell adds anything). */
async function childEnv(spec = {}) {
  const { result } = await run({ command: [ENV_PROGRAM, '-0'], ...spec })
  expect(result.stderr.text).toBe('')
  expect(result.exitCode).toBe(0)
  return parseEnv0(result.stdout.text)
}

/** Writes an executable (or not) shell script. */
function script(dir, name, body, mode = 0o755) {
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, name)
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`)
  fs.chmodSync(file, mode)
  return file
}

function registry(options = {}) {
  return new ShellEnvRegistry({ dshHome: HOME, ...options })
}

module.exports = { T, TERMINAL_DEFAULTS, ENV_PROGRAM, HOME, withEnv, childEnv, script, registry }
