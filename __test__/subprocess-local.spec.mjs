// `@deepseek-ai/dsh-shell-env/subprocess-local`: `ctx.subprocess` over the
// native spawner, a drop-in for @deepseek-ai/dsh-subprocess-local. The seam's
// documented behaviours (@deepseek-ai/dsh-subprocess's types) on real
// processes, then the published consumers (@deepseek-ai/dsh-bash-local, the
// bash tool, @deepseek-ai/dsh-jobs-local) over it with child_process unusable.

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { Context } from '@deepseek-ai/cordis'

import LocalSubprocessRuntime from '@deepseek-ai/dsh-shell-env/subprocess-local'
import platform from './platform.cjs'
import { toolCallCases, variables } from './harness-helpers.mjs'

const { posix } = platform

const collect = (maxBytes, spill) => ({ maxBytes, ...(spill === undefined ? {} : { spill: { maxBytes: spill } }) })
const collected = { stdin: 'ignore', stdout: collect(64_000), stderr: collect(64_000) }

/** Whether `pid` runs (a zombie does not count). */
function running(pid) {
  try {
    return !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')
  } catch {
    return false
  }
}

posix.describe('ctx.subprocess from this package', () => {
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
    const handle = spawn(['/bin/sh', '-c', 'printf 0123456789; printf err >&2; exit 3'], {
      stdio: { stdin: 'ignore', stdout: collect(4, 1 << 20), stderr: collect(100) },
    })
    expect(handle.pid).toBeGreaterThan(0)
    expect([handle.stdin, handle.stdout, handle.stderr]).toEqual([undefined, undefined, undefined])
    expect(await handle.done).toEqual({ exitCode: 3, signal: null })
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
      spawn(['/bin/true'], { stdio: { stdin: 'ignore', stdout, stderr: 'pipe' } })
    } catch (caught) {
      error = caught
    }
    expect(error?.code).toBe('ERR_SHELL_EXEC_INVALID_SPEC')
    expect(error.message).toBe(message)
  })

  it('piped streams are the raw pipes, as Node streams; { data } writes then closes', async () => {
    const cat = spawn(['cat'], { stdio: { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' } })
    let out = ''
    cat.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk))
    cat.stdin.end('through the pipe')
    expect(await cat.done).toEqual({ exitCode: 0, signal: null })
    expect(out).toBe('through the pipe')
    expect(cat.collected).toEqual({})

    const fed = spawn(['cat'], { stdio: { stdin: { data: 'fed' }, stdout: collect(100), stderr: 'inherit' } })
    await fed.done
    expect(fed.collected.stdout.readFrom(0).text).toBe('fed')
    expect(fed.stderr).toBeUndefined()
  })

  it('a spawn failure: pid -1, and done rejects with the error child_process gives (code, errno, syscall, path)', async () => {
    const missing = path.join(os.tmpdir(), 'dsh-subprocess-spec-no-such-program')
    const handle = spawn([missing])
    expect(handle.pid).toBe(-1)
    const error = await handle.done.then(() => null, (thrown) => thrown)
    expect(error).toEqual(expect.objectContaining({ code: 'ENOENT', errno: -2, syscall: `spawn ${missing}`, path: missing, spawnargs: [] }))
    expect(error.message).toBe(`spawn ${missing} ENOENT`)
    expect(await handle.waitForExit()).toBe(true)
  })

  it('terminate() and the abort signal end the whole tree, escapees that left the group included; waitForExit() sees the tree gone', async () => {
    const tree = spawn(['/bin/sh', '-c', 'setsid sleep 300 & echo $!; sleep 300'])
    let escapee
    while (!(escapee = Number.parseInt(tree.collected.stdout.readFrom(0).text, 10))) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(running(escapee)).toBe(true)
    tree.terminate()
    tree.terminate()
    expect(await tree.waitForExit()).toBe(true)
    expect(await tree.done).toEqual({ exitCode: null, signal: 'SIGTERM' })
    expect(running(escapee)).toBe(false)

    const controller = new AbortController()
    const aborted = spawn(['sleep', '300'], { signal: controller.signal })
    const bounded = new AbortController()
    bounded.abort()
    expect(await aborted.waitForExit(bounded.signal)).toBe(false)
    controller.abort()
    expect((await aborted.done).signal).toBe('SIGTERM')
  })

  it('the environment: the caller’s env over the default scrub; forwarded credentials and DSH_* facts survive, inherited ones do not', async () => {
    const saved = { ...process.env }
    Object.assign(process.env, { SPEC_INHERITED_TOKEN: 'not-for-children', DSH_SESSION_ID: 'stale', SPEC_PLAIN: 'kept' })
    try {
      const handle = spawn(['/bin/sh', '-c', 'echo "${SPEC_INHERITED_TOKEN-gone} ${DSH_SESSION_ID-none} $SPEC_PLAIN $SPEC_FORWARDED_TOKEN $DSH_FACT ${HOME+home}"'], {
        env: { SPEC_FORWARDED_TOKEN: 'forwarded', DSH_FACT: 'current', HOME: undefined },
      })
      await handle.done
      expect(handle.collected.stdout.readFrom(0).text).toBe('gone none kept forwarded current \n')
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key]
      Object.assign(process.env, saved)
    }
  })

  it('the environment: only keys the registry could set pass as DSH_* facts; other spellings of the namespace are removed, not refused', async () => {
    const handle = spawn(['/bin/sh', '-c', 'env | grep -i "^d.h_" | sort'], {
      env: { DSH_FACT: 'current', dsh_lower: 'stale', Dsh_Mixed: 'stale', DSH_: 'stale', 'dſh_long_s': 'stale' },
    })
    expect(await handle.done).toEqual({ exitCode: 0, signal: null })
    expect(handle.collected.stdout.readFrom(0).text).toBe('DSH_FACT=current\n')
  })

  it('resolveExecutable: absolute paths verified, bare names on the scrubbed PATH plus env, relative paths refused', async () => {
    expect(await subprocess.resolveExecutable('/bin/sh')).toBe('/bin/sh')
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-subprocess-spec-'))
    try {
      fs.writeFileSync(path.join(dir, 'plain'), '', { mode: 0o644 })
      await expect(subprocess.resolveExecutable(path.join(dir, 'plain'))).rejects.toThrow('is not an executable file')
      fs.writeFileSync(path.join(dir, 'spec-tool'), '#!/bin/sh\n', { mode: 0o755 })
      await expect(subprocess.resolveExecutable('spec-tool')).rejects.toThrow('was not found on PATH')
      expect(await subprocess.resolveExecutable('spec-tool', { PATH: dir })).toBe(path.join(dir, 'spec-tool'))
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
    await expect(subprocess.resolveExecutable('bin/sh')).rejects.toThrow('is a relative path')
    const aborted = AbortSignal.abort()
    await expect(subprocess.resolveExecutable('sh', undefined, aborted)).rejects.toThrow()
  })

  it('disposal ends every running process and waits for it', async () => {
    const sleepers = [spawn(['sleep', '300']), spawn(['/bin/sh', '-c', 'setsid sleep 300 & sleep 300'])]
    const pids = sleepers.map((handle) => handle.pid)
    await runtime.dispose()
    for (const pid of pids) expect(running(pid)).toBe(false)
    for (const handle of sleepers) expect((await handle.done).signal).not.toBe(null)
  })
})

/**
 * Bash tool calls through the published harness, @deepseek-ai/dsh-bash-local
 * over this ctx.subprocess, in a Node process whose child_process cannot
 * spawn (fixtures/harness/no-child-process.mjs): the calls' rendered texts.
 */
function toolCallsOverTheNativeRuntime(home, workdir) {
  const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'harness')
  const run = spawnSync(
    process.execPath,
    ['--import', path.join(fixtures, 'no-child-process.mjs'), path.join(fixtures, 'tool-bash-calls.mjs'), 'runtime', home, workdir],
    { encoding: 'utf8', timeout: 60_000 },
  )
  expect(run.stderr).toBe('')
  expect(run.status).toBe(0)
  return JSON.parse(run.stdout.trim().split('\n').pop())
}

posix.describe('the published bash executor over this ctx.subprocess, with child_process unusable', () => {
  const home = path.resolve(os.tmpdir(), 'dsh-subprocess-spec-home')
  let workdir
  let calls
  beforeAll(() => {
    workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-subprocess-spec-tool-'))
    calls = toolCallsOverTheNativeRuntime(home, workdir)
  })
  afterAll(() => fs.rmSync(workdir, { recursive: true, force: true }))

  // Stricter than the reference over its own runtime: the escapees are gone too.
  toolCallCases(() => calls, home)
})

const SANDBOX_CALLS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'harness', 'sandbox-calls.mjs')
const BWRAP = ['/usr/bin/bwrap', '/bin/bwrap'].find((file) => fs.existsSync(file))
const LANDLOCK = await import('@deepseek-ai/node-addon-landlock-run').then(
  (landlock) => landlock.probe(landlock.launcherPath(), { timeoutMs: 5000 }),
  () => 'unusable',
)

/** Sandboxed bash tool calls in `mode` (fixtures/harness/sandbox-calls.mjs); their report. */
function sandboxCalls(mode, workspace, outside, { runner, tier } = {}) {
  const run = spawnSync(process.execPath, [SANDBOX_CALLS, mode, workspace, outside, ...(runner ? [runner] : [])], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...(tier ? { SPEC_SANDBOX_TIER: tier } : {}) },
  })
  expect(run.stderr).toBe('')
  expect(run.status).toBe(0)
  return JSON.parse(run.stdout.trim().split('\n').pop())
}

const TIERS = [
  ['bubblewrap', undefined, platform.gate(BWRAP !== undefined, 'bubblewrap (.ci/run installs it)')],
  ['Landlock', 'landlock', platform.gate(platform.LINUX && LANDLOCK !== 'unusable', 'a kernel with Landlock')],
]

posix.describe('the published sandboxing executor (dsh-bash-sandbox, dsh-sandbox-local) over this ctx.subprocess, child_process unusable after the provider’s probe', () => {
  let workspace
  let outside
  beforeEach(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-sandbox-spec-ws-'))
    // Not under /tmp (the checkout may be there), which workspace-write
    // replaces with a private tmpfs and Landlock grants as the private temp.
    outside = fs.mkdtempSync(path.join(os.homedir(), '.dsh-sandbox-spec-out-'))
  })
  afterEach(() => {
    fs.rmSync(workspace, { recursive: true, force: true })
    fs.rmSync(outside, { recursive: true, force: true })
  })

  describe.each(TIERS)('with the %s runner', (_name, tier, gated) => {
    gated.it('read-only: every write is denied with the tool’s marker; reads and the managed environment work; a background job is confined too', () => {
      const calls = sandboxCalls('read-only', workspace, outside, { tier })
      expect(calls.enforcement).toBe('full')
      expect(path.basename(calls.runner)).toBe(tier === 'landlock' ? 'landlock-run' : 'bwrap')
      for (const call of [calls.inside, calls.outside]) expect(call.text).toContain('[sandbox: file access denied under read-only mode]')
      expect(fs.readdirSync(workspace)).toEqual([])
      expect(fs.readdirSync(outside)).toEqual([])
      expect(calls.read.text).toBe('readable\n1\n')
      expect(calls.background.text).toMatch(/^started background job /)
      expect(calls.jobOutput.text).toMatch(/background\.txt: (Read-only file system|Permission denied)/)
    })

    gated.it('workspace-write: a write in the workspace lands, one outside it is denied', () => {
      const calls = sandboxCalls('workspace-write', workspace, outside, { tier })
      expect(calls.inside.text).toBe('in\n')
      expect(fs.readFileSync(path.join(workspace, 'inside.txt'), 'utf8')).toBe('in\n')
      expect(calls.outside.text).toContain('[sandbox: file access denied under workspace-write mode]')
      expect(fs.readdirSync(outside)).toEqual([])
      expect(calls.jobOutput.text).toContain('[status: completed, exit code: 0]')
      expect(fs.readFileSync(path.join(workspace, 'background.txt'), 'utf8')).toBe('bg\n')
    })
  })

  it('danger-full-access: no runner, writes land anywhere', () => {
    const calls = sandboxCalls('danger-full-access', workspace, outside)
    expect([calls.inside.text, calls.outside.text]).toEqual(['in\n', 'out\n'])
    expect(fs.readFileSync(path.join(outside, 'outside.txt'), 'utf8')).toBe('out\n')
  })

  it('a missing runner: SANDBOX_UNAVAILABLE for a foreground call (the spawn error is classified as child_process’s), runnerFailed for a background one', () => {
    const runner = path.join(os.tmpdir(), 'dsh-sandbox-spec-no-such-runner')
    const calls = sandboxCalls('read-only', workspace, outside, { runner })
    expect(calls.inside.isError).toBe(true)
    expect(calls.inside.text).toContain('no sandbox backend is usable on this host; refusing to run the command unconfined')
    expect(calls.inside.text).toContain(`Runner failure: Error: spawn ${runner} ENOENT`)
    expect(calls.jobOutput.text).toContain('[sandbox: the sandbox runner itself failed under read-only mode — the command did not run')
    expect(fs.readdirSync(workspace)).toEqual([])
  })
})

posix.describe('the published pwsh executor (dsh-pwsh-local) over this ctx.subprocess, with a pwsh stand-in', () => {
  it('runs `pwsh -NoLogo -NoProfile -NonInteractive -Command <preamble><command>` with its overrides and the managed values', async () => {
    const { default: PwshLocalExecutor, ENCODING_PREAMBLE } = await import('@deepseek-ai/dsh-pwsh-local')
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-subprocess-spec-pwsh-'))
    const record = path.join(dir, 'record')
    const standIn = path.join(dir, 'pwsh')
    fs.writeFileSync(standIn, `#!/bin/sh\nprintf '%s\\n' "$@" > '${record}.argv'\nenv > '${record}.env'\necho pwsh-out\necho pwsh-err >&2\nexit 7\n`, { mode: 0o755 })
    const root = new Context()
    const fiber = root.plugin({
      name: 'pwsh-composition',
      async apply(ctx) {
        await ctx.plugin(LocalSubprocessRuntime)
        await ctx.plugin(PwshLocalExecutor, { cwd: dir, pwshPath: standIn })
      },
    })
    await fiber
    try {
      let shell
      for (let tries = 0; tries < 200 && (shell = fiber.ctx.get('shell')) === undefined; tries += 1) await new Promise((resolve) => setTimeout(resolve, 5))
      const result = await shell.run(shell.resolve({ command: 'Get-Date', dshEnv: { DSH_SHELL: '1' } }))
      expect({ exitCode: result.exitCode, out: result.stdout.text, err: result.stderr.text }).toEqual({ exitCode: 7, out: 'pwsh-out\n', err: 'pwsh-err\n' })
      expect(fs.readFileSync(`${record}.argv`, 'utf8')).toBe(['-NoLogo', '-NoProfile', '-NonInteractive', '-Command', `${ENCODING_PREAMBLE}Get-Date`, ''].join('\n'))
      const env = variables(fs.readFileSync(`${record}.env`, 'utf8'))
      expect({ NO_COLOR: env.NO_COLOR, PAGER: env.PAGER, GIT_PAGER: env.GIT_PAGER, DSH_SHELL: env.DSH_SHELL }).toEqual({ NO_COLOR: '1', PAGER: 'cat', GIT_PAGER: 'cat', DSH_SHELL: '1' })
    } finally {
      await fiber.dispose()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
