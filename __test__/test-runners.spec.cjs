'use strict'

// What a test runner shows of a command a test leaves running. Jest's
// `--detectOpenHandles` names it with the stack of the `execute()` call, as
// it names a leaked `child_process`; under Vitest, whose workers end with
// each test file, the command ends with the worker, which says so in one line
// naming the test file's `execute()` call, and why-is-node-running (what
// Vitest's hanging-process reporter uses) lists it while it runs. A command
// let go of with `unref()` keeps neither runner waiting and is not
// reported. Real Jest and Vitest runs of open-command.fixture.cjs (in
// fixtures/jest-host) and open-command.fixture.mjs (in fixtures/test-runners),
// whose commands are Node scripts. Runs unchanged
// under `vitest run` and `jest`.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES } = require('./helpers.cjs')
const { commandGone, deadline } = require('./process-helpers.cjs')

const RUNNERS = path.join(FIXTURES, 'test-runners')
const JEST_HOST = path.join(FIXTURES, 'jest-host')
const JEST_FIXTURE = path.join(JEST_HOST, 'open-command.fixture.cjs')
const T = 60_000

/**
 * The environment of a nested run: this process's, without what the outer
 * runner set for its own workers, plus the fixture's settings.
 */
function nestedEnv(extra) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(JEST_|VITEST|NODE_OPTIONS$|FORCE_COLOR$)/.test(name)),
  )
  return { ...env, NO_COLOR: '1', DSH_TEST_ROOT: ROOT, ...extra }
}

/** Runs a runner's CLI to its end; resolves with `{ code, output }` (stdout and stderr together). */
async function runRunner(args, env) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk))
  const code = await deadline(
    new Promise((resolve) => child.on('exit', (exitCode) => resolve(exitCode))),
    T - 10_000,
    `${path.basename(args[0])} to exit`,
  ).catch((error) => {
    child.kill('SIGKILL')
    throw new Error(`${error.message}; it printed:\n${output}`)
  })
  return { code, output }
}

/** A scratch directory for one case's pid and report files, removed afterwards. */
async function withScratch(body) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-runners-'))
  try {
    await body(dir)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** A Jest run (in band) of the Jest fixture in `mode`, with `--detectOpenHandles`. */
function runJest(mode, dir, timeoutMs) {
  const jest = path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js')
  const args = [jest, '--config', path.join(JEST_HOST, 'jest.config.cjs'), '--detectOpenHandles', JEST_FIXTURE]
  const env = { DSH_TEST_MODE: mode, DSH_TEST_PID_FILE: path.join(dir, 'pid'), DSH_TEST_TIMEOUT_MS: String(timeoutMs) }
  return runRunner(args, nestedEnv(env))
}

/** A Vitest run of the Vitest fixture in `mode`; resolves with its exit and the why-is-node-running report. */
async function runVitest(mode, dir) {
  const vitest = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs')
  const args = [vitest, 'run', '--config', path.join(RUNNERS, 'vitest.config.mjs')]
  const report = path.join(dir, 'report')
  const env = { DSH_TEST_MODE: mode, DSH_TEST_PID_FILE: path.join(dir, 'pid'), DSH_TEST_REPORT_FILE: report, DSH_TEST_TIMEOUT_MS: '60000' }
  const run = await runRunner(args, nestedEnv(env))
  return { ...run, report: fs.readFileSync(report, 'utf8') }
}

/** Resolves once the command whose pid the fixture wrote is gone. */
const fixtureCommandGone = (dir) => commandGone(Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8')))

/** The fixture line holding the `execute(` call, as `file:line`. */
function executeCallSite(file) {
  const line = fs.readFileSync(file, 'utf8').split('\n').findIndex((text) => text.includes('await execute('))
  return `${path.basename(file)}:${line + 1}:`
}

describe('Jest --detectOpenHandles and a command left running', () => {
  it('names the command and the test line that started it', async () => {
    await withScratch(async (dir) => {
      // Jest waits for the open handle: the command's own timeout ends the run.
      const { code, output } = await runJest('running', dir, 3_000)
      expect(code).toBe(0)
      expect(output).toContain('Jest has detected the following 1 open handle potentially keeping Jest from exiting')
      expect(output).toContain('●  DshShellExecution')
      expect(output).toContain(executeCallSite(JEST_FIXTURE))
      await fixtureCommandGone(dir)
    })
  }, T)

  it('reports nothing for a command the test waited for', async () => {
    await withScratch(async (dir) => {
      const { code, output } = await runJest('awaited', dir, 500)
      expect(code).toBe(0)
      expect(output).toContain('1 passed')
      expect(output).not.toContain('open handle')
    })
  }, T)

  it('neither waits for nor reports an unref()ed command, which ends with the Jest process', async () => {
    await withScratch(async (dir) => {
      // Were it waited for, this run would outlast the case.
      const { code, output } = await runJest('unref', dir, 120_000)
      expect(code).toBe(0)
      expect(output).toContain('1 passed')
      expect(output).not.toContain('open handle')
      await fixtureCommandGone(dir)
    })
  }, T)
})

describe('Vitest and a command left running', () => {
  it('ends the command with the test file, saying so in one line with the test file’s execute() call, and why-is-node-running lists it with the file that started it', async () => {
    await withScratch(async (dir) => {
      const run = await runVitest('running', dir)
      // The whole run shows in the diff when it failed.
      expect(run).toMatchObject({ code: 0 })
      const entry = run.report.split('\n# ').find((section) => section.startsWith('DshShellExecution\n'))
      expect({ entry, report: run.report }).toMatchObject({ entry: expect.any(String) })
      // Vitest runs the module transformed: the file is named, its lines are
      // the transform's. (On Windows why-is-node-running leaves out frames of
      // file URLs, which hold no backslash: only the package's execute() frame is shown.)
      const fixtureFrame = `${path.basename(RUNNERS)}/open-command.fixture.mjs:`
      expect(entry).toContain(path.sep === '/' ? fixtureFrame : `${path.join(ROOT, 'lib', 'execute.js')}:`)
      // The worker's end (SIGTERM to its fork) says which command it ended and
      // where the test started it. On Windows that end is TerminateProcess,
      // which runs no JavaScript.
      if (process.platform !== 'win32') {
        const pid = fs.readFileSync(path.join(dir, 'pid'), 'utf8')
        const said = run.output.split('\n').filter((line) => line.startsWith('dsh-shell-env: command still running at exit'))
        expect(said).toEqual([expect.stringContaining(`(pid ${pid}), started at `)])
        expect(said[0]).toContain(`${path.join(RUNNERS, 'open-command.fixture.mjs')}:`)
      }
      await fixtureCommandGone(dir)
    })
  }, T)

  it('leaves an unref()ed command out of the report', async () => {
    await withScratch(async (dir) => {
      const { code, report, output } = await runVitest('unref', dir)
      expect(code).toBe(0)
      expect(report).toContain('handle(s) keeping the process running')
      expect(report).not.toContain('# DshShellExecution')
      expect(output).not.toContain('dsh-shell-env: command still running at exit')
      await fixtureCommandGone(dir)
    })
  }, T)
})
