// `@deepseek-ai/dsh-shell-env/subprocess-local`: `ctx.subprocess` over the
// native spawner, a drop-in for @deepseek-ai/dsh-subprocess-local. The
// published consumers (@deepseek-ai/dsh-bash-local, the bash tool,
// @deepseek-ai/dsh-jobs-local, the sandboxing executor, dsh-pwsh-local) over
// it with child_process unusable. The seam's own behaviours, on every
// platform, are in subprocess-runtime.spec.mjs.

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { Context } from '@deepseek-ai/cordis'

import LocalSubprocessRuntime from '@deepseek-ai/dsh-shell-env/subprocess-local'
import platform from './platform.cjs'
import { toolCallCases } from './harness-helpers.mjs'

const { posix } = platform

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

/**
 * A `pwsh` stand-in in `dir` that records its argv and environment as JSON
 * in `record`, prints to both streams and exits 7: a Node script behind a
 * `#!/bin/sh` wrapper, or a `.cmd` on Windows (found and run through cmd.exe
 * by the spawner, whose quoting the script's argv shows).
 */
function pwshStandIn(dir, record) {
  const script = path.join(dir, 'stand-in.cjs')
  fs.writeFileSync(
    script,
    `require('node:fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify({ argv: process.argv.slice(2), env: process.env }))
process.stdout.write('pwsh-out\\n'); process.stderr.write('pwsh-err\\n'); process.exitCode = 7\n`,
  )
  if (platform.WINDOWS) {
    const standIn = path.join(dir, 'pwsh.cmd')
    fs.writeFileSync(standIn, `@"${process.execPath}" "${script}" %*\r\n@exit /b %ERRORLEVEL%\r\n`)
    return standIn
  }
  const standIn = path.join(dir, 'pwsh')
  fs.writeFileSync(standIn, `#!/bin/sh\nexec '${process.execPath}' '${script}' "$@"\n`, { mode: 0o755 })
  return standIn
}

describe('the published pwsh executor (dsh-pwsh-local) over this ctx.subprocess, with a pwsh stand-in', () => {
  it('runs `pwsh -NoLogo -NoProfile -NonInteractive -Command <preamble><command>` with its overrides and the managed values', async () => {
    const { default: PwshLocalExecutor, ENCODING_PREAMBLE } = await import('@deepseek-ai/dsh-pwsh-local')
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-subprocess-spec-pwsh-'))
    const record = path.join(dir, 'record.json')
    const standIn = pwshStandIn(dir, record)
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
      const { argv, env } = JSON.parse(fs.readFileSync(record, 'utf8'))
      expect(argv).toEqual(['-NoLogo', '-NoProfile', '-NonInteractive', '-Command', `${ENCODING_PREAMBLE}Get-Date`])
      expect({ NO_COLOR: env.NO_COLOR, PAGER: env.PAGER, GIT_PAGER: env.GIT_PAGER, DSH_SHELL: env.DSH_SHELL }).toEqual({ NO_COLOR: '1', PAGER: 'cat', GIT_PAGER: 'cat', DSH_SHELL: '1' })
    } finally {
      await fiber.dispose()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
