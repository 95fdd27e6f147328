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

const T = 30_000
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP']
/** A Jest run of one fixture file from fixtures/jest-host (append its name). */
const JEST_HOST = [
  path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
  '--config',
  path.join(FIXTURES, 'jest-host', 'jest.config.cjs'),
  '--runInBand',
]

/** Starts the fixture host; resolves with its first JSON line and a promise of its exit. */
async function startHost(mode) {
  const host = spawn(process.execPath, [path.join(FIXTURES, 'host-signal.cjs'), mode, ROOT], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  host.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  host.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
  const exited = new Promise((resolve) => host.on('exit', (code, signal) => resolve({ code, signal })))
  const report = await deadline(
    (async () => {
      while (!stdout.includes('\n')) {
        if (host.exitCode !== null || host.signalCode !== null) throw new Error(`the host ended early: ${stderr}`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      return JSON.parse(stdout.split('\n')[0])
    })(),
    15_000,
    'the host to report',
  )
  return { host, report, exited, output: () => ({ stdout, stderr }) }
}

/** Removes a spill directory a failed case may have left. */
function removeSpillDir(spillPath) {
  if (typeof spillPath === 'string') fs.rmSync(path.dirname(spillPath), { recursive: true, force: true })
}

describe('a host stopped by a signal ends its commands (README: Process behaviour)', () => {
  it.each(SIGNALS)('%s: the groups end, the spill files go, and the host dies of the signal', async (signal) => {
    const { host, report, exited } = await startHost('plain')
    try {
      expect(report.listeners).toEqual({ SIGINT: 1, SIGTERM: 1, SIGHUP: 1 })
      expect(fs.existsSync(report.spillPath)).toBe(true)
      host.kill(signal)
      // Exactly what the host would have done without the package.
      expect(await deadline(exited, 10_000, 'the host to exit')).toEqual({ code: null, signal })
      expect(report.pids).toHaveLength(1)
      await groupGone(report.pids[0])
      expect(fs.existsSync(path.dirname(report.spillPath))).toBe(false)
    } finally {
      host.kill('SIGKILL')
      removeSpillDir(report.spillPath)
    }
  }, T)

  it("works with the package loaded twice in one process: each copy's commands end", async () => {
    const { host, report, exited } = await startHost('two-copies')
    try {
      expect(report.listeners).toEqual({ SIGINT: 2, SIGTERM: 2, SIGHUP: 2 })
      expect(report.pids).toHaveLength(2)
      host.kill('SIGTERM')
      expect(await deadline(exited, 10_000, 'the host to exit')).toEqual({ code: null, signal: 'SIGTERM' })
      for (const pid of report.pids) await groupGone(pid)
    } finally {
      host.kill('SIGKILL')
      removeSpillDir(report.spillPath)
    }
  }, T)

  it.each([
    ['process.on', 'handled', 'SIGINT'],
    ['process.once', 'once', 'SIGTERM'],
  ])("leaves a signal to the host's own %s listener, and the host's exit still ends the group", async (_title, mode, signal) => {
    const { host, report, exited, output } = await startHost(mode)
    try {
      expect(report.listeners).toEqual({ SIGINT: 2, SIGTERM: 2, SIGHUP: 2 })
      host.kill(signal)
      expect(await deadline(exited, 10_000, 'the host to exit')).toEqual({ code: 0, signal: null })
      // The command still ran when the host's listener looked.
      expect(output().stdout).toContain(`{"handled":"${signal}","status":"running"}`)
      await groupGone(report.pids[0])
    } finally {
      host.kill('SIGKILL')
      removeSpillDir(report.spillPath)
    }
  }, T)

  it('works next to signal-exit: the group ends, its exit handlers run, and the host dies of the signal', async () => {
    const { host, report, exited, output } = await startHost('signal-exit')
    try {
      host.kill('SIGINT')
      expect(await deadline(exited, 10_000, 'the host to exit')).toEqual({ code: null, signal: 'SIGINT' })
      expect(output().stdout).toContain('{"exitHandler":"SIGINT"}')
      await groupGone(report.pids[0])
    } finally {
      host.kill('SIGKILL')
      removeSpillDir(report.spillPath)
    }
  }, T)

  it("works inside a Jest test file, whose `process` is a copy that hears no signals", async () => {
    const pidFile = path.join(os.tmpdir(), `dsh-host-signals-jest-${process.pid}.pid`)
    fs.rmSync(pidFile, { force: true })
    const jest = spawn(process.execPath, [...JEST_HOST, 'signal.fixture'], {
      env: { ...process.env, DSH_TEST_ROOT: ROOT, DSH_TEST_PID_FILE: pidFile },
      stdio: 'ignore',
    })
    const exited = new Promise((resolve) => jest.on('exit', (code, signal) => resolve({ code, signal })))
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
    const jest = spawn(process.execPath, [...JEST_HOST, 'fake-timers.fixture'], {
      env: { ...process.env, DSH_TEST_ROOT: ROOT },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let report = ''
    jest.stderr.setEncoding('utf8').on('data', (chunk) => (report += chunk))
    const exited = new Promise((resolve) => jest.on('exit', (code, signal) => resolve({ code, signal })))
    try {
      expect({ ...(await deadline(exited, 25_000, 'Jest to finish')), report }).toMatchObject({ code: 0, signal: null })
      expect(report).toContain('2 passed')
    } finally {
      jest.kill('SIGKILL')
    }
  }, T)

  it('stops listening once no command runs', async () => {
    const { host, report, exited } = await startHost('idle')
    try {
      expect(report.listeners).toEqual({ SIGINT: 0, SIGTERM: 0, SIGHUP: 0 })
      host.kill('SIGTERM')
      expect(await deadline(exited, 10_000, 'the host to exit')).toEqual({ code: null, signal: 'SIGTERM' })
    } finally {
      host.kill('SIGKILL')
      // No command ran, so nothing removed it (README: Process behaviour).
      removeSpillDir(report.spillPath)
    }
  }, T)
})
