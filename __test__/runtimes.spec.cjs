'use strict'

// The runtimes the addon must keep working in. The addon is
// loaded in 8 worker threads at once, each registering, collecting (sync and
// async) and executing a real command; 4 more workers are terminated with an
// execution in flight, and their process groups must die with them. The whole
// scenario runs in a plain child `node` process that must then exit 0 on its
// own within a deadline (no timer or handle left alive) and leave no process
// behind; it also runs inside this test process (the runner's own worker),
// next to the main-thread instance of the addon.
//
// The same JS suite runs under Node 22 and 24 without rebuilding the addon:
// `npm run test:node-versions` (scripts/test-node-versions.sh), part of
// `npm test`. Under those runs, process.execPath below is that Node, so the
// child process scenario runs there too.
//
// Runs unchanged under `vitest run` and `jest`.

const fs = require('node:fs')
const path = require('node:path')

const { ROOT, FIXTURES, runNode, lastJsonLine } = require('./helpers.cjs')
const { delay, groupLeft, startWorker } = require('./process-helpers.cjs')
const { proc } = require('./platform.cjs')

const { ShellEnvRegistry } = require('..')

const WORKING = 8
const HANGING = 4
/** Generous: a 2-core CI machine running other suites at the same time. */
const DEADLINE_MS = 60_000

/** Pids of every process whose environment carries RT_MARKER=<marker>. */
function markedProcesses(marker) {
  const needle = Buffer.from(`\0RT_MARKER=${marker}\0`)
  const found = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let environ
    try {
      environ = fs.readFileSync(`/proc/${entry}/environ`)
    } catch {
      continue // gone, or not ours to read
    }
    if (Buffer.concat([Buffer.from([0]), environ]).includes(needle)) {
      let state = '?'
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
        state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
      } catch {}
      if (state !== 'Z') found.push(Number(entry)) // a zombie's environ is empty anyway
    }
  }
  return found
}

/** Polls until no process of these groups and none carrying the marker is left. */
async function expectAllGone(pgids, marker, timeoutMs = 20_000) {
  const end = Date.now() + timeoutMs
  let left
  for (;;) {
    left = { groups: pgids.filter(groupLeft), marked: markedProcesses(marker) }
    if (left.groups.length === 0 && left.marked.length === 0) return
    if (Date.now() > end) break
    await delay(25)
  }
  for (const pid of left.marked) {
    try {
      process.kill(pid, 'SIGKILL') // never leave one behind for the rest of the run
    } catch {}
  }
  throw new Error(`processes left behind: ${JSON.stringify(left)}`)
}

function expectWorked({ code, message }, index) {
  expect(message.error).toBeUndefined()
  expect(code).toBe(0)
  const home = path.resolve(`/tmp/dsh-rt-${index}`)
  const snapshot = { DSH_HOME: home, DSH_RT_WORKER: String(index), DSH_SESSION_ID: `rt-session-${index}`, DSH_SHELL: '1' }
  expect(message.index).toBe(index)
  expect(message.sync).toEqual(snapshot)
  expect(message.async).toEqual(snapshot)
  // Collected right before the spawn, with an async resolver on the worker's own thread.
  expect(message).toMatchObject({ exitCode: 0, stderr: '', stdout: `rt-session-${index}|${index}|${message.threadId}|${home}` })
}

function expectTerminated({ code, message }, index) {
  expect(message).toEqual({ index, pid: expect.any(Number), status: 'running' })
  expect(code).toBe(1) // the exit code of a terminated worker
}

// Survivors are found by their environment in /proc, their groups by kill(-pgid, 0).
proc.describe('worker threads', () => {
  it(`${WORKING} workers at once plus ${HANGING} terminated mid-execution, in a child node process that then exits 0 by itself`, async () => {
    const marker = `child-${process.pid}-${Date.now()}`
    const started = Date.now()
    const child = runNode([path.join(FIXTURES, 'rt-workers.cjs'), ROOT, marker, String(WORKING), String(HANGING)], {
      timeout: DEADLINE_MS,
    })
    const elapsed = Date.now() - started
    // Killed by the deadline: something (a timer, a handle, a thread) kept it alive.
    expect(child.signal).toBe(null)
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    expect(elapsed).toBeLessThan(DEADLINE_MS)

    const report = lastJsonLine(child.stdout)
    expect(report.work).toHaveLength(WORKING)
    report.work.forEach((result, index) => expectWorked(result, index))
    expect(new Set(report.work.map(({ message }) => message.threadId)).size).toBe(WORKING)
    expect(report.hang).toHaveLength(HANGING)
    report.hang.forEach((result, index) => expectTerminated(result, WORKING + index))
    // Seen from inside, before it exited: the groups were gone and no child was left.
    expect(report.groupsAlive).toEqual([])
    expect(report.children).toEqual([])
    expect(report.main).toEqual({ DSH_HOME: path.resolve('/tmp/dsh-rt-main'), DSH_SHELL: '1' })
    expect(report.last).toEqual({ exitCode: 0, stdout: 'main' })

    // Seen from outside, after it exited: nothing of any of its groups, and no
    // process carrying its marker (a grandchild reparented elsewhere included).
    const pgids = [...report.work, ...report.hang].map(({ message }) => message.pid)
    await expectAllGone(pgids, marker)
  }, DEADLINE_MS + 30_000)

  it(`the same inside this test process: ${WORKING} workers work, ${HANGING} terminated workers take their groups with them`, async () => {
    const marker = `in-process-${process.pid}-${Date.now()}`
    const entry = path.join(FIXTURES, 'rt-worker.cjs')
    // No terminate() for the working ones: they have to finish on their own.
    const start = (index, mode) => startWorker(entry, { root: ROOT, index, mode, marker })
    // The addon is also live on this thread while the workers run.
    const registry = new ShellEnvRegistry({ dshHome: '/tmp/dsh-rt-main' })
    const results = await Promise.all([
      ...Array.from({ length: WORKING }, (_, index) => start(index, 'work')),
      ...Array.from({ length: HANGING }, (_, index) => start(WORKING + index, 'hang')),
      registry.collectAsync({}),
    ])
    const snapshot = results.pop()
    expect(snapshot).toEqual({ DSH_HOME: path.resolve('/tmp/dsh-rt-main'), DSH_SHELL: '1' })
    results.slice(0, WORKING).forEach((result, index) => expectWorked(result, index))
    results.slice(WORKING).forEach((result, index) => expectTerminated(result, WORKING + index))
    await expectAllGone(
      results.map(({ message }) => message.pid),
      marker,
    )
    expect(registry.collect({})).toEqual(snapshot)
  }, DEADLINE_MS)
})
