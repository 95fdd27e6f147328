// A smoke test of an installed or built package on the machine it runs on:
// it loads, a registry collects, a real command gets the managed environment,
// and (on Linux) a command's escapee that left its group is gone once the
// result is in. Prints one line per check; exits 1 on the first failure.
// Usage: node scripts/smoke.mjs [--from DIR]   (DIR: where to resolve the
// package by name, as a consumer would; default: this repository)
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const { values } = parseArgs({ options: { from: { type: 'string' } } })
const require = values.from
  ? createRequire(path.join(path.resolve(values.from), 'package.json'))
  : createRequire(import.meta.url)
const entry = values.from ? require.resolve('@deepseek-ai/dsh-shell-env') : fileURLToPath(new URL('../lib/index.js', import.meta.url))
const { ShellEnvRegistry, execute } = require(entry)
console.log(`loaded ${path.dirname(entry)} on ${process.platform}-${process.arch}, Node ${process.version}`)

const registry = new ShellEnvRegistry({ dshHome: path.join(os.tmpdir(), 'dsh-smoke-home') })
registry.register({
  name: 'smoke',
  variables: { DSH_SMOKE: { description: 'Set by the smoke test.' } },
  resolve: () => ({ DSH_SMOKE: 'yes' }),
})
const execution = { agent: { session: { header: { id: 'session-smoke' } } } }
assert.equal(registry.collect(execution).DSH_SMOKE, 'yes')
console.log('collect: ok')

const run = await execute({ command: 'echo "$DSH_SESSION_ID $DSH_SMOKE $DSH_SHELL"', registry, execution })
const result = await run.result()
assert.equal(result.exitCode, 0)
assert.equal(result.stdout.text, 'session-smoke yes 1\n')
console.log('execute: ok')

if (process.platform === 'linux') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-smoke-'))
  const pidFile = path.join(dir, 'escapee')
  const command = `setsid -f sh -c 'echo $$ > "${pidFile}"; exec sleep 300' </dev/null >/dev/null 2>&1; until [ -s "${pidFile}" ]; do sleep 0.01; done`
  const escaping = await (await execute({ command })).result()
  assert.equal(escaping.exitCode, 0)
  const pid = Number(fs.readFileSync(pidFile, 'utf8'))
  let alive = true
  try {
    process.kill(pid, 0)
  } catch {
    alive = false
  }
  fs.rmSync(dir, { recursive: true, force: true })
  assert.equal(alive, false, `the escapee ${pid} outlived its command`)
  console.log('containment: ok')
}
