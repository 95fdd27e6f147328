'use strict'

// How a running command holds its host's event loop, and what async_hooks see
// of it. Like a `child_process` child, a running command keeps the host alive
// until it ends; `unref()` lets the host exit meanwhile (the command then ends
// with the host), `ref()` undoes that. Each command is an async resource of
// type `DshShellExecution`, made where `execute()` was called, active
// (`hasRef()`) while it runs and holds the loop, destroyed when it ends: what
// open-handle reports read. Real commands (Node scripts, the same on every
// platform) and real host processes. Runs unchanged under `vitest run` and
// `jest`.

const { createHook } = require('node:async_hooks')
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const { ROOT, FIXTURES, runNode } = require('./helpers.cjs')
const { nodeArgv, signals } = require('./platform.cjs')
const { commandGone, untilOutput, waitFor } = require('./process-helpers.cjs')

const { execute } = require('..')

const T = 30_000
const HOST = path.join(FIXTURES, 'event-loop-host.cjs')

/** Records the `DshShellExecution` resources made while it is enabled: `{ asyncId, resource, stack, destroyed }`. */
function watchResources() {
  const seen = new Map()
  const hook = createHook({
    init(asyncId, type, _trigger, resource) {
      if (type === 'DshShellExecution') seen.set(asyncId, { asyncId, resource, stack: new Error().stack, destroyed: false })
    },
    destroy(asyncId) {
      const entry = seen.get(asyncId)
      if (entry) entry.destroyed = true
    },
  }).enable()
  return { seen: () => [...seen.values()], disable: () => hook.disable() }
}

describe('a running command and the host event loop', () => {
  it('keeps a plain Node host alive until it ends', async () => {
    const { status, stdout } = runNode([HOST, 'reref', ROOT])
    expect(status).toBe(0)
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line))
    expect(lines).toEqual([{ pid: expect.any(Number) }, { result: 'finished' }])
  }, T)

  it('lets the host exit once unref()ed, and ends with the host', async () => {
    // The command sleeps far longer than runNode waits.
    const { status, signal, stdout } = runNode([HOST, 'unref', ROOT], { timeout: 20_000 })
    expect({ status, signal }).toEqual({ status: 0, signal: null })
    const [{ pid }, ...rest] = stdout.trim().split('\n').map((line) => JSON.parse(line))
    expect(rest).toEqual([])
    await commandGone(pid)
  }, T)
})

/** `file:line:` of the fixture's `execute(` call for the hosts that go while it runs. */
function leaveCallSite() {
  const line = fs.readFileSync(HOST, 'utf8').split('\n').findIndex((text) => text.includes('const run = await execute({ command: [process.execPath, \'-e\', script, argument] })'))
  return `${HOST}:${line + 1}:`
}

/** What tells the package to keep call sites (a test runner, DEBUG), removed from a host's environment. */
const NO_CALL_SITES = { VITEST: undefined, JEST_WORKER_ID: undefined, NODE_TEST_CONTEXT: undefined, DEBUG: undefined }

/**
 * Checks `stderr` is the one line the host's exit prints for its running
 * command `pid`: with the `execute()` call's line when the host kept call
 * sites, else how to have it.
 */
function expectExitReport(stderr, pid, { callSite = true } = {}) {
  const lines = stderr.split('\n')
  expect(lines).toHaveLength(2)
  expect(lines[1]).toBe('')
  expect(lines[0].startsWith('dsh-shell-env: command still running at exit, ended with the host: ')).toBe(true)
  const where = callSite ? `, started at ${leaveCallSite()}` : '; DEBUG=dsh-shell-env says where it was started ('
  // The command as the report shows it: cut to 120 characters (Node's path may be long).
  const quoted = (arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg))
  const command = `${quoted(process.execPath)} -e "setTimeout(() => {}, 300_000)" "a long command"`
  const shown = command.length > 120 ? `${command.slice(0, 119)}…` : command
  expect(lines[0]).toContain(`: ${shown} (pid ${pid})${where}`)
  expect(lines[0].endsWith(' (await its result(), kill() it, or unref() it)')).toBe(true)
}

describe('a host that goes while a command runs', () => {
  it('says so in one line on stderr, naming the command, its pid and, under a test runner or DEBUG=dsh-shell-env, the line of the execute() call', async () => {
    for (const [env, callSite] of [[{ ...NO_CALL_SITES, DEBUG: 'dsh-shell-env' }, true], [{ ...NO_CALL_SITES, VITEST: 'true' }, true], [{ ...NO_CALL_SITES, JEST_WORKER_ID: '1' }, true], [NO_CALL_SITES, false]]) {
      const { status, stdout, stderr } = runNode([HOST, 'exit', ROOT], { env })
      expect(status).toBe(0)
      const { pid } = JSON.parse(stdout.trim().split('\n')[0])
      expectExitReport(stderr, pid, { callSite })
      await commandGone(pid)
    }
  }, T)

  it('masks a command that carries a credential, as the command line masks a value', async () => {
    const { status, stdout, stderr } = runNode([HOST, 'secret-exit', ROOT], { env: NO_CALL_SITES })
    expect(status).toBe(0)
    const { pid } = JSON.parse(stdout.trim().split('\n')[0])
    expect(stderr).toContain(`ended with the host: <masked> (pid ${pid});`)
    expect(stderr).not.toContain('ghp_')
    await commandGone(pid)
  }, T)

  it('says nothing of an unref()ed command, or of one that ended', async () => {
    for (const mode of ['unref-exit', 'ended-exit']) {
      const { status, stdout, stderr } = runNode([HOST, mode, ROOT])
      expect({ mode, status, stderr }).toEqual({ mode, status: 0, stderr: '' })
      await commandGone(JSON.parse(stdout.trim().split('\n')[0]).pid)
    }
  }, T)

  signals.it('says so when SIGTERM ends the host, as a test runner ends its worker process', async () => {
    const env = { ...process.env, ...NO_CALL_SITES, DEBUG: 'dsh-shell-env' }
    const host = spawn(process.execPath, [HOST, 'wait', ROOT], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    host.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
    host.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk))
    const closed = new Promise((resolve) => host.on('close', (code, signal) => resolve({ code, signal })))
    await waitFor(() => stdout.includes('\n'), 'the host to start its command')
    const { pid } = JSON.parse(stdout.split('\n')[0])
    host.kill('SIGTERM')
    expect(await closed).toEqual({ code: null, signal: 'SIGTERM' })
    expectExitReport(stderr, pid)
    await commandGone(pid)
  }, T)
})

describe('hasRef(), ref() and unref()', () => {
  it('hasRef() is true while the command runs, false once unref()ed or ended', async () => {
    const run = await execute({ command: nodeArgv("console.log('started'); setTimeout(() => {}, 300)") })
    expect(run.hasRef()).toBe(true)
    expect(run.unref()).toBe(run)
    expect(run.hasRef()).toBe(false)
    expect(run.ref()).toBe(run)
    expect(run.hasRef()).toBe(true)
    await untilOutput(run, 'started')
    expect((await run.result()).exitCode).toBe(0)
    expect(run.hasRef()).toBe(false)
    // After the end both are harmless and change nothing.
    expect(run.ref().hasRef()).toBe(false)
    expect(run.unref().hasRef()).toBe(false)
  }, T)

  it('an unref()ed command still delivers its result', async () => {
    const run = (await execute({ command: nodeArgv("setTimeout(() => console.log('late'), 200)") })).unref()
    const result = await run.result()
    expect(result.stdout.text).toBe('late\n')
    await run.done
  }, T)
})

describe('a command as an async resource', () => {
  it('is a DshShellExecution made in the execute() call, active while it runs, destroyed when it ends', async () => {
    const watch = watchResources()
    let run
    try {
      run = await execute({ command: nodeArgv('setTimeout(() => {}, 200)') })
    } finally {
      watch.disable()
    }
    const [entry, ...others] = watch.seen()
    expect(others).toEqual([])
    expect(entry.stack).toContain(__filename)
    expect(entry.resource.hasRef()).toBe(true)
    run.unref()
    expect(entry.resource.hasRef()).toBe(false)
    run.ref()
    await run.result()
    expect(entry.resource.hasRef()).toBe(false)
  }, T)

  it('is destroyed when the command ends, and at once when it never started', async () => {
    const watch = watchResources()
    try {
      const run = await execute({ command: nodeArgv('process.exit(3)') })
      expect((await run.result()).exitCode).toBe(3)
      await expect(execute({ command: ['/nonexistent/program'] })).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_SPAWN_FAILED' })
      const entries = watch.seen()
      expect(entries).toHaveLength(2)
      for (const entry of entries) expect(entry.resource.hasRef()).toBe(false)
      // Node runs destroy hooks a little later, from its own queue.
      await waitFor(() => entries.every((entry) => entry.destroyed), 'both resources to be destroyed')
    } finally {
      watch.disable()
    }
  }, T)
})
