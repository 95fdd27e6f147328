'use strict'

// What a command of the host's own user can do to the package's helpers
// (docs/process.md), with the host running as an unprivileged uid of its own
// (setpriv, when the suite runs as root), so that its command reaches
// nothing but its own helpers, and in the sweep tier (such a host cannot
// write a cgroup):
// - it can signal every process of its user, the supervisor and the reapers
//   among them. The host never waits on them without a deadline: stopped
//   helpers are continued, dead ones replaced, and the host's next command
//   starts within a second while its timers keep running and its SIGTERM
//   listener keeps working;
// - it can start descendants that hop from session to session faster than a
//   sweep looks: they are all gone within 2 s of the grace, under load.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES } = require('./helpers.cjs')
const { waitFor } = require('./process-helpers.cjs')
const { gate, LINUX } = require('./platform.cjs')

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((file) => fs.existsSync(file))
const ADDON = fs.readdirSync(ROOT).find((name) => name.endsWith('.node'))
/**
 * Uids no account and no other run uses (one per test, from this process's
 * pid: the suite may run under several Node versions at once), so that a
 * command's signals reach only its own host's helpers.
 */
const UIDS = { stopper: 200_000 + process.pid * 2, hoppers: 200_000 + process.pid * 2 + 1 }

const ownUser = gate(
  LINUX && process.getuid?.() === 0 && SETPRIV !== undefined && ADDON !== undefined && fs.existsSync(path.join(ROOT, 'dsh-shell-env-supervisor')),
  'Linux, the supervisor, root and setpriv (the host runs as a uid of its own)',
)

/** The pids of every process of `uid`, from /proc/<pid>/status (readable for non-dumpable ones too). */
function processesOf(uid) {
  const pids = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const status = fs.readFileSync(`/proc/${entry}/status`, 'utf8')
      if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) === uid) pids.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

ownUser.describe('a command that signals every process of its user', () => {
  let dir
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-helper-liveness-'))
    fs.chmodSync(dir, 0o755)
    for (const [name, from] of [
      ['binding.js', ROOT],
      [ADDON, ROOT],
      ['dsh-shell-env-supervisor', ROOT],
      ['helper-stopper.cjs', FIXTURES],
      ['hopper-host.cjs', FIXTURES],
    ]) {
      fs.copyFileSync(path.join(from, name), path.join(dir, name))
      fs.chmodSync(path.join(dir, name), 0o755)
    }
    fs.mkdirSync(path.join(dir, 'scratch'))
    fs.chmodSync(path.join(dir, 'scratch'), 0o777)
  })
  afterAll(() => {
    for (const pid of [...processesOf(UIDS.stopper), ...processesOf(UIDS.hoppers)]) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
    fs.rmSync(dir, { recursive: true, force: true })
  })

  /** Starts fixture `name` as the host, as `uid`: the child, what it printed so far, and its exit. */
  function startHost(name, uid) {
    const child = spawn(
      SETPRIV,
      [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', process.execPath, path.join(dir, name), path.join(dir, 'binding.js'), path.join(dir, 'scratch')],
      { cwd: dir, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    const printed = { out: '', err: '' }
    child.stdout.on('data', (chunk) => {
      printed.out += chunk
    })
    child.stderr.on('data', (chunk) => {
      printed.err += chunk
    })
    const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })))
    return { child, printed, exited }
  }

  /** Runs fixture `name` as the host, as `uid`, to its end (SIGKILLed after `timeout`); its exit and output. */
  async function host(name, uid, { timeout }) {
    const { child, printed, exited } = startHost(name, uid)
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout)
    const { code, signal } = await exited
    clearTimeout(timer)
    return { code, signal, ...printed }
  }

  it('120 setsid pid-hoppers under a timeout, three runs with both cores busy: every chain is gone within 2 s of the grace', async () => {
    // Two busy loops, one per core of the machine the suite is sized for.
    const load = [0, 1].map(() => spawn('/bin/sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }))
    let report
    try {
      report = await host('hopper-host.cjs', UIDS.hoppers, { timeout: 90_000 })
    } finally {
      for (const busy of load) busy.kill('SIGKILL')
    }
    expect({ code: report.code, signal: report.signal, err: report.err }).toEqual({ code: 0, signal: null, err: '' })
    const runs = report.out.trim().split('\n').map((line) => JSON.parse(line))
    expect(runs).toHaveLength(3)
    for (const run of runs) {
      expect(run).toEqual({ run: run.run, timedOut: true, afterGraceMs: expect.any(Number), hopped: expect.any(Number), hoppedAfter: 0 })
      expect(run.hopped).toBeGreaterThanOrEqual(240)
    }
    // Each run whole when it took longer: how long after the grace its result came.
    expect(runs.filter((run) => run.afterGraceMs >= 2000)).toEqual([])
  }, 120_000)

  it('stopping and then killing the supervisor and every reaper: the next command, with and without a registry, completes within 1 s, the timers run, and SIGTERM ends the host', async () => {
    const { child: host, printed, exited } = startHost('helper-stopper.cjs', UIDS.stopper)
    try {
      await waitFor(() => printed.out.includes('"waiting"') || host.exitCode !== null, 'the host to go through both steps', 30_000)
      const steps = printed.out.trim().split('\n').map((line) => JSON.parse(line))
      expect(printed.err).toBe('')
      expect(steps.map((s) => s.step)).toEqual(['stopped', 'killed', 'waiting'])
      // The supervisor, the command's own reaper and those on standby at least.
      expect(steps[0].reached).toBeGreaterThanOrEqual(3)
      // The reapers on standby and the stopped command's reaper, then the supervisor: the command ended with it.
      expect(steps[1].interrupted).toBe('ERR_SHELL_EXEC_SUPERVISOR_LOST')
      expect(steps[1].reached).toBeGreaterThanOrEqual(2)
      for (const { step, plain, withRegistry, lateMs } of steps.slice(0, 2)) {
        expect({ step, plain, withRegistry }).toEqual({
          step,
          plain: { ms: expect.any(Number), exitCode: 0, stdout: 'next\n' },
          withRegistry: { ms: expect.any(Number), exitCode: 0, stdout: 'next\n' },
        })
        expect(lateMs).toEqual(expect.any(Number))
      }
      // Each step whole when it took a second or more: the next commands, and how late the host's 10 ms timer ran.
      const slow = steps.slice(0, 2).filter((s) => s.plain.ms >= 1000 || s.withRegistry.ms >= 1000 || s.lateMs >= 1000)
      expect(slow).toEqual([])
      host.kill('SIGTERM')
      let timer
      const ended = await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(() => resolve('still running'), 10_000)))])
      clearTimeout(timer)
      expect(ended).toEqual({ code: 143, signal: null })
    } finally {
      host.kill('SIGKILL')
    }
  }, 60_000)
})
