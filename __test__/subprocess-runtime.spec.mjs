// `@deepseek-ai/dsh-shell-env/subprocess-local`: the `ctx.subprocess` seam's
// documented behaviours (@deepseek-ai/dsh-subprocess's types) on real
// processes, on every platform: the commands are Node scripts, so the very
// same cases run on Windows (under wine in scripts/test-cross.sh). What needs
// a POSIX shell is at the end, gated; the published consumers over this
// runtime are in subprocess-local.spec.mjs.

import { spawn as nodeSpawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { getSystemErrorMap } from 'node:util'

import { Context } from '@deepseek-ai/cordis'

import LocalSubprocessRuntime from '@deepseek-ai/dsh-shell-env/subprocess-local'
import platform from './platform.cjs'
import processHelpers from './process-helpers.cjs'

const { posix, nodeArgv, WINDOWS } = platform
const { delay, running, isHelper, childrenOf } = processHelpers

const collect = (maxBytes, spill) => ({ maxBytes, ...(spill === undefined ? {} : { spill: { maxBytes: spill } }) })
const collected = { stdin: 'ignore', stdout: collect(64_000), stderr: collect(64_000) }

/** A Node script that starts a detached Node sleeper (its own session on POSIX: it leaves the group), prints its pid, then sleeps. */
const TREE = `
const child = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 300000)'], { detached: true, stdio: 'ignore' })
process.stdout.write(child.pid + '\\n')
setTimeout(() => {}, 300000)`

/** What `child_process` gives for a spawn of `argv`: its error's Node fields. */
function childProcessSpawnError(argv) {
  return new Promise((settle) => {
    const child = nodeSpawn(argv[0], argv.slice(1), { stdio: 'ignore' })
    child.once('error', (error) => settle(error))
    child.once('spawn', () => settle(null))
  })
}

describe('ctx.subprocess from this package', () => {
  let root
  let runtime
  let subprocess
  beforeEach(async () => {
    root = new Context()
    runtime = root.plugin(LocalSubprocessRuntime)
    await runtime
    subprocess = root.subprocess
  })
  afterEach(() => runtime.dispose())

  const spawn = (argv, extra = {}) => subprocess.spawn({ argv, cwd: os.tmpdir(), graceMs: 500, stdio: collected, ...extra })

  it('collect mode: done settles with the exit facts; readers are offset-based, non-consuming, and lossy past the tail', async () => {
    const handle = spawn(nodeArgv("process.stdout.write('0123456789'); process.stderr.write('err'); process.exitCode = 3"), {
      stdio: { stdin: 'ignore', stdout: collect(4, 1 << 20), stderr: collect(100) },
    })
    expect(handle.pid).toBeGreaterThan(0)
    expect([handle.stdin, handle.stdout, handle.stderr]).toEqual([undefined, undefined, undefined])
    expect(await handle.done).toEqual({ exitCode: 3, signal: null, endedAfterExit: 0 })
    const whole = handle.collected.stdout.readFrom(0)
    expect(whole).toEqual({ text: '6789', nextOffset: 10, lossy: true, spillPath: expect.any(String) })
    expect(fs.readFileSync(whole.spillPath, 'utf8')).toBe('0123456789')
    expect(handle.collected.stdout.readFrom(7)).toEqual({ text: '789', nextOffset: 10, lossy: false, spillPath: whole.spillPath })
    expect(handle.collected.stdout.readFrom(0)).toEqual(whole)
    expect(handle.collected.stderr.readFrom(0)).toEqual({ text: 'err', nextOffset: 3, lossy: false })
  })

  it.each([
    ['a fractional maxBytes', collect(1.5), 'invalid stdio.stdout.maxBytes: must be a non-negative integer (got 1.5)'],
    ['a negative spill size', collect(4, -1), 'invalid stdio.stdout.spill.maxBytes: must be a non-negative integer (got -1)'],
    ['no maxBytes', {}, "invalid stdio.stdout: must be 'pipe', 'inherit' or { maxBytes, spill? }"],
  ])('collect mode refuses %s by execute()’s byte-count rule, naming the field', (_title, stdout, message) => {
    let error
    try {
      spawn([process.execPath, '--version'], { stdio: { stdin: 'ignore', stdout, stderr: 'pipe' } })
    } catch (caught) {
      error = caught
    }
    expect(error?.code).toBe('ERR_SHELL_EXEC_INVALID_SPEC')
    expect(error.message).toBe(message)
  })

  it('piped streams are the raw pipes, as Node streams, both ways; { data } writes then closes; an inherited stream is none of the handle’s', async () => {
    const echo = spawn(nodeArgv("process.stdin.on('data', (d) => { process.stdout.write('out:' + d); process.stderr.write('err:' + d) })"), {
      stdio: { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' },
    })
    let out = ''
    let err = ''
    echo.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk))
    echo.stderr.setEncoding('utf8').on('data', (chunk) => (err += chunk))
    echo.stdin.end('through the pipe')
    expect(await echo.done).toEqual({ exitCode: 0, signal: null, endedAfterExit: 0 })
    expect([out, err]).toEqual(['out:through the pipe', 'err:through the pipe'])
    expect(echo.collected).toEqual({})

    const fed = spawn(nodeArgv('process.stdin.pipe(process.stdout)'), { stdio: { stdin: { data: 'fed' }, stdout: collect(100), stderr: 'inherit' } })
    expect(await fed.done).toEqual({ exitCode: 0, signal: null, endedAfterExit: 0 })
    expect(fed.collected.stdout.readFrom(0).text).toBe('fed')
    expect(fed.stderr).toBeUndefined()
  })

  it('a spawn failure: pid -1, and done rejects with the very fields child_process gives (code, errno, syscall, path)', async () => {
    const missing = path.join(os.tmpdir(), 'dsh-subprocess-spec-no-such-program')
    const handle = spawn([missing])
    expect(handle.pid).toBe(-1)
    const error = await handle.done.then(() => null, (thrown) => thrown)
    const reference = await childProcessSpawnError([missing])
    expect(reference).toEqual(expect.objectContaining({ code: 'ENOENT' }))
    const fields = (e) => ({ code: e.code, errno: e.errno, syscall: e.syscall, path: e.path, spawnargs: e.spawnargs, message: e.message })
    expect(fields(error)).toEqual(fields(reference))
    expect(getSystemErrorMap().get(error.errno)?.[0]).toBe('ENOENT')
    expect(await handle.waitForExit()).toBe(true)
  })

  it('terminate() and the abort signal end the whole tree, a detached grandchild included; waitForExit() sees the tree gone', async () => {
    const tree = spawn(nodeArgv(TREE))
    let grandchild
    while (!(grandchild = Number.parseInt(tree.collected.stdout.readFrom(0).text, 10))) await delay(10)
    expect(running(grandchild)).toBe(true)
    tree.terminate()
    tree.terminate()
    expect(await tree.waitForExit()).toBe(true)
    // Windows ends the command's job (TerminateJobObject), which reports as SIGKILL.
    expect(await tree.done).toEqual({ exitCode: null, signal: WINDOWS ? 'SIGKILL' : 'SIGTERM', endedAfterExit: expect.any(Number) })
    expect(running(grandchild)).toBe(false)

    const controller = new AbortController()
    const aborted = spawn(nodeArgv('setTimeout(() => {}, 300000)'), { signal: controller.signal })
    const bounded = new AbortController()
    bounded.abort()
    expect(await aborted.waitForExit(bounded.signal)).toBe(false)
    controller.abort()
    expect((await aborted.done).signal).not.toBe(null)
  })

  it('the environment: the caller’s env over the default scrub; forwarded credentials and DSH_* facts survive, inherited ones do not', async () => {
    const saved = { ...process.env }
    Object.assign(process.env, { SPEC_INHERITED_TOKEN: 'not-for-children', DSH_SESSION_ID: 'stale', SPEC_PLAIN: 'kept' })
    try {
      const names = ['SPEC_INHERITED_TOKEN', 'DSH_SESSION_ID', 'SPEC_PLAIN', 'SPEC_FORWARDED_TOKEN', 'DSH_FACT', 'SPEC_REMOVED']
      process.env.SPEC_REMOVED = 'inherited'
      const handle = spawn(nodeArgv(`process.stdout.write(JSON.stringify(${JSON.stringify(names)}.map((name) => process.env[name] ?? null)))`), {
        env: { SPEC_FORWARDED_TOKEN: 'forwarded', DSH_FACT: 'current', SPEC_REMOVED: undefined },
      })
      expect(await handle.done).toEqual({ exitCode: 0, signal: null, endedAfterExit: 0 })
      expect(JSON.parse(handle.collected.stdout.readFrom(0).text)).toEqual([null, null, 'kept', 'forwarded', 'current', null])
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key]
      Object.assign(process.env, saved)
    }
  })

  it('resolveExecutable: absolute paths verified, bare names on the scrubbed PATH plus env (with PATHEXT on Windows), relative paths refused', async () => {
    expect(await subprocess.resolveExecutable(process.execPath)).toBe(process.execPath)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-subprocess-spec-'))
    try {
      await expect(subprocess.resolveExecutable(dir)).rejects.toThrow('is not an executable file')
      // A Windows program is found by its bare name through PATHEXT; a POSIX one needs its execute bit.
      const tool = path.join(dir, WINDOWS ? 'spec-tool.CMD' : 'spec-tool')
      fs.writeFileSync(tool, WINDOWS ? '@echo off\r\n' : '#!/bin/sh\n', { mode: 0o755 })
      await expect(subprocess.resolveExecutable('spec-tool')).rejects.toThrow('was not found on PATH')
      // Windows names are case-insensitive: the extension comes back as PATHEXT spells it.
      const found = await subprocess.resolveExecutable('spec-tool', { PATH: dir })
      expect(WINDOWS ? found.toLowerCase() : found).toBe(WINDOWS ? tool.toLowerCase() : tool)
      if (WINDOWS) await expect(subprocess.resolveExecutable('spec-tool', { PATH: dir, PATHEXT: '.EXE' })).rejects.toThrow('was not found on PATH')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
    await expect(subprocess.resolveExecutable(path.join('bin', 'sh'))).rejects.toThrow('is a relative path')
    const aborted = AbortSignal.abort()
    await expect(subprocess.resolveExecutable('node', undefined, aborted)).rejects.toThrow()
  })

  it('disposal ends every running process, the trees they started included, and waits for it', async () => {
    const sleepers = [spawn(nodeArgv('setTimeout(() => {}, 300000)')), spawn(nodeArgv(TREE))]
    let grandchild
    while (!(grandchild = Number.parseInt(sleepers[1].collected.stdout.readFrom(0).text, 10))) await delay(10)
    await runtime.dispose()
    // Under the supervisor a handle's pid is its reaper's, which outlives the command.
    for (const { pid } of sleepers) expect(isHelper(pid) ? childrenOf(pid) : running(pid)).toEqual(isHelper(pid) ? [] : false)
    expect(running(grandchild)).toBe(false)
    for (const handle of sleepers) expect((await handle.done).signal).not.toBe(null)
  })

  posix.it('a POSIX file needs its execute bit to resolve', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-subprocess-spec-'))
    try {
      fs.writeFileSync(path.join(dir, 'plain'), '', { mode: 0o644 })
      await expect(subprocess.resolveExecutable(path.join(dir, 'plain'))).rejects.toThrow('is not an executable file')
      await expect(subprocess.resolveExecutable('plain', { PATH: dir })).rejects.toThrow('was not found on PATH')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  posix.it('the environment: only keys the registry could set pass as DSH_* facts; other spellings of the namespace are removed, not refused', async () => {
    const handle = spawn(['/bin/sh', '-c', 'env | grep -i "^d.h_" | sort'], {
      env: { DSH_FACT: 'current', dsh_lower: 'stale', Dsh_Mixed: 'stale', DSH_: 'stale', 'dſh_long_s': 'stale' },
    })
    expect(await handle.done).toEqual({ exitCode: 0, signal: null, endedAfterExit: 0 })
    expect(handle.collected.stdout.readFrom(0).text).toBe('DSH_FACT=current\n')
  })
})
