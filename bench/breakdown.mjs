// Where the time of one `execute()` + `result()` goes, phase by phase, and how
// it moves with the number of processes on the host. Not part of `npm run bench`:
//
//   node bench/breakdown.mjs [--iterations N] [--processes N]
//
// Phases (medians over N sequential calls of /bin/true):
//   sync       the synchronous part of the native execute() on the JS thread:
//              reading the spec and process.env (the planning and the spawn
//              run on the runtime's blocking pool)
//   resolve    until the execute() promise resolves (already settled: one tick)
//   on-finish-sync  the synchronous part of the native onFinish()
//   result     until the result promise resolves
//   rust       the result's durationMs: spawn until the group is gone and reaped
// With --processes N, the same is measured again with N idle `sleep` processes
// added to the host (they are killed afterwards), next to child_process.spawn.

import { spawn as cpSpawn } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const binding = require('../binding.js')
// As the package calls it: the parent environment read by its JS layer in one pass.
const { packEnvironment } = require('../lib/environment.js')

const argv = process.argv.slice(2)
const option = (name, fallback) => {
  const index = argv.indexOf(name)
  return index >= 0 ? Number(argv[index + 1]) : fallback
}
const ITERATIONS = option('--iterations', 300)
const EXTRA = option('--processes', 0)

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1]
const us = (ms) => `${(ms * 1000).toFixed(0)} µs`
const processes = () => fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name)).length

async function phases() {
  const rows = { sync: [], resolve: [], onFinishSync: [], result: [], rust: [], total: [], childProcess: [] }
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now()
    const pending = binding.execute({ command: ['/bin/true'] }, process.env, undefined, packEnvironment)
    const t1 = performance.now()
    const native = await pending
    const t2 = performance.now()
    const waiting = new Promise((resolve) => native.onFinish(resolve))
    const t3 = performance.now()
    const result = await waiting
    const t4 = performance.now()
    rows.sync.push(t1 - t0)
    rows.resolve.push(t2 - t1)
    rows.onFinishSync.push(t3 - t2)
    rows.result.push(t4 - t3)
    rows.rust.push(result.durationMs)
    rows.total.push(t4 - t0)
    const t5 = performance.now()
    await new Promise((resolve) => cpSpawn('/bin/true').on('close', resolve))
    rows.childProcess.push(performance.now() - t5)
  }
  return Object.fromEntries(Object.entries(rows).map(([name, values]) => [name, median(values)]))
}

function print(label, m) {
  console.log(
    `${label.padEnd(22)} ${String(processes()).padStart(5)} processes | sync ${us(m.sync)} | resolve ${us(m.resolve)} | ` +
      `on-finish-sync ${us(m.onFinishSync)} | result ${us(m.result)} | rust durationMs ${us(m.rust)} | total ${us(m.total)} | ` +
      `child_process ${us(m.childProcess)}`,
  )
}

print('as the host is', await phases())
if (EXTRA > 0) {
  const sleepers = cpSpawn('bash', ['-c', `for i in $(seq ${EXTRA}); do sleep 600 & done; wait`], { stdio: 'ignore', detached: true })
  await new Promise((resolve) => setTimeout(resolve, 1000 + EXTRA * 4))
  try {
    print(`+${EXTRA} idle processes`, await phases())
  } finally {
    process.kill(-sleepers.pid, 'SIGKILL')
  }
}
