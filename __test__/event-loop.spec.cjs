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
const path = require('node:path')

const { ROOT, FIXTURES, runNode } = require('./helpers.cjs')
const { nodeArgv } = require('./platform.cjs')
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
