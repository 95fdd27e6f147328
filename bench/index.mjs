// `npm run bench`: the package side by side with what users would use instead,
// in one process, at one moment, interleaved (see lib.mjs), medians and ratios.
//
//   node --max-old-space-size=4096 bench/index.mjs [--quick] [--out FILE] [--baseline FILE.node|DIR]
//
// Environment: BENCH_QUICK=1 (same as --quick: a tiny workload for the smoke
// test), BENCH_OUTPUT=FILE (same as --out; default bench/results.json),
// BENCH_FLOOR=build|existing|skip (the floor binary, posix_spawn + waitpid
// called directly: build it with cargo (default), use an already built one,
// or leave the row out).
//
// Rows:
//  1. spawn and wait for /bin/true   — execute() + result() vs child_process vs execa vs the floor
//     (posix_spawn + waitpid from one thread) vs the model (the floor in a
//     waiting helper, ordered over a pipe: the least any helper design costs)
//  2. bash -c true                    — the same, through the default shell
//  3. collect() with 1/10/50 contributors vs a plain-JS registry (plain-registry.mjs),
//     and collectAsync() with 10 vs the same registry awaiting each answer;
//     buildEnvironment() of this process's own process.env vs a plain-JS
//     copy of it without a few names, and vs a plain-JS filter
//  4. 256 MiB of stdout               — execute() vs child_process, each in a fresh process (throughput-child.mjs)
//  5. 64 concurrent /bin/true         — wall time per batch and p99 per-call latency, beside the
//     floor starting the same 64 from two threads
//  6. one call of the published bash tool (`true`) through this package's
//     native executor vs through @deepseek-ai/dsh-bash-local, at the default
//     heap and holding ~1 GiB of large strings or of small objects, each in a
//     fresh process (tool-bash-child.mjs)
//  7. what the default scrub costs: execute() of /bin/true with and without
//     the default scrub, beside child_process.spawn of /bin/true
//  9. in the same fresh processes as 6: ctx.subprocess.spawn() of /bin/true
//     with collected output through this package's runtime vs
//     @deepseek-ai/dsh-subprocess-local, and (with bubblewrap installed) a
//     read-only bash tool call through @deepseek-ai/dsh-bash-sandbox over
//     each runtime
// 10. a terminal session through ctx.subprocess.spawnTerminal(), from the
//     call to its first output: this package's runtime vs
//     @deepseek-ai/dsh-subprocess-local (node-pty), in a fresh process
//     (terminal-child.mjs; Linux)
// 11. what limits cost: execute() of /bin/true with every limit this host
//     enforces beside the same without limits (POSIX; run last)
//  8. with --baseline FILE.node|DIR: the binding's per-call cost (collect(),
//     buildEnvironment(), execute()) of this build beside that build of the
//     addon, both loaded here (baseline.mjs); with a checkout DIR, also the
//     registry's collect() and collectAsync() through each package
// 12. what a command costs the host's event loop: its busy time per awaited
//     execute() of /bin/true (performance.eventLoopUtilization over 500 in a
//     row), and the loop's p99 delay while 8 agents each run 50 `echo hi`
//     (monitorEventLoopDelay), each beside child_process
//  1, 2 and 12 run again after this process holds ~1 GiB of live strings.

import assert from 'node:assert/strict'
import { spawn as cpSpawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import v8 from 'node:v8'

import { execa } from 'execa'

import { baselineRows } from './baseline.mjs'
import { formatMs, interleave, markdownTable, stats, table } from './lib.mjs'
import { PlainShellEnvRegistry } from './plain-registry.mjs'

const require = createRequire(import.meta.url)
const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.resolve(HERE, '..')
const { buildEnvironment, execute, limitMechanisms, ShellEnvRegistry } = require('..')

const argv = process.argv.slice(2)
const QUICK = argv.includes('--quick') || ['1', 'true', 'yes'].includes(String(process.env.BENCH_QUICK ?? '').toLowerCase())
const outIndex = argv.indexOf('--out')
const OUTPUT = path.resolve(outIndex >= 0 ? argv[outIndex + 1] : (process.env.BENCH_OUTPUT ?? path.join(HERE, 'results.json')))
const FLOOR_MODE = process.env.BENCH_FLOOR ?? 'build'
const baselineIndex = argv.indexOf('--baseline')
const BASELINE = baselineIndex >= 0 ? argv[baselineIndex + 1] : undefined

const MiB = 1024 * 1024
/** Workload sizes: full run, and the tiny one for the smoke test. */
const SIZE = QUICK
  ? {
      spawn: { rounds: 2, perRound: 2 },
      spawnBig: { rounds: 2, perRound: 2 },
      collect: { rounds: 2, perRound: 5, batch: { 1: 10, 10: 10, 50: 10 } },
      concurrent: { rounds: 2, perRound: 1, calls: 8 },
      throughput: { rounds: 1, bytes: 4 * MiB },
      toolBash: { rounds: 2, perRound: 2 },
      terminal: { rounds: 2, perRound: 2 },
      eventLoop: { reps: 2, commands: 20, agents: 2, perAgent: 5 },
      heapMiB: 16,
    }
  : {
      spawn: { rounds: 30, perRound: 10 }, // 300 samples per contender
      spawnBig: { rounds: 20, perRound: 10 }, // 200 samples per contender at ~1 GiB
      collect: { rounds: 20, perRound: 50, batch: { 1: 100, 10: 40, 50: 10 } }, // 1000 samples of `batch` calls
      concurrent: { rounds: 15, perRound: 2, calls: 64 }, // 30 batches of 64
      throughput: { rounds: 7, bytes: 256 * MiB }, // 7 fresh processes per contender
      toolBash: { rounds: 20, perRound: 10 }, // 200 calls per contender and heap shape
      terminal: { rounds: 10, perRound: 10 }, // 100 sessions per contender
      eventLoop: { reps: 5, commands: 500, agents: 8, perAgent: 50 }, // per contender and heap shape
      heapMiB: 1024,
    }

const startedAt = new Date()
const loadAverageAtStart = os.loadavg()
/** Processes on the machine (Linux): the spawner's exit path scans /proc, so this is part of the setting. */
const processCount = () => {
  try {
    return fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name)).length
  } catch {
    return null
  }
}
const processesAtStart = processCount()
const log = (...parts) => console.error(`[bench +${((Date.now() - startedAt) / 1000).toFixed(1)}s]`, ...parts)

// ---------------------------------------------------------------------------
// Contenders for one spawn-and-wait of `argv` (`/bin/true`, `bash -c true`).

function which(program) {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    const file = path.join(dir || '.', program)
    try {
      fs.accessSync(file, fs.constants.X_OK)
      return path.resolve(file)
    } catch {}
  }
  throw new Error(`${program} not found on PATH`)
}

function spawnContenders(kind, floor) {
  const [ourSpec, cpArgs, floorArgv] =
    kind === 'true'
      ? [{ command: ['/bin/true'] }, ['/bin/true', []], ['/bin/true']]
      : [{ command: 'true' }, ['bash', ['-c', 'true']], [which('bash'), '-c', 'true']]
  return [
    {
      id: 'execute',
      label: kind === 'true' ? "execute({ command: ['/bin/true'] }) + result()" : "execute({ command: 'true' }) + result()",
      fn: async () => {
        const run = await execute(ourSpec)
        const result = await run.result()
        if (result.exitCode !== 0) throw new Error(`execute: exit ${result.exitCode}`)
      },
    },
    {
      id: 'child_process',
      label: `child_process.spawn(${cpArgs[1].length ? `'bash', ['-c', 'true']` : `'/bin/true'`}), await 'close'`,
      fn: () =>
        new Promise((resolve, reject) => {
          const child = cpSpawn(cpArgs[0], cpArgs[1])
          child.on('error', reject)
          child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`child_process: exit ${code}`))))
        }),
    },
    {
      id: 'execa',
      label: `await execa(${cpArgs[1].length ? `'bash', ['-c', 'true']` : `'/bin/true'`})`,
      fn: async () => {
        await execa(cpArgs[0], cpArgs[1])
      },
    },
    floor.binary
      ? {
          id: 'rust-floor',
          label: `floor: posix_spawn(${floorArgv[0] === '/bin/true' ? '/bin/true' : 'bash -c true'}) + waitpid, one thread`,
          external: (n) => floor.run(n, floorArgv),
        }
      : { id: 'rust-floor', label: 'floor (skipped)', skipped: floor.note },
    floor.binary
      ? {
          id: 'helper-model',
          label: 'model: the floor in a waiting helper, ordered and answered over a pipe from this process',
          fn: floor.helper(floorArgv),
        }
      : { id: 'helper-model', label: 'model (skipped)', skipped: floor.note },
  ]
}

/** The resident set of this process's supervisor, in MiB; null without one (not Linux). */
function supervisorRssMiB() {
  if (process.platform !== 'linux') return null
  for (const task of fs.readdirSync('/proc/self/task')) {
    const children = fs.readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)
    for (const pid of children) {
      try {
        if (!fs.readlinkSync(`/proc/${pid}/exe`).endsWith('/dsh-shell-env-supervisor')) continue
        const kib = Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
        return kib / 1024
      } catch {}
    }
  }
  return null
}

// ---------------------------------------------------------------------------
// The scrub: the same spawn with the default scrub taken away.

function scrubContenders() {
  const closeOf = (file, args) => () =>
    new Promise((resolve, reject) => {
      const child = cpSpawn(file, args)
      child.on('error', reject)
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${file}: exit ${code}`))))
    })
  const ours = (spec) => async () => {
    const result = await (await execute(spec)).result()
    if (result.exitCode !== 0) throw new Error(`execute: exit ${result.exitCode}`)
  }
  return [
    { id: 'execute', label: "execute({ command: ['/bin/true'] }) + result() (default scrub)", fn: ours({ command: ['/bin/true'] }) },
    {
      id: 'execute-no-scrub-defaults',
      label: 'the same, scrub: { defaultExclude: false, hardening: false }',
      fn: ours({ command: ['/bin/true'], scrub: { defaultExclude: false, hardening: false } }),
    },
    { id: 'child_process', label: "child_process.spawn('/bin/true'), await 'close'", fn: closeOf('/bin/true', []) },
  ]
}

/**
 * /bin/true with every limit this host enforces (generous values, so none
 * acts) against /bin/true without: what setting them up costs.
 */
function limitContenders() {
  const generous = { memoryBytes: 4 * 1024 * MiB, processes: 4096, cpuSeconds: 3600, fileBytes: 1024 * MiB, openFiles: 4096 }
  const enforceable = limitMechanisms().filter((entry) => entry.mechanism !== null)
  const limits = Object.fromEntries(enforceable.map((entry) => [entry.field, generous[entry.field]]))
  const ours = (spec) => async () => {
    const result = await (await execute(spec)).result()
    if (result.exitCode !== 0) throw new Error(`execute: exit ${result.exitCode}`)
  }
  return [
    {
      id: 'execute',
      label: `execute({ command: ['/bin/true'], limits }) + result(), limits: ${enforceable.map((entry) => entry.field).join(', ') || 'none enforceable here'}`,
      fn: ours({ command: ['/bin/true'], limits }),
    },
    { id: 'no-limits', label: "execute({ command: ['/bin/true'] }) + result(), no limits", fn: ours({ command: ['/bin/true'] }) },
  ]
}

// ---------------------------------------------------------------------------
// The floor: crates/core/examples/spawn_floor.rs, posix_spawn + waitpid
// called directly, from one thread or (a batch) from several.

function prepareFloor() {
  const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(ROOT, process.env.CARGO_TARGET_DIR) : path.join(ROOT, 'target')
  const binary = path.join(targetDir, 'release', 'examples', 'spawn_floor')
  const unusable = (note) => ({ binary: null, note })
  if (FLOOR_MODE === 'skip') return unusable('skipped: BENCH_FLOOR=skip')
  if (FLOOR_MODE !== 'existing') {
    const cargo = spawnSync('cargo', ['--version'], { encoding: 'utf8' })
    if (cargo.error || cargo.status !== 0) return unusable('skipped: cargo is not installed (the floor is a Rust example binary)')
    log('building the floor: cargo build --release --example spawn_floor -p dsh-shell-env-core')
    const build = spawnSync('cargo', ['build', '--release', '--example', 'spawn_floor', '-p', 'dsh-shell-env-core'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
    if (build.status !== 0) {
      const tail = (build.stderr ?? '').trim().split('\n').slice(-3).join(' / ')
      return unusable(`skipped: cargo build of the floor failed (${tail})`)
    }
  }
  if (!fs.existsSync(binary)) return unusable(`skipped: ${path.relative(ROOT, binary)} is not built (BENCH_FLOOR=${FLOOR_MODE})`)
  return {
    binary,
    note: null,
    /**
     * Runs `n` iterations inside the floor process, each one spawn, or `batch`
     * spawns from `threads` threads at once; its own per-iteration timings, in ms.
     */
    run: async (n, floorArgv, { batch = 1, threads = 1 } = {}) => {
      const options = batch > 1 ? ['--batch', String(batch), '--threads', String(threads)] : []
      const result = spawnSync(binary, [...options, String(n), ...floorArgv], { encoding: 'utf8' })
      if (result.status !== 0) throw new Error(`spawn_floor failed: ${result.stderr}`)
      return JSON.parse(result.stdout).samples_ns.map((ns) => ns / 1e6)
    },
    /**
     * The least any design with a waiting helper process costs from Node: a
     * function that orders one spawn and wait of `floorArgv` from the floor
     * binary serving on its stdio pipes (`--serve`), resolving at its answer.
     * One helper per program, started on first use, ended at the end of the run.
     */
    helper: (floorArgv) => {
      const key = floorArgv.join('\0')
      let helper = helpers.get(key)
      if (!helper) {
        const child = cpSpawn(binary, ['--serve', ...floorArgv], { stdio: ['pipe', 'pipe', 'inherit'] })
        const waiting = []
        child.stdout.on('data', (answers) => {
          for (let i = 0; i < answers.length; i++) waiting.shift()()
        })
        child.on('exit', (code, signal) => {
          if (waiting.length > 0) throw new Error(`spawn_floor --serve ended (${signal ?? code}) with orders unanswered`)
        })
        helper = Object.assign(
          () =>
            new Promise((answered) => {
              waiting.push(answered)
              child.stdin.write('x')
            }),
          { end: () => child.stdin.end() },
        )
        helpers.set(key, helper)
      }
      return helper
    },
  }
}
/** Helpers serving the floor, by program (see prepareFloor's `helper`); ended at EOF on their stdin. */
const helpers = new Map()

// ---------------------------------------------------------------------------
// Heap growth: ~1 GiB of live, distinct one-byte strings of 512 KiB each
// (large-object space: never moved by the GC, all of it resident).

const ballast = []
function growHeap(mib) {
  const chunk = 512 * 1024
  for (let i = 0; i < mib * 2; i++) {
    const bytes = Buffer.alloc(chunk, 0x61 + (i % 26))
    bytes.writeUInt32LE(i, 0)
    ballast.push(bytes.toString('latin1'))
  }
}

function heapInfo() {
  const usage = process.memoryUsage()
  return { rssMiB: usage.rss / MiB, heapUsedMiB: usage.heapUsed / MiB, externalMiB: usage.external / MiB }
}

// ---------------------------------------------------------------------------
// buildEnvironment() vs plain JS: the parent environment read and scrubbed.

/** Names a plain-JS harness would drop: a few credentials and the managed ones. */
const PLAIN_DROPPED = /^(DSH_|.*(TOKEN|SECRET|PASSWORD|_KEY)$)/i

function buildEnvironmentContenders(batch) {
  let kept
  return [
    {
      id: 'native',
      label: 'buildEnvironment({}): the default scrub of process.env, with sources and removals',
      fn: () => {
        for (let i = 0; i < batch; i++) kept = buildEnvironment({})
      },
    },
    {
      id: 'plain-js',
      label: '{ ...process.env } and delete a few names',
      fn: () => {
        for (let i = 0; i < batch; i++) {
          kept = { ...process.env }
          delete kept.GITHUB_TOKEN
          delete kept.NPM_TOKEN
          delete kept.AWS_SECRET_ACCESS_KEY
          delete kept.DSH_SESSION_ID
        }
      },
    },
    {
      id: 'plain-js-filter',
      label: 'process.env filtered by one name pattern into a new object',
      fn: () => {
        for (let i = 0; i < batch; i++) {
          kept = {}
          for (const [name, value] of Object.entries(process.env)) if (!PLAIN_DROPPED.test(name)) kept[name] = value
        }
      },
    },
  ]
}

// ---------------------------------------------------------------------------
// collect(): the native registry vs the plain-JS one, same contributors.

const PROFILE = { name: 'bench', dir: '/srv/dsh/profiles/bench' }
const EXECUTION = { agent: { session: { header: { id: 'session-bench-42' } } } }

function registries(count) {
  const native = new ShellEnvRegistry({ dshHome: '/srv/dsh', profile: PROFILE })
  const plain = new PlainShellEnvRegistry({ dshHome: '/srv/dsh', profile: PROFILE })
  // Registered in reverse name order, so the per-call sort has work to do.
  for (let index = count - 1; index >= 0; index--) {
    const name = `contributor-${String(index).padStart(3, '0')}`
    const prefix = `DSH_C${String(index).padStart(3, '0')}`
    const keys = [`${prefix}_REGION`, `${prefix}_ZONE`, `${prefix}_TIER`]
    const variables = Object.fromEntries(keys.map((key) => [key, { description: `${key} from ${name}` }]))
    // 3 declared, 2 returned; the same function object for both registries.
    const resolve = (execution) => ({ [keys[0]]: `region-${index}`, [keys[2]]: execution.agent ? 'agent' : 'user' })
    native.register({ name, variables, resolve })
    plain.register({ name, variables, resolve })
  }
  return { native, plain }
}

function assertSameSnapshot(native, plain) {
  assert.deepStrictEqual(Object.keys(native), Object.keys(plain), 'same keys in the same order')
  assert.deepStrictEqual({ ...native }, { ...plain }, 'same values')
  assert.equal(Object.isFrozen(native), true)
  assert.equal(Object.isFrozen(plain), true)
}

// ---------------------------------------------------------------------------
// 64 concurrent calls: one sample = one batch; per-call latencies kept apart.

function concurrentContenders(calls, floor) {
  const latencies = { execute: [], child_process: [] }
  const batch = (id, one) => async () => {
    await Promise.all(
      Array.from({ length: calls }, async () => {
        const started = performance.now()
        await one()
        latencies[id].push(performance.now() - started)
      }),
    )
  }
  const contenders = [
    {
      id: 'execute',
      label: `${calls} × execute({ command: ['/bin/true'] }) + result(), Promise.all`,
      fn: batch('execute', async () => {
        const result = await (await execute({ command: ['/bin/true'] })).result()
        if (result.exitCode !== 0) throw new Error(`execute: exit ${result.exitCode}`)
      }),
    },
    {
      id: 'child_process',
      label: `${calls} × child_process.spawn('/bin/true') + 'close', Promise.all`,
      fn: batch(
        'child_process',
        () =>
          new Promise((resolve, reject) => {
            const child = cpSpawn('/bin/true')
            child.on('error', reject)
            child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))))
          }),
      ),
    },
    floor.binary
      ? {
          id: 'floor-2-threads',
          label: `floor: ${calls} × posix_spawn('/bin/true') + waitpid, from 2 threads at once`,
          external: (n) => floor.run(n, ['/bin/true'], { batch: calls, threads: 2 }),
        }
      : { id: 'floor-2-threads', label: 'floor (skipped)', skipped: floor.note },
  ]
  return { contenders, latencies }
}

// ---------------------------------------------------------------------------
// Throughput: fresh Node processes, alternating contenders.

async function throughput({ rounds, bytes }) {
  const ids = ['execute', 'execute-nospill', 'child_process']
  const runs = Object.fromEntries(ids.map((id) => [id, []]))
  for (let round = 0; round < rounds; round++) {
    const offset = round % ids.length
    for (const id of [...ids.slice(offset), ...ids.slice(0, offset)]) {
      const child = spawnSync(process.execPath, ['--expose-gc', path.join(HERE, 'throughput-child.mjs'), id, String(bytes)], {
        cwd: ROOT,
        encoding: 'utf8',
        maxBuffer: 16 * MiB,
      })
      if (child.status !== 0) throw new Error(`throughput-child ${id} failed: ${child.stderr}`)
      runs[id].push(JSON.parse(child.stdout.trim().split('\n').pop()))
    }
  }
  return runs
}

// ---------------------------------------------------------------------------
// The published bash tool over both executors: one fresh process per heap shape.

const TOOL_BASH_SHAPES = [
  ['none', 'default heap'],
  ['strings', 'holding ~1 GiB of large strings'],
  ['objects', 'holding ~1 GiB of small objects'],
]

function toolBashRun(shape) {
  const { rounds, perRound } = SIZE.toolBash
  const child = spawnSync(
    process.execPath,
    ['--max-old-space-size=6144', path.join(HERE, 'tool-bash-child.mjs'), shape, String(SIZE.heapMiB), String(rounds), String(perRound)],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * MiB },
  )
  if (child.status !== 0) throw new Error(`tool-bash-child ${shape} failed: ${child.stderr}`)
  return JSON.parse(child.stdout.trim().split('\n').pop())
}

// ---------------------------------------------------------------------------
// ---------------------------------------------------------------------------
// The event loop: what commands cost the host's JS thread.

/** One /bin/true (or `echo hi` through bash) awaited to its end, per contender. */
const ONE_COMMAND = {
  execute: async (script) => {
    const result = await (await execute(script ? { command: script } : { command: ['/bin/true'] })).result()
    if (result.exitCode !== 0) throw new Error(`execute: exit ${result.exitCode}`)
  },
  child_process: (script) =>
    new Promise((resolve, reject) => {
      const child = script ? cpSpawn('bash', ['-c', script]) : cpSpawn('/bin/true')
      child.stdout?.resume()
      child.on('error', reject)
      child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`child_process: exit ${code}`))))
    }),
}

/** Milliseconds the event loop was busy per command, over `commands` awaited in a row. */
async function busyPerCommand(id, commands) {
  const start = performance.eventLoopUtilization()
  for (let i = 0; i < commands; i++) await ONE_COMMAND[id]()
  return performance.eventLoopUtilization(start).active / commands
}

/** The event loop's p99 delay (ms) while `agents` agents each run `perAgent` `echo hi` one after another. */
async function delayUnderAgents(id, agents, perAgent) {
  const histogram = monitorEventLoopDelay({ resolution: 1 })
  histogram.enable()
  await Promise.all(Array.from({ length: agents }, async () => {
    for (let i = 0; i < perAgent; i++) await ONE_COMMAND[id]('echo hi')
  }))
  histogram.disable()
  return histogram.percentile(99) / 1e6
}

/** Rows 12 at the current heap: busy time per command and the delay under agents, alternating contenders. */
async function eventLoopRows(phase, heapLabel) {
  const { reps, commands, agents, perAgent } = SIZE.eventLoop
  const contenders = [
    { id: 'execute', label: 'execute() + result()' },
    { id: 'child_process', label: "child_process.spawn + 'close'" },
  ]
  const busy = new Map(contenders.map((c) => [c.id, []]))
  const delay = new Map(contenders.map((c) => [c.id, []]))
  for (let rep = 0; rep < reps; rep++) {
    for (const { id } of rep % 2 ? [...contenders].reverse() : contenders) {
      busy.get(id).push(await busyPerCommand(id, commands))
      delay.get(id).push(await delayUnderAgents(id, agents, perAgent))
    }
  }
  const heap = { phase, ...heapInfo() }
  addRow({ id: `event-loop-busy/${phase}`, title: `Event-loop busy time per command, ${commands} awaited /bin/true in a row (ELU), ${heapLabel}`, heap, contenders, samples: busy })
  addRow({ id: `event-loop-delay/${phase}`, title: `Event-loop p99 delay while ${agents} agents each run ${perAgent} \`echo hi\` (monitorEventLoopDelay), ${heapLabel}`, heap, contenders, samples: delay })
}

// Rows and targets.

const rows = []

/** Adds a row of contenders with pooled samples; ratio is ours ÷ this (median time). */
function addRow({ id, title, heap, contenders, samples, unit = 'ms', extra = {} }) {
  const ours = stats(samples.get('execute') ?? samples.get('native'))
  const entries = contenders.map((contender) => {
    if (contender.skipped) return { id: contender.id, label: contender.label, skipped: contender.skipped }
    const s = stats(samples.get(contender.id))
    return {
      id: contender.id,
      label: contender.label,
      ...s,
      oursOverThis: ours.median / s.median,
      samples: samples.get(contender.id),
      ...(extra[contender.id] ?? {}),
    }
  })
  const row = { id, title, unit, heap, contenders: entries }
  rows.push(row)
  return row
}

/** Which build was measured: the commit, whether the tree had local edits, and the addon file. */
function packageState() {
  const git = (...args) => {
    const result = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' })
    return result.status === 0 ? result.stdout.trim() : null
  }
  const addon = fs.readdirSync(ROOT).find((file) => file.endsWith('.node'))
  const stat = addon ? fs.statSync(path.join(ROOT, addon)) : null
  return {
    commit: git('rev-parse', '--short', 'HEAD'),
    locallyModifiedFiles: git('status', '--porcelain', '--untracked-files=no')?.split('\n').filter(Boolean).length ?? null,
    addon: addon ? { file: addon, builtAt: stat.mtime.toISOString(), bytes: stat.size } : null,
  }
}

function packageVersion(name) {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version
}

function median(values) {
  return stats(values).median
}

// ---------------------------------------------------------------------------

async function main() {
  log(`${QUICK ? 'quick' : 'full'} run, writing ${OUTPUT}`)
  const floor = prepareFloor()
  if (floor.note) log(floor.note)

  // 1 and 2 at the default heap.
  for (const kind of ['true', 'bash']) {
    const contenders = spawnContenders(kind, floor)
    log(`row: ${kind === 'true' ? '/bin/true' : 'bash -c true'} at the default heap`)
    const heap = { phase: 'default', ...heapInfo() }
    const samples = await interleave(contenders.filter((c) => !c.skipped), SIZE.spawn)
    addRow({ id: `spawn-${kind}/default`, title: `Spawn and wait: ${kind === 'true' ? '/bin/true' : 'bash -c true'}, default heap`, heap, contenders, samples })
  }

  // 7. The scrub.
  {
    log('row: scrub cost')
    const contenders = scrubContenders()
    const samples = await interleave(contenders.filter((c) => !c.skipped), SIZE.spawn)
    addRow({
      id: 'scrub',
      title: 'What the default scrub costs: /bin/true, default heap',
      heap: { phase: 'default', ...heapInfo() },
      contenders,
      samples,
    })
  }

  // 8. This build beside a baseline build (default heap).
  if (BASELINE) {
    log(`rows: per-call cost beside ${BASELINE}`)
    const size = QUICK ? { rounds: 2, perRound: 3, batch: 5 } : { rounds: 30, perRound: 20, batch: 20 }
    for (const row of await baselineRows(BASELINE, size)) addRow({ ...row, heap: { phase: 'default', ...heapInfo() } })
  }

  // 3. collect()
  for (const count of [1, 10, 50]) {
    log(`row: collect() with ${count} contributor(s)`)
    const { native, plain } = registries(count)
    const expected = plain.collect(EXECUTION)
    assertSameSnapshot(native.collect(EXECUTION), expected)
    assert.equal(Object.keys(expected).length, 5 + 2 * count, 'built-ins plus 2 returned keys per contributor')
    const batch = SIZE.collect.batch[count]
    const contenders = [
      {
        id: 'native',
        label: `ShellEnvRegistry#collect(), ${count} contributor${count > 1 ? 's' : ''}`,
        fn: () => {
          for (let i = 0; i < batch; i++) native.collect(EXECUTION)
        },
      },
      {
        id: 'plain-js',
        label: 'plain-JS registry (sort per call, Object.entries, frozen sorted)',
        fn: () => {
          for (let i = 0; i < batch; i++) plain.collect(EXECUTION)
        },
      },
    ]
    const raw = await interleave(contenders, { rounds: SIZE.collect.rounds, perRound: SIZE.collect.perRound })
    // Per call: each sample timed `batch` calls.
    const perCall = new Map([...raw].map(([id, values]) => [id, values.map((ms) => ms / batch)]))
    addRow({
      id: `collect/${count}`,
      title: `collect(), ${count} contributor${count > 1 ? 's' : ''} (3 keys declared, 2 returned each); per call, ${batch} calls per sample`,
      heap: { phase: 'default', ...heapInfo() },
      contenders,
      samples: perCall,
    })
  }

  // 3b. collectAsync(): the resolvers answer at once, as most do.
  {
    const count = 10
    log(`row: collectAsync() with ${count} contributors`)
    const { native, plain } = registries(count)
    assertSameSnapshot(await native.collectAsync(EXECUTION), await plain.collectAsync(EXECUTION))
    const batch = SIZE.collect.batch[count]
    const contenders = [
      {
        id: 'native',
        label: `ShellEnvRegistry#collectAsync(), ${count} contributors`,
        fn: async () => {
          for (let i = 0; i < batch; i++) await native.collectAsync(EXECUTION)
        },
      },
      {
        id: 'plain-js',
        label: 'plain-JS registry, each answer awaited',
        fn: async () => {
          for (let i = 0; i < batch; i++) await plain.collectAsync(EXECUTION)
        },
      },
    ]
    const raw = await interleave(contenders, { rounds: SIZE.collect.rounds, perRound: SIZE.collect.perRound })
    const perCall = new Map([...raw].map(([id, values]) => [id, values.map((ms) => ms / batch)]))
    addRow({
      id: `collect-async/${count}`,
      title: `collectAsync(), ${count} contributors answering at once (3 keys declared, 2 returned each); per call, ${batch} calls per sample`,
      heap: { phase: 'default', ...heapInfo() },
      contenders,
      samples: perCall,
    })
  }

  // 3c. buildEnvironment() of the host's own process.env, beside what a harness
  // would write instead: a copy of process.env without a few names.
  {
    log('row: buildEnvironment() beside plain JS')
    const batch = SIZE.collect.batch[10]
    const contenders = buildEnvironmentContenders(batch)
    const raw = await interleave(contenders, { rounds: SIZE.collect.rounds, perRound: SIZE.collect.perRound })
    const perCall = new Map([...raw].map(([id, values]) => [id, values.map((ms) => ms / batch)]))
    addRow({
      id: 'build-environment',
      title: `buildEnvironment({}) of this process's own process.env (${Object.keys(process.env).length} variables); per call, ${batch} calls per sample`,
      heap: { phase: 'default', ...heapInfo() },
      contenders,
      samples: perCall,
    })
  }

  // 5. 64 concurrent calls (before the throughput children, still default heap).
  {
    const { calls } = SIZE.concurrent
    log(`row: ${calls} concurrent calls`)
    const { contenders, latencies } = concurrentContenders(calls, floor)
    const samples = await interleave(contenders.filter((c) => !c.skipped), {
      ...SIZE.concurrent,
      onMeasureStart: () => {
        latencies.execute.length = 0
        latencies.child_process.length = 0
      },
    })
    const extra = Object.fromEntries(
      Object.entries(latencies).map(([id, values]) => {
        const s = stats(values)
        return [id, { perCall: { n: s.n, median: s.median, p99: s.p99, max: s.max }, perCallSamples: values }]
      }),
    )
    const row = addRow({
      id: 'concurrent',
      title: `${calls} concurrent spawns of /bin/true: wall time per batch; per-call latency p99`,
      heap: { phase: 'default', ...heapInfo() },
      contenders,
      samples,
      extra,
    })
    // The floor times whole batches only: no per-call latency to compare.
    for (const entry of row.contenders) if (entry.perCall) entry.p99LatencyOursOverThis = extra.execute.perCall.p99 / entry.perCall.p99
  }

  // 4. Throughput, fresh processes.
  {
    const { rounds, bytes } = SIZE.throughput
    log(`row: ${bytes / MiB} MiB of stdout, ${rounds} fresh process(es) per contender`)
    const runs = await throughput(SIZE.throughput)
    const samples = new Map(Object.entries(runs).map(([id, list]) => [id, list.map((run) => run.ms)]))
    const labels = {
      execute: 'execute(), defaults (64 kB kept, spill ≤ 64 MiB then dropped)',
      'execute-nospill': 'execute(), spillMaxBytes: 0 (64 kB kept, no spill file)',
      child_process: "child_process.spawn, 'data' chunks counted and dropped",
    }
    const contenders = Object.keys(runs).map((id) => ({ id, label: labels[id] }))
    const extra = Object.fromEntries(
      Object.entries(runs).map(([id, list]) => {
        const growth = list.map((run) => run.rssGrowth)
        return [
          id,
          {
            mibPerSecond: bytes / MiB / (median(list.map((run) => run.ms)) / 1000),
            rssGrowthMiB: { median: median(growth) / MiB, max: Math.max(...growth) / MiB },
            rssMethod: list[0].method,
            runs: list,
          },
        ]
      }),
    )
    addRow({
      id: 'throughput',
      title: `${bytes / MiB} MiB on stdout (head -c N /dev/zero); each run in a fresh node process`,
      heap: { phase: 'fresh process per run' },
      contenders,
      samples,
      extra,
    })
  }

  // 6. The published bash tool, both executors, three heap shapes.
  for (const [shape, phase] of TOOL_BASH_SHAPES) {
    log(`row: a dsh-tool-bash call of true, ${phase}`)
    const run = toolBashRun(shape)
    const contenders = [
      { id: 'native', label: "dsh-tool-bash → @deepseek-ai/dsh-shell-env/bash-local (Rust spawner)" },
      { id: 'reference', label: 'dsh-tool-bash → @deepseek-ai/dsh-bash-local (child_process)' },
    ]
    const heap = { phase: shape === 'none' ? 'default' : `${shape} ballast, fresh process`, ...run.heap }
    const pick = (ids) => new Map(ids.map(([from, to]) => [to, run.samples[from]]))
    addRow({
      id: `tool-bash/${shape}`,
      title: `One bash tool call of \`true\` (ctx.tools.execute), ${phase} (rss ${run.heap.rssMiB.toFixed(0)} MiB)`,
      heap,
      contenders,
      samples: pick([['native', 'native'], ['reference', 'reference']]),
    })
    // 9. ctx.subprocess itself, and the sandboxing executor over each runtime.
    addRow({
      id: `subprocess/${shape}`,
      title: `ctx.subprocess.spawn() of /bin/true, output collected, awaited to close, ${phase}`,
      heap,
      contenders: [
        { id: 'native', label: '@deepseek-ai/dsh-shell-env/subprocess-local (Rust spawner)' },
        { id: 'reference', label: '@deepseek-ai/dsh-subprocess-local (child_process)' },
      ],
      samples: pick([['runtime-native', 'native'], ['runtime-reference', 'reference']]),
    })
    if (run.samples['sandbox-native']) {
      addRow({
        id: `tool-bash-sandbox/${shape}`,
        title: `One sandboxed (read-only, bubblewrap) bash tool call of \`true\`, dsh-bash-sandbox over each ctx.subprocess, ${phase}`,
        heap,
        contenders: [
          { id: 'native', label: 'dsh-bash-sandbox → @deepseek-ai/dsh-shell-env/subprocess-local' },
          { id: 'reference', label: 'dsh-bash-sandbox → @deepseek-ai/dsh-subprocess-local' },
        ],
        samples: pick([['sandbox-native', 'native'], ['sandbox-reference', 'reference']]),
      })
    }
  }

  // 10. A terminal session, start to first output (Linux: the native runtime's terminals need the supervisor).
  if (process.platform === 'linux') {
    log('row: a terminal session, start to first output')
    const { rounds, perRound } = SIZE.terminal
    const child = spawnSync(process.execPath, [path.join(HERE, 'terminal-child.mjs'), String(rounds), String(perRound)], {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 16 * MiB,
    })
    if (child.status !== 0) throw new Error(`terminal-child failed: ${child.stderr}`)
    const { samples } = JSON.parse(child.stdout.trim().split('\n').pop())
    addRow({
      id: 'terminal',
      title: 'A terminal session (ctx.subprocess.spawnTerminal() of /bin/sh), from the call to its first output, fresh process',
      heap: { phase: 'default, fresh process' },
      contenders: [
        { id: 'native', label: '@deepseek-ai/dsh-shell-env/subprocess-local (Rust: a pseudo-terminal under the supervisor)' },
        { id: 'reference', label: '@deepseek-ai/dsh-subprocess-local (node-pty)' },
      ],
      samples: new Map([['native', samples.native], ['reference', samples.reference]]),
    })
  }

  // 12. The event loop, default heap.
  log('rows: the event loop, default heap')
  await eventLoopRows('default', 'default heap')

  // 1, 2 and 12 again with ~1 GiB of live data in this process.
  {
    log(`growing this process by ${SIZE.heapMiB} MiB of live strings`)
    const before = heapInfo()
    const started = performance.now()
    growHeap(SIZE.heapMiB)
    const grown = heapInfo()
    log(`heap grown in ${(performance.now() - started).toFixed(0)} ms: rss ${before.rssMiB.toFixed(0)} → ${grown.rssMiB.toFixed(0)} MiB, heapUsed ${grown.heapUsedMiB.toFixed(0)} MiB`)
    for (const kind of ['true', 'bash']) {
      const contenders = spawnContenders(kind, floor)
      log(`row: ${kind === 'true' ? '/bin/true' : 'bash -c true'} at ${SIZE.heapMiB} MiB of live strings`)
      const heap = { phase: 'grown', ballastMiB: SIZE.heapMiB, ...heapInfo() }
      const samples = await interleave(contenders.filter((c) => !c.skipped), SIZE.spawnBig)
      addRow({
        id: `spawn-${kind}/grown`,
        title: `Spawn and wait: ${kind === 'true' ? '/bin/true' : 'bash -c true'}, heap grown by ${SIZE.heapMiB} MiB (rss ${heap.rssMiB.toFixed(0)} MiB)`,
        heap,
        contenders,
        samples,
      })
    }
    log(`rows: the event loop at ${SIZE.heapMiB} MiB of live strings`)
    await eventLoopRows('grown', `heap grown by ${SIZE.heapMiB} MiB`)
  }

  // 11. Limits, last: once a host has used a memory or process limit, its
  // supervisor prepares every reaper for them (see docs/performance.md),
  // which would weigh on every row measured after this one.
  if (process.platform !== 'win32') {
    log('row: limits cost')
    const contenders = limitContenders()
    const samples = await interleave(contenders, SIZE.spawn)
    addRow({ id: 'limits', title: 'What limits cost: /bin/true with every limit this host enforces, default heap', heap: { phase: 'default', ...heapInfo() }, contenders, samples })
  }

  // Targets.
  const pick = (rowId, contenderId) => rows.find((row) => row.id === rowId)?.contenders.find((c) => c.id === contenderId)
  const target = (name, rowId, contenderId, limit, value = pick(rowId, contenderId)?.oursOverThis) => ({
    name,
    row: rowId,
    against: contenderId,
    limit,
    value: value ?? null,
    met: value === undefined || value === null ? null : value <= limit,
  })
  /** A target on our own median (not a ratio): met when it is at most `limit`. */
  const absolute = (name, rowId, limit) => {
    const value = pick(rowId, 'execute')?.median ?? null
    return { name, row: rowId, against: null, unit: 'ms', limit, value, met: value === null ? null : value <= limit }
  }
  const throughputCp = pick('throughput', 'child_process')
  const throughputOurs = pick('throughput', 'execute')
  const supervisorRss = supervisorRssMiB()
  const targets = [
    target('spawn /bin/true, default heap: ≤ 0.5× child_process', 'spawn-true/default', 'child_process', 0.5),
    target('spawn /bin/true, ~1 GiB heap: ≤ 0.05× child_process', 'spawn-true/grown', 'child_process', 0.05),
    target('execute() of /bin/true, default heap: ≤ 1.15× the floor', 'spawn-true/default', 'rust-floor', 1.15),
    target('execute() of bash -c true, default heap: ≤ 1.1× the floor', 'spawn-bash/default', 'rust-floor', 1.1),
    target('64 concurrent /bin/true: ≤ 0.3× child_process wall time', 'concurrent', 'child_process', 0.3),
    target('64 concurrent /bin/true: ≤ 1.2× the floor from 2 threads', 'concurrent', 'floor-2-threads', 1.2),
    target('collect(), 1 contributor: ≤ 2× plain JS', 'collect/1', 'plain-js', 2),
    target('collect(), 10 contributors: ≤ 1.2× plain JS', 'collect/10', 'plain-js', 1.2),
    target('collect(), 50 contributors: ≤ 1.2× plain JS', 'collect/50', 'plain-js', 1.2),
    target('buildEnvironment() of process.env: ≤ 1.2× plain JS', 'build-environment', 'plain-js', 1.2),
    target('bash tool call, default heap: ≤ 0.7× dsh-bash-local', 'tool-bash/none', 'reference', 0.7),
    target('bash tool call, ~1 GiB of strings: ≤ 0.06× dsh-bash-local', 'tool-bash/strings', 'reference', 0.06),
    target('bash tool call, ~1 GiB of small objects: ≤ 0.3× dsh-bash-local', 'tool-bash/objects', 'reference', 0.3),
    target('ctx.subprocess spawn of /bin/true, default heap: ≤ 0.5× dsh-subprocess-local', 'subprocess/none', 'reference', 0.5),
    target('ctx.subprocess spawn of /bin/true, ~1 GiB of strings: ≤ 0.05× dsh-subprocess-local', 'subprocess/strings', 'reference', 0.05),
    target('sandboxed bash tool call, default heap: ≤ 0.8× over dsh-subprocess-local', 'tool-bash-sandbox/none', 'reference', 0.8),
    target('sandboxed bash tool call, ~1 GiB of strings: ≤ 0.1× over dsh-subprocess-local', 'tool-bash-sandbox/strings', 'reference', 0.1),
    target('terminal session, start to first output: ≤ 1.0× dsh-subprocess-local', 'terminal', 'reference', 1.0),
    target('spawn /bin/true with every limit: ≤ 1.05× without', 'limits', 'no-limits', 1.05),
    absolute('event-loop busy time per execute(), default heap: ≤ 0.1 ms', 'event-loop-busy/default', 0.1),
    absolute('event-loop busy time per execute(), ~1 GiB heap: ≤ 0.1 ms', 'event-loop-busy/grown', 0.1),
    absolute('event-loop p99 delay, 8 agents × 50 echo hi, default heap: ≤ 5 ms', 'event-loop-delay/default', 5),
    absolute('event-loop p99 delay, 8 agents × 50 echo hi, ~1 GiB heap: ≤ 5 ms', 'event-loop-delay/grown', 5),
    { ...target('the supervisor\'s RSS: ≤ 4 MiB', 'supervisor', 'rss', 4, supervisorRss), met: supervisorRss === null ? null : supervisorRss <= 4 },
    target('throughput: ≥ 1.0× child_process (time ratio ≤ 1.0)', 'throughput', 'child_process', 1.0),
    {
      ...target('throughput: RSS growth < 32 MiB (max over runs, defaults)', 'throughput', 'execute', 32, throughputOurs?.rssGrowthMiB.max),
      met: throughputOurs ? throughputOurs.rssGrowthMiB.max < 32 : null,
    },
  ]
  // What the least helper design reaches in the same rows: a target below
  // it is below what any design with a waiting helper can reach here.
  const modelOverFloor = (rowId) => {
    const model = pick(rowId, 'helper-model')?.median
    const floorMedian = pick(rowId, 'rust-floor')?.median
    return model && floorMedian ? model / floorMedian : null
  }
  const models = ['spawn-true/default', 'spawn-bash/default', 'spawn-true/grown', 'spawn-bash/grown'].map((row) => ({
    row,
    modelOverFloor: modelOverFloor(row),
  }))
  const rssTarget = targets.find((t) => t.name.startsWith('throughput: RSS'))
  if (throughputCp) rssTarget.childProcessRssGrowthMiB = throughputCp.rssGrowthMiB

  const cpu = os.cpus()
  const results = {
    date: startedAt.toISOString(),
    quick: QUICK,
    durationSeconds: (Date.now() - startedAt) / 1000,
    machine: {
      node: process.version,
      v8: process.versions.v8,
      platform: `${os.type()} ${os.release()} ${os.arch()}`,
      cpuModel: cpu[0]?.model ?? 'unknown',
      cores: cpu.length,
      totalMemoryMiB: Math.round(os.totalmem() / MiB),
      loadAverageAtStart,
      loadAverageAtEnd: os.loadavg(),
      processesAtStart,
      processesAtEnd: processCount(),
      heapLimitMiB: Math.round(v8.getHeapStatistics().heap_size_limit / MiB),
    },
    tools: { tinybench: packageVersion('tinybench'), execa: packageVersion('execa') },
    package: packageState(),
    method: {
      interleaving:
        'Each round runs every contender for perRound iterations (one tinybench Bench per contender and round, no per-Bench warmup), the order rotating each round; one whole warmup round is discarded. Medians over the pooled samples.',
      ratio: 'oursOverThis = median(ours) / median(this contender); below 1 means ours is faster.',
      floor: 'crates/core/examples/spawn_floor.rs, built with cargo --release: posix_spawn + waitpid called directly, each timed inside its own process (samples_ns), from one thread, or for the concurrent row a batch of 64 from two threads timed as one; run in the same rounds as the Node contenders.',
      model: 'The same binary serving (--serve): one byte written from this process to its stdin, one posix_spawn + waitpid, one byte back on its stdout, awaited as a libuv read. What a design with a waiting helper costs at least, with no environment, spec, output or containment.',
      heap: `After the default-heap rows, ${SIZE.heapMiB} MiB of distinct 512 KiB one-byte strings are kept referenced (run under --max-old-space-size=4096).`,
      throughput:
        'Each run is a fresh node process (bench/throughput-child.mjs) alternating contenders; time from the call to the result; RSS growth = VmHWM (peak, reset through /proc/self/clear_refs after a 1 MiB warmup) minus VmRSS before the run.',
      concurrent: 'One sample is one Promise.all batch; per-call latency is from the call to its result, pooled over all measured batches.',
      toolBash:
        'Each heap shape is a fresh node process (bench/tool-bash-child.mjs, --max-old-space-size=6144) holding two compositions of the published harness (system prompt, tool runtime, jobs, shell-env, tool-bash), one over each executor; the contenders are interleaved calls of ctx.tools.execute for `true` with an agent. strings: 512 KiB one-byte strings; objects: { id, next } objects in one array.',
    },
    sizes: SIZE,
    floor: floor.binary ? { binary: path.relative(ROOT, floor.binary) } : { skipped: floor.note },
    rows,
    targets,
    models,
  }
  fs.mkdirSync(path.dirname(OUTPUT), { recursive: true })
  fs.writeFileSync(OUTPUT, `${JSON.stringify(results, null, 1)}\n`)

  for (const helper of helpers.values()) helper.end()
  printTables(results)
  log(`done in ${results.durationSeconds.toFixed(0)} s; raw numbers in ${path.relative(process.cwd(), OUTPUT) || OUTPUT}`)
}

function entryCells(entry) {
  if (entry.skipped) return [entry.label, '—', '—', '—', entry.skipped]
  let note = ''
  if (entry.mibPerSecond !== undefined) {
    note = `${entry.mibPerSecond.toFixed(0)} MiB/s; RSS +${entry.rssGrowthMiB.median.toFixed(1)} MiB (max +${entry.rssGrowthMiB.max.toFixed(1)})`
  } else if (entry.perCall) {
    note = `per call: median ${formatMs(entry.perCall.median)}, p99 ${formatMs(entry.perCall.p99)}`
  }
  const ratio = entry.oursOverThis
  return [entry.label, formatMs(entry.median), formatMs(entry.p99), ratio === 1 ? '1.00' : `${ratio.toFixed(2)}×`, note]
}

const HEADER = ['contender', 'median', 'p99', 'ours ÷ this', 'notes']

function printTables(results) {
  const m = results.machine
  console.log(`\n@deepseek-ai/dsh-shell-env benchmark, ${results.date}${results.quick ? ' (QUICK: tiny workload, numbers meaningless)' : ''}`)
  console.log(`${m.cpuModel}, ${m.cores} cores, ${m.totalMemoryMiB} MiB RAM; ${m.platform}; Node ${m.node}`)
  if (results.package.commit) {
    const p = results.package
    console.log(`Package at ${p.commit}${p.locallyModifiedFiles ? ` + ${p.locallyModifiedFiles} locally modified files` : ''}; addon ${p.addon?.file ?? '?'} built ${p.addon?.builtAt ?? '?'}.`)
  }
  const load = (values) => values.map((value) => value.toFixed(2)).join(' ')
  console.log(`Load average at start ${load(m.loadAverageAtStart)}, at end ${load(m.loadAverageAtEnd)}; ${m.processesAtStart ?? '?'} processes at start, ${m.processesAtEnd ?? '?'} at end (other work on the machine shows here).`)
  console.log('Interleaved rounds, medians. "ours ÷ this" = median time of the package ÷ median time of that contender (< 1: the package is faster).')
  for (const row of results.rows) {
    console.log(`\n${row.title}`)
    console.log(table(HEADER, row.contenders.map(entryCells)))
  }
  console.log('\nTargets')
  console.log(
    table(
      ['target', 'measured', 'met'],
      results.targets.map((t) => [
        t.name,
        t.value === null ? '—' : t.name.includes('RSS') ? `${t.value.toFixed(1)} MiB` : t.unit === 'ms' ? formatMs(t.value) : `${t.value.toFixed(2)}×`,
        t.met === null ? 'n/a' : t.met ? 'yes' : 'NO',
      ]),
    ),
  )
  console.log('\nThe model (the floor in a waiting helper, ordered from this process) against the floor')
  console.log(
    table(
      ['row', 'model ÷ floor'],
      results.models.map((m) => [m.row, m.modelOverFloor === null ? '—' : `${m.modelOverFloor.toFixed(2)}×`]),
    ),
  )
  if (process.env.BENCH_MARKDOWN) {
    for (const row of results.rows) console.log(`\n**${row.title}**\n\n${markdownTable(HEADER, row.contenders.map(entryCells))}`)
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
