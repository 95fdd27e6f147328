// One throughput measurement in a fresh Node process, so that each contender's
// memory is measured alone (no garbage or retained arenas from the other one):
//
//   node bench/throughput-child.mjs <contender> <bytes>
//
// The child program writes <bytes> zero bytes to stdout (`head -c N /dev/zero`).
// Contenders: `execute` (package defaults: 64 kB in memory, spill file up to
// 64 MiB, dropped once the stream outgrows it), `execute-nospill`
// (`spillMaxBytes: 0`), `child_process` (spawn, count and discard each chunk).
//
// Memory: after a small warmup run, VmRSS is read as the baseline and the
// kernel's peak-RSS mark (VmHWM) is reset (`echo 5 > /proc/self/clear_refs`),
// so VmHWM after the run is the exact peak during it, however short the spike.
// Where that file is not writable, rss is sampled every 2 ms instead.
// Prints one JSON line.

import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import fs from 'node:fs'

const [contender, bytesArg] = process.argv.slice(2)
const bytes = Number(bytesArg)
const require = createRequire(import.meta.url)

const WRITER = ['head', '-c']
const WARMUP_BYTES = 1 << 20

async function viaExecute(n, extra) {
  const { execute } = require('..')
  const run = await execute({ command: [...WRITER, String(n), '/dev/zero'], ...extra })
  const result = await run.result()
  if (result.exitCode !== 0) throw new Error(`writer exited with ${result.exitCode}: ${result.stderr.text}`)
  if (n > 64_000 && (!result.stdout.truncated || result.stdout.text.length !== 64_000)) {
    throw new Error(`execute kept ${result.stdout.text.length} bytes (truncated: ${result.stdout.truncated})`)
  }
  return { kept: result.stdout.text.length, spillPath: result.stdout.spillPath ?? null }
}

function viaChildProcess(n) {
  return new Promise((resolve, reject) => {
    const child = spawn(WRITER[0], [WRITER[1], String(n), '/dev/zero'], { stdio: ['ignore', 'pipe', 'pipe'] })
    let received = 0
    child.stdout.on('data', (chunk) => {
      received += chunk.length
    })
    child.stderr.resume()
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`writer exited with ${code}`))
      else if (received !== n) reject(new Error(`received ${received} of ${n} bytes`))
      else resolve({ kept: 0, spillPath: null })
    })
  })
}

const contenders = {
  execute: (n) => viaExecute(n, {}),
  'execute-nospill': (n) => viaExecute(n, { spillMaxBytes: 0 }),
  child_process: viaChildProcess,
}

function statusKiB(field) {
  const match = fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))
  return match ? Number(match[1]) * 1024 : null
}

const run = contenders[contender]
if (!run || !Number.isSafeInteger(bytes) || bytes <= 0) {
  console.error(`usage: throughput-child.mjs <${Object.keys(contenders).join('|')}> <bytes>`)
  process.exit(2)
}

await run(WARMUP_BYTES)
if (globalThis.gc) globalThis.gc()

const baseline = statusKiB('VmRSS') ?? process.memoryUsage.rss()
let method = 'VmHWM after clear_refs'
let sampled = baseline
let sampler = null
try {
  fs.writeFileSync('/proc/self/clear_refs', '5')
} catch {
  method = 'rss sampled every 2 ms'
  sampler = setInterval(() => {
    sampled = Math.max(sampled, process.memoryUsage.rss())
  }, 2)
}

const started = performance.now()
const outcome = await run(bytes)
const ms = performance.now() - started

const peak = sampler ? Math.max(sampled, process.memoryUsage.rss()) : statusKiB('VmHWM')
if (sampler) clearInterval(sampler)
console.log(JSON.stringify({ contender, bytes, ms, baselineRss: baseline, peakRss: peak, rssGrowth: peak - baseline, method, ...outcome }))
