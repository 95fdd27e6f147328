'use strict'

// A host stopped by SIGINT, SIGTERM or SIGHUP while commands run: the
// commands' groups end with it (they are not in the host's process group, so
// a terminal's Ctrl-C never reaches them). Each case runs a real host process
// (fixtures/host-signal.cjs) and signals it from here. Runs unchanged under
// `vitest run` and `jest`.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES } = require('./helpers.cjs')
const { groupGone, deadline, waitFor } = require('./process-helpers.cjs')
const { proc } = require('./platform.cjs')

const T = 30_000
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP']
/**
 * A Jest run of one fixture file from fixtures/jest-host, whose environment
 * names the package root and adds `env`; `exited` resolves with its exit code
 * and signal, `report()` is what Jest printed to stderr so far.
 */
function runJest(fixture, env = {}) {
  const jest = spawn(
    process.execPath,
    [
      path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
      '--config',
      path.join(FIXTURES, 'jest-host', 'jest.config.cjs'),
      '--runInBand',
      fixture,
    ],
    { env: { ...process.env, DSH_TEST_ROOT: ROOT, ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
  )
  let stderr = ''
  jest.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  const exited = new Promise((resolve) => jest.on('exit', (code, signal) => resolve({ code, signal })))
  return { jest, exited, report: () => stderr }
}

/**
 * Runs `body` with a fixture host started in `mode`: its first JSON line
 * (`report`), `exit()` (resolves with its exit code and signal) and `output()`.
 * The host is killed and any spill directory removed afterwards.
 */
async function withHost(mode, body) {
  const host = spawn(process.execPath, [path.join(FIXTURES, 'host-signal.cjs'), mode, ROOT], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  host.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  host.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  const exited = new Promise((resolve) => host.on('exit', (code, signal) => resolve({ code, signal })))
  let report = {}
  try {
    await waitFor(() => {
      if (host.exitCode !== null || host.signalCode !== null) throw new Error(`the host ended early: ${stderr}`)
      return stdout.includes('\n')
    }, 'the host to report')
    report = JSON.parse(stdout.split('\n')[0])
    const exit = () => deadline(exited, 10_000, 'the host to exit')
    await body({ host, report, exit, output: () => ({ stdout, stderr }) })
  } finally {
    host.kill('SIGKILL')
    // A failed case may have left it.
    if (typeof report.spillPath === 'string') fs.rmSync(path.dirname(report.spillPath), { recursive: true, force: true })
  }
}

// POSIX signals to the host, and the groups' ends read from /proc (groupGone).
proc.describe('a host stopped by a signal ends its commands', () => {
  it.each(SIGNALS)('%s: the groups end, the spill files go, and the host dies of the signal', async (signal) => {
    await withHost('plain', async ({ host, report, exit }) => {
      expect(report.listeners).toEqual({ SIGINT: 1, SIGTERM: 1, SIGHUP: 1 })
      expect(fs.existsSync(report.spillPath)).toBe(true)
      host.kill(signal)
      // Exactly what the host would have done without the package.
      expect(await exit()).toEqual({ code: null, signal })
      expect(report.pids).toHaveLength(1)
      await groupGone(report.pids[0])
      expect(fs.existsSync(path.dirname(report.spillPath))).toBe(false)
    })
  }, T)

  it("works with the package loaded twice in one process: each copy's commands end", async () => {
    await withHost('two-copies', async ({ host, report, exit }) => {
      expect(report.listeners).toEqual({ SIGINT: 2, SIGTERM: 2, SIGHUP: 2 })
      expect(report.pids).toHaveLength(2)
      host.kill('SIGTERM')
      expect(await exit()).toEqual({ code: null, signal: 'SIGTERM' })
      for (const pid of report.pids) await groupGone(pid)
    })
  }, T)

  it.each([
    ['process.on', 'handled', 'SIGINT'],
    ['process.once', 'once', 'SIGTERM'],
  ])("leaves a signal to the host's own %s listener, and the host's exit still ends the group", async (_title, mode, signal) => {
    await withHost(mode, async ({ host, report, exit, output }) => {
      expect(report.listeners).toEqual({ SIGINT: 2, SIGTERM: 2, SIGHUP: 2 })
      host.kill(signal)
      expect(await exit()).toEqual({ code: 0, signal: null })
      // The command still ran when the host's listener looked.
      expect(output().stdout).toContain(`{"handled":"${signal}","status":"running"}`)
      await groupGone(report.pids[0])
    })
  }, T)

  it('works next to signal-exit: the group ends, its exit handlers run, and the host dies of the signal', async () => {
    await withHost('signal-exit', async ({ host, report, exit, output }) => {
      host.kill('SIGINT')
      expect(await exit()).toEqual({ code: null, signal: 'SIGINT' })
      expect(output().stdout).toContain('{"exitHandler":"SIGINT"}')
      await groupGone(report.pids[0])
    })
  }, T)

  it("works inside a Jest test file, whose `process` is a copy that hears no signals", async () => {
    const pidFile = path.join(os.tmpdir(), `dsh-host-signals-jest-${process.pid}.pid`)
    fs.rmSync(pidFile, { force: true })
    const { jest, exited } = runJest('signal.fixture', { DSH_TEST_PID_FILE: pidFile })
    let pid = null
    try {
      pid = await waitFor(() => fs.existsSync(pidFile) && Number(fs.readFileSync(pidFile, 'utf8')), 'the Jest test to start its command', 20_000)
      jest.kill('SIGTERM')
      expect(await deadline(exited, 10_000, 'Jest to exit')).toEqual({ code: null, signal: 'SIGTERM' })
      await groupGone(pid)
    } finally {
      jest.kill('SIGKILL')
      fs.rmSync(pidFile, { force: true })
    }
  }, T)

  it("keeps `done` working under a Jest test file's fake timers, legacy ones included", async () => {
    const { jest, exited, report } = runJest('fake-timers.fixture')
    try {
      expect({ ...(await deadline(exited, 25_000, 'Jest to finish')), report: report() }).toMatchObject({ code: 0, signal: null })
      expect(report()).toContain('2 passed')
    } finally {
      jest.kill('SIGKILL')
    }
  }, T)

  it('stops listening once no command runs', async () => {
    await withHost('idle', async ({ host, report, exit }) => {
      expect(report.listeners).toEqual({ SIGINT: 0, SIGTERM: 0, SIGHUP: 0 })
      host.kill('SIGTERM')
      expect(await exit()).toEqual({ code: null, signal: 'SIGTERM' })
    })
  }, T)
})
