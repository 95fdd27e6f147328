// The native `ctx.shell` executors (`@deepseek-ai/dsh-shell-env/bash-local`
// and `/pwsh-local`): the published ShellExecutor contract of
// @deepseek-ai/dsh-shell@0.1.0-rc.8, under the published bash tool and jobs
// service and on their own, with real processes. PowerShell is not installed
// here: the pwsh executor runs a stand-in `pwsh` (a shell script recording its
// argv and environment). Vitest runs this file natively, Jest with
// `--experimental-vm-modules`.

import { spawn, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import LocalBashExecutor from '@deepseek-ai/dsh-shell-env/bash-local'
import PwshLocalExecutor, { ENCODING_PREAMBLE } from '@deepseek-ai/dsh-shell-env/pwsh-local'
import ReferenceBashExecutor from '@deepseek-ai/dsh-bash-local'
import NativeSubprocess from '@deepseek-ai/dsh-shell-env/subprocess-local'

import { agent, callTool, composition, loadHarness, started, toolCallCases, variables } from './harness-helpers.mjs'
import platform from './platform.cjs'
import processHelpers from './process-helpers.cjs'

const { alive } = processHelpers
// The bash executor runs `bash -c`; the pwsh stand-in is a /bin/sh script.
const { posix, signals } = platform

const HOME = path.join(os.tmpdir(), 'dsh-executor-spec-home')

/** In shell, the `pids.max` of a command's cgroup leaf, where a cgroup holds `processes` here; else `undefined`. */
function pidsMaxFile() {
  if (process.platform !== 'linux') return undefined
  const { limitMechanisms } = createRequire(import.meta.url)('../lib/index.js')
  return processHelpers.leafFile(limitMechanisms().find((entry) => entry.limit === 'processes').mechanism, 'pids', 'pids.max')
}

let parts
let tmp
const roots = []

beforeAll(async () => {
  parts = await loadHarness()
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-executor-spec-'))
})

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

afterEach(async () => {
  for (const fiber of roots.splice(0)) await fiber.dispose()
})

/** A started composition around `executor`; its context and fiber. */
async function compose(executor = LocalBashExecutor, config = { cwd: tmp }, shellEnvConfig = { dshHome: HOME }) {
  const root = new parts.Context()
  const fiber = await started(root, composition(parts, executor, config, shellEnvConfig))
  roots.push(fiber)
  return { root, fiber, ctx: fiber.ctx }
}

/** Waits until `predicate()` holds, polling. */
async function until(predicate, what, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}


/**
 * Runs bash tool calls through the published harness in a Node process whose
 * child_process cannot spawn (a test runner's module registry would keep the
 * harness's own copy of child_process out of reach of a replacement made
 * here): the calls' rendered texts.
 */
function toolCallsWithoutChildProcess(which) {
  const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'harness')
  const run = spawnSync(
    process.execPath,
    ['--import', path.join(fixtures, 'no-child-process.mjs'), path.join(fixtures, 'tool-bash-calls.mjs'), which, HOME, tmp],
    { encoding: 'utf8', timeout: 60_000 },
  )
  expect(run.stderr).toBe('')
  expect(run.status).toBe(0)
  return JSON.parse(run.stdout.trim().split('\n').pop())
}

posix.describe('the published bash tool over the native executor, with child_process unusable', () => {
  let calls

  beforeAll(() => {
    calls = toolCallsWithoutChildProcess('native')
  })

  it('the replacement is in force: the reference executor cannot run a command there', () => {
    const reference = toolCallsWithoutChildProcess('reference')
    expect(reference.foreground.isError).toBe(true)
    expect(reference.foreground.text).toContain('child_process.spawn was called')
  })

  toolCallCases(() => calls, HOME, { native: true })
})

/** The `code` warnings emitted on Node's own process while `fn` runs. */
async function warningsDuring(code, fn) {
  const warnings = []
  const listener = (warning) => {
    if (warning.code === code) warnings.push(warning.message)
  }
  // Under Jest a test file's `process` is a copy; process.emitWarning reports on the real one.
  const { process: nodeProcess } = createRequire(import.meta.url)('../binding.js').hostGlobal()
  nodeProcess.on('warning', listener)
  try {
    await fn()
  } finally {
    nodeProcess.off('warning', listener)
  }
  return warnings
}

describe('a composition without ctx.shellEnv', () => {
  const plugMost = async (withShellEnv, runtime = false) => {
    const root = new parts.Context()
    const fiber = root.plugin({
      name: 'composition',
      async apply(ctx) {
        await ctx.plugin(parts.SystemPrompt)
        await ctx.plugin(parts.ToolRuntime)
        if (runtime) {
          await ctx.plugin(NativeSubprocess)
          await ctx.plugin(ReferenceBashExecutor, { cwd: tmp })
        } else {
          await ctx.plugin(LocalBashExecutor, { cwd: tmp })
        }
        if (withShellEnv) await ctx.plugin(parts.shellEnv, { dshHome: HOME })
        await ctx.plugin(parts.toolBash)
      },
    })
    roots.push(fiber)
    await fiber
    // The executor looks SETTLE_MS (1 s) after it started.
    await new Promise((resolve) => setTimeout(resolve, 1_300))
    return fiber.ctx
  }

  it('is told that the bash tool waits for it: DSH_SHELL_ENV_SERVICE_MISSING names the plugin and the fix', async () => {
    let ctx
    const warnings = await warningsDuring('DSH_SHELL_ENV_SERVICE_MISSING', async () => {
      ctx = await plugMost(false)
    })
    expect(ctx.get('tools').get('bash')).toBeUndefined()
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/^tool-bash waits for ctx\.shellEnv, which no plugin provides, so bash-local runs no command for it: load this package's plugin/)
  })

  it('over the native ctx.subprocess, the runtime says the same', async () => {
    const warnings = await warningsDuring('DSH_SHELL_ENV_SERVICE_MISSING', () => plugMost(false, true))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/^tool-bash waits for ctx\.shellEnv, which no plugin provides, so subprocess-local runs no command for it/)
  })

  it('with the service loaded after the executor, the tool is registered and nothing is said', async () => {
    let ctx
    const warnings = await warningsDuring('DSH_SHELL_ENV_SERVICE_MISSING', async () => {
      ctx = await plugMost(true)
    })
    expect(ctx.get('tools').get('bash')).toBeDefined()
    expect(warnings).toEqual([])
  })
})

describe('the executor contract', () => {
  /** The composition's ctx.get('shell'). */
  async function shell(config = {}, executor = LocalBashExecutor) {
    const { ctx, fiber, root } = await compose(executor, { cwd: tmp, ...config })
    return { shell: ctx.get('shell'), ctx, fiber, root }
  }

  describe('config and resolve()', () => {
    /** The bash executor plugged into a new root with `config`: the root, and the error the plugin failed with. */
    async function plugged(config) {
      const root = new parts.Context()
      let error
      await Promise.resolve(root.plugin(LocalBashExecutor, { cwd: tmp, ...config })).catch((caught) => {
        error = caught
      })
      return { root, error }
    }

    it('resolve() fills workdir and timeoutMs from the config, caps the timeout, and keeps the caller’s fields', async () => {
      const { shell: s } = await shell({ timeoutMs: 5000, maxTimeoutMs: 8000 })
      const signal = new AbortController().signal
      expect(s.resolve({ command: 'true' })).toEqual({ command: 'true', workdir: tmp, timeoutMs: 5000, stdoutMaxBytes: 64e3, sandboxPolicy: undefined })
      const full = s.resolve({ command: 'x', workdir: '/w', timeoutMs: 60_000, stdoutMaxBytes: 10, signal, stdin: 'in', env: { A: 'b' }, dshEnv: { DSH_X: 'y' } })
      expect(full).toEqual({ command: 'x', workdir: '/w', timeoutMs: 8000, stdoutMaxBytes: 10, signal, stdin: 'in', env: { A: 'b' }, dshEnv: { DSH_X: 'y' }, sandboxPolicy: undefined })
    })

    it.each([
      ['a zero timeout', { timeoutMs: 0 }, 'request.timeoutMs'],
      ['a NaN timeout', { timeoutMs: Number.NaN }, 'request.timeoutMs'],
      ['a negative stdout budget', { stdoutMaxBytes: -1 }, 'request.stdoutMaxBytes must be a non-negative integer (got -1)'],
      ['a fractional stdout budget', { stdoutMaxBytes: 1.5 }, 'request.stdoutMaxBytes must be a non-negative integer (got 1.5)'],
    ])('resolve() refuses %s with ERR_SHELL_EXEC_INVALID_REQUEST', async (_title, request, field) => {
      const { shell: s } = await shell()
      let error
      try {
        s.resolve({ command: 'true', ...request })
      } catch (caught) {
        error = caught
      }
      expect(error?.code).toBe('ERR_SHELL_EXEC_INVALID_REQUEST')
      expect(error.message).toContain(`bash-local: ${field}`)
    })

    it.each([
      ['a negative grace', { graceMs: -1 }, 'bash-local: graceMs must be a finite number ≥ 0 of milliseconds (got -1)'],
      ['a zero timeout', { timeoutMs: 0 }, 'bash-local: timeoutMs must be a positive finite number of milliseconds (got 0)'],
      ['a fractional output cap', { maxOutputBytes: 1.5 }, 'bash-local: maxOutputBytes must be a non-negative integer (got 1.5)'],
      ['a fractional spill size', { maxSpillBytes: 1024.5 }, 'bash-local: maxSpillBytes must be a non-negative integer (got 1024.5)'],
      ['a relative spill directory', { spillDir: 'spill' }, 'spillDir must be an absolute path'],
      ['a relative working directory', { cwd: 'work' }, 'cwd must be an absolute path (got "work")'],
      ['a misspelt field', { cwdd: '/tmp' }, 'unknown config field "cwdd" (the fields are cwd, timeoutMs,'],
    ])('a config with %s fails the plugin with ERR_SHELL_EXEC_INVALID_CONFIG', async (_title, config, message) => {
      const { root, error } = await plugged(config)
      expect(error?.code).toBe('ERR_SHELL_EXEC_INVALID_CONFIG')
      expect(error.message).toContain(message)
      expect(root.get('shell')).toBeUndefined()
    })

    it.each([
      ['no grace', { graceMs: 0 }],
      ['a grace longer than one Node timer holds', { graceMs: 2 ** 31 }],
      ['a zero output cap', { maxOutputBytes: 0 }],
    ])('a config with %s is served, as execute() takes it', async (_title, config) => {
      const { root, error } = await plugged(config)
      expect(error).toBeUndefined()
      expect(root.get('shell').resolve({ command: 'true', stdoutMaxBytes: 0 }).stdoutMaxBytes).toBe(0)
    })

    it('with no grace, kill() ends a TERM-ignoring command with SIGKILL at once', async () => {
      const { shell: s } = await shell({ graceMs: 0 })
      const proc = s.start(s.resolve({ command: "trap 'echo got TERM' TERM; echo ready; sleep 30" }))
      await until(() => proc.readOutput().delta.includes('ready'), 'the trap')
      expect(proc.kill()).toBe(true)
      await proc.done
      expect(proc.signal).toBe('SIGKILL')
      expect(proc.readOutput().delta).not.toContain('got TERM')
    })

    it.each([
      ['a limit below its minimum', { limits: { openFiles: 2 } }, 'bash-local: invalid spec field limits.openFiles: must be a whole number from 3'],
      ['an unknown limit', { limits: { memory: 1 } }, 'bash-local: invalid spec field limits.memory: is not a spec field'],
    ])('a config with %s fails the plugin with ERR_SHELL_EXEC_INVALID_CONFIG, as the core words it', async (_title, config, message) => {
      const { error } = await plugged(config)
      expect(error?.code).toBe('ERR_SHELL_EXEC_INVALID_CONFIG')
      expect(error.message).toContain(message)
      expect(error.cause?.code).toBe('ERR_SHELL_EXEC_INVALID_SPEC')
    })

    it('the defaults are the reference executor’s', () => {
      const ours = LocalBashExecutor.Config({})
      const reference = ReferenceBashExecutor.Config({})
      for (const key of Object.keys(reference)) expect(ours[key]).toBe(reference[key])
    })
  })

  posix.describe('run()', () => {
    it('stdout and stderr apart, stdin written, exit facts, no spill path for short output', async () => {
      const { shell: s } = await shell()
      const result = await s.run(s.resolve({ command: 'cat; echo err >&2; exit 4', stdin: 'from stdin' }))
      expect(result).toEqual({
        exitCode: 4,
        signal: null,
        timedOut: false,
        aborted: false,
        timeoutMs: 120_000,
        stdout: { text: 'from stdin', truncated: false },
        stderr: { text: 'err\n', truncated: false },
      })
    })

    it('layers the environment: scrubbed parent, terminal overrides, the caller’s env, then dshEnv last', async () => {
      const { shell: s } = await shell()
      const saved = { DSH_STALE_SENTINEL: process.env.DSH_STALE_SENTINEL, SPEC_API_TOKEN: process.env.SPEC_API_TOKEN, BASH_ENV: process.env.BASH_ENV }
      Object.assign(process.env, { DSH_STALE_SENTINEL: 'stale', SPEC_API_TOKEN: 'secret', BASH_ENV: path.join(tmp, 'payload') })
      fs.writeFileSync(path.join(tmp, 'payload'), 'echo PAYLOAD RAN\n')
      try {
        const spec = s.resolve({
          command: "echo ran; env | grep -E '^(DSH_|TERM=|SPEC_|BASH_ENV=|CALLER=)' | sort",
          env: { TERM: 'xterm', CALLER: 'yes', DSH_OWN: 'from-env' },
          dshEnv: { DSH_OWN: 'managed', DSH_SHELL: '1' },
        })
        const { stdout } = await s.run(spec)
        // BASH_ENV is the developer's own: bash sources it, as their own non-interactive shell does.
        expect(stdout.text.startsWith('PAYLOAD RAN\nran\n')).toBe(true)
        expect(variables(stdout.text)).toEqual({
          BASH_ENV: path.join(tmp, 'payload'),
          CALLER: 'yes',
          DSH_OWN: 'managed',
          DSH_SHELL: '1',
          TERM: 'xterm',
        })
      } finally {
        for (const [key, value] of Object.entries(saved)) {
          if (value === undefined) delete process.env[key]
          else process.env[key] = value
        }
      }
    })

    it('a timeout and an abort are told apart, and each resolves', async () => {
      const { shell: s } = await shell()
      const timedOut = await s.run(s.resolve({ command: 'sleep 10', timeoutMs: 150 }))
      expect({ timedOut: timedOut.timedOut, aborted: timedOut.aborted, signal: timedOut.signal }).toEqual({ timedOut: true, aborted: false, signal: 'SIGTERM' })

      const controller = new AbortController()
      setTimeout(() => controller.abort(), 100)
      const aborted = await s.run(s.resolve({ command: 'sleep 10', signal: controller.signal }))
      expect({ timedOut: aborted.timedOut, aborted: aborted.aborted }).toEqual({ timedOut: false, aborted: true })

      const already = AbortSignal.abort()
      const before = await s.run(s.resolve({ command: 'sleep 10', signal: already }))
      expect(before.aborted).toBe(true)
    })

    it.each([
      ['a missing workdir', 'missing', 'ENOENT'],
      ['a file as workdir', 'plain-file', 'ENOTDIR'],
    ])('rejects for %s with the OS error (%s) as cause', async (_title, name, code) => {
      const { shell: s } = await shell()
      const dir = path.join(tmp, name)
      if (code === 'ENOTDIR') fs.writeFileSync(dir, '')
      let error
      await s.run(s.resolve({ command: 'true', workdir: dir })).catch((caught) => {
        error = caught
      })
      expect(error.message).toContain(code)
      expect(error.code).toBe('ERR_SHELL_EXEC_INVALID_WORKDIR')
      expect({ code: error.cause.code, syscall: error.cause.syscall, path: error.cause.path }).toEqual({ code, syscall: 'stat', path: dir })
      expect(error.cause.errno).toBe(-os.constants.errno[code])
    })

    it('a stream over the cap keeps its tail and names the spill file holding all of it', async () => {
      const { shell: s } = await shell({ maxOutputBytes: 100 })
      const result = await s.run(s.resolve({ command: 'seq 1 500 >&2' }))
      expect(result.stderr.truncated).toBe(true)
      expect(result.stderr.text.endsWith('500\n')).toBe(true)
      expect(fs.statSync(result.stderr.spillPath).mode & 0o777).toBe(0o600)
      expect(fs.readFileSync(result.stderr.spillPath, 'utf8').split('\n')).toHaveLength(501)
    })
  })

  posix.describe('limits', () => {
    it('the config’s limits hold for every command, a trusted request overrides one, and the model is told which limit ended it', async () => {
      const { shell: s } = await shell({ limits: { fileBytes: 1024 * 1024, openFiles: 32 } })
      const resolved = s.resolve({ command: 'ulimit -n; head -c 100M /dev/zero > big', limits: { openFiles: 16 } })
      expect(resolved.limits).toEqual({ fileBytes: 1024 * 1024, openFiles: 16 })
      const result = await s.run(resolved)
      expect(result.stdout.text).toBe('16\n')
      expect(result.stderr.text.split('\n').filter(Boolean).pop()).toBe('[killed: file size limit 1 MiB]')
      expect(fs.statSync(path.join(tmp, 'big')).size).toBeLessThanOrEqual(1024 * 1024)
      fs.rmSync(path.join(tmp, 'big'))
      const plain = await s.run(s.resolve({ command: 'ulimit -n' }))
      expect(plain.stdout.text).toBe('32\n')
      expect(plain.stderr.text).toBe('')
    })

    it('a background command’s last read carries the notice', async () => {
      const { shell: s } = await shell({ limits: { cpuSeconds: 1 } })
      const proc = s.start(s.resolve({ command: 'while :; do :; done' }))
      await proc.done
      expect(proc.signal).toBe('SIGXCPU')
      expect(proc.readOutput().delta).toBe('[stderr]\n[killed: CPU limit 1 s]')
    })

    it('the published bash tool renders the notice as one line of its output', async () => {
      const { ctx } = await shell({ limits: { fileBytes: 4096 } })
      const result = await callTool(ctx, 'bash', { command: 'head -c 1M /dev/zero > big4k', description: 'A limited call' }, { agent: agent('session-limits', tmp) })
      const text = result.content.map((block) => block.text ?? '').join('')
      // bash's own word on its command, then the notice, then the tool's marker.
      expect(text).toMatch(/^\[stderr\]\n.*File size limit exceeded.*\n\[killed: file size limit 4 KiB\]\n\[exit code: 153\]$/)
      fs.rmSync(path.join(tmp, 'big4k'), { force: true })
    })

    it('a background process the command leaves running is ended, and the bash tool\'s text says so (the supervisor counts it: Linux)', async () => {
      if (process.platform !== 'linux') return
      const { ctx } = await shell()
      const result = await callTool(ctx, 'bash', { command: 'sleep 30 & echo started', description: 'A server left behind' }, { agent: agent('session-left', tmp) })
      const text = result.content.map((block) => block.text ?? '').join('')
      expect(text).toBe('started\n[stderr]\n[ended 1 background process when the command exited; use the jobs tool to keep one running]\n')
    })

    it('a command that lifts its own process limit in its cgroup: the bash tool\'s text says it interfered with the limit (the cgroup tier: Linux)', async () => {
      const pidsMax = pidsMaxFile()
      if (pidsMax === undefined) return
      const { ctx } = await shell({ limits: { processes: 16 } })
      const result = await callTool(ctx, 'bash', { command: `echo max > ${pidsMax} && echo lifted`, description: 'A limit lifted' }, { agent: agent('session-lifted', tmp) })
      const text = result.content.map((block) => block.text ?? '').join('')
      expect(text).toBe('lifted\n[stderr]\n[limit tampered with: the command interfered with its process limit (16), which may not have held]\n')
    })
  })

  posix.describe('start() and the process handle', () => {
    it('returns the handle at once; reads are consuming, stdout first and stderr in its section', async () => {
      const { shell: s } = await shell()
      const proc = s.start(s.resolve({ command: 'echo one; echo two >&2; read line; echo three' , stdin: 'go\n' }))
      expect(proc.status).toBe('running')
      expect(proc.readOutput()).toEqual({ delta: '', lossy: false })
      await proc.done
      expect(proc.status).toBe('completed')
      expect(proc.exitCode).toBe(0)
      expect(proc.readOutput()).toEqual({ delta: 'one\nthree\n[stderr]\ntwo\n', lossy: false })
      expect(proc.readOutput()).toEqual({ delta: '', lossy: false })
    })

    it('a read that lost output is lossy and names the spill files, while the command still runs', async () => {
      const { shell: s } = await shell({ maxOutputBytes: 1000 })
      const marker = path.join(tmp, `spilled-${Date.now()}`)
      const proc = s.start(s.resolve({ command: `seq 1 5000; seq 1 5000 >&2; touch '${marker}'; sleep 30` }))
      await until(() => fs.existsSync(marker), 'the output to be written')
      // The marker says the output is in the pipes, not that it was read.
      await new Promise((resolve) => setTimeout(resolve, 300))
      const read = proc.readOutput()
      expect(proc.status).toBe('running')
      expect(read.lossy).toBe(true)
      // Each stream's kept tail: stdout, then stderr in its section.
      expect(read.delta).toMatch(/\n5000\n\[stderr\]\n[\s\S]*\n5000\n$/)
      const lines = Array.from({ length: 5000 }, (_, i) => `${i + 1}\n`).join('')
      expect(fs.readFileSync(read.stdoutSpillPath, 'utf8')).toBe(lines)
      expect(fs.readFileSync(read.stderrSpillPath, 'utf8')).toBe(lines)
      expect(proc.readOutput()).toEqual({ delta: '', lossy: false, stdoutSpillPath: read.stdoutSpillPath, stderrSpillPath: read.stderrSpillPath })
      expect(proc.kill()).toBe(true)
      await proc.done
    })

    it('kill() is true once, then false; a TERM-ignoring command is killed after the grace', async () => {
      const { shell: s } = await shell({ graceMs: 200 })
      const proc = s.start(s.resolve({ command: "trap '' TERM; echo ready; sleep 30" }))
      await until(() => proc.readOutput().delta.includes('ready'), 'the trap')
      const begun = Date.now()
      expect(proc.kill()).toBe(true)
      expect(proc.kill()).toBe(false)
      expect(proc.status).toBe('killed')
      await proc.done
      expect(proc.signal).toBe('SIGKILL')
      expect(Date.now() - begun).toBeGreaterThanOrEqual(150)
      expect(proc.kill()).toBe(false)
    })

    it('a kill before the spawn completed is delivered once the child runs', async () => {
      const { shell: s } = await shell()
      const proc = s.start(s.resolve({ command: 'sleep 30' }))
      expect(proc.kill()).toBe(true)
      await proc.done
      expect(proc.status).toBe('killed')
      expect(proc.signal).toBe('SIGTERM')
    })

    it('a command that signals itself is killed, not completed', async () => {
      const { shell: s } = await shell()
      const proc = s.start(s.resolve({ command: 'kill -TERM $$' }))
      await proc.done
      expect({ status: proc.status, signal: proc.signal, exitCode: proc.exitCode }).toEqual({ status: 'killed', signal: 'SIGTERM', exitCode: null })
    })

    it('an aborted background command is killed', async () => {
      const { shell: s } = await shell()
      const controller = new AbortController()
      const proc = s.start(s.resolve({ command: 'sleep 30', signal: controller.signal }))
      setTimeout(() => controller.abort(), 100)
      await proc.done
      expect(proc.status).toBe('killed')
    })

    it('a spawn failure settles as killed with the error on stderr; done does not reject', async () => {
      const { shell: s } = await shell({}, PwshLocalExecutor)
      const missing = s.start(s.resolve({ command: 'Get-Date', workdir: path.join(tmp, 'nowhere') }))
      await missing.done
      expect(missing.status).toBe('killed')
      const read = missing.readOutput()
      expect(read.delta).toMatch(/^\[stderr\]\nspawn failed: Error: workdir .*ENOENT/)
      expect(missing.readOutput().delta).toBe('')
    })
  })

  signals.describe('ownership', () => {
    it('a background process survives a reload of the executor and of the calling plugin', async () => {
      const { ctx } = await compose()
      const proc = ctx.get('shell').start(ctx.get('shell').resolve({ command: 'echo $$; sleep 30' }))
      await until(() => proc.readOutput().delta.length > 0 || proc.status !== 'running', 'the pid')
      // What hot module replacement does: every fiber of the plugin goes, then it is plugged again.
      ctx.registry.delete(LocalBashExecutor)
      await until(() => ctx.get('shell') === undefined, 'the executor to go')
      await ctx.plugin(LocalBashExecutor, { cwd: tmp })
      ctx.registry.delete(parts.toolBash)
      await until(() => ctx.get('tools').get('bash') === undefined, 'the bash tool to go')
      await ctx.plugin(parts.toolBash)
      expect(ctx.get('shell')).toBeInstanceOf(LocalBashExecutor)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(proc.status).toBe('running')
      expect(proc.kill()).toBe(true)
      await proc.done
    })

    it('the composition’s teardown stops its processes (TERM, then KILL after the grace), waits for them, and removes spill files', async () => {
      const spillDir = fs.mkdtempSync(path.join(tmp, 'spill-'))
      const { ctx, fiber } = await compose(LocalBashExecutor, { cwd: tmp, graceMs: 300, maxOutputBytes: 100, spillDir })
      const stubborn = ctx.get('shell').start(ctx.get('shell').resolve({ command: "trap '' TERM; echo $$; sleep 30" }))
      const polite = ctx.get('shell').start(ctx.get('shell').resolve({ command: 'echo $$; sleep 30' }))
      const spilled = await ctx.get('shell').run(ctx.get('shell').resolve({ command: 'seq 1 1000' }))
      expect(fs.existsSync(spilled.stdout.spillPath)).toBe(true)
      const pids = []
      for (const proc of [stubborn, polite]) {
        let text = ''
        await until(() => (text += proc.readOutput().delta).includes('\n'), 'a pid')
        pids.push(Number.parseInt(text, 10))
      }
      roots.splice(roots.indexOf(fiber), 1)
      const begun = Date.now()
      await fiber.dispose()
      expect(Date.now() - begun).toBeGreaterThanOrEqual(250)
      expect([stubborn.status, polite.status]).toEqual(['killed', 'killed'])
      expect([stubborn.signal, polite.signal]).toEqual(['SIGKILL', 'SIGTERM'])
      for (const pid of pids) expect(alive(pid)).toBe(false)
      expect(fs.existsSync(spilled.stdout.spillPath)).toBe(false)
    })
  })

  posix.describe('spill files', () => {
    it('outlive the garbage collection of their result and go with the composition', () => {
      const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'harness', 'spill-lifetime.mjs')
      const run = spawnSync(process.execPath, ['--expose-gc', fixture], { encoding: 'utf8', timeout: 60_000 })
      expect(run.stderr).toBe('')
      const report = JSON.parse(run.stdout.trim().split('\n').pop())
      expect(report.path).toMatch(/dsh-shell-env-/)
      expect({ afterGc: report.afterGc, afterTeardown: report.afterTeardown }).toEqual({ afterGc: true, afterTeardown: false })
    })

    it('go in spillDir, where the directories of dead hosts are swept and those of live ones kept', async () => {
      const spillDir = fs.mkdtempSync(path.join(tmp, 'sweep-'))
      // A dead host's directory: its lock file, which nobody holds. A live
      // host's: the lock held (by a host in another pid namespace, say, whose
      // pid means nothing here), here by a process that outlives the sweep.
      const dead = path.join(spillDir, 'dsh-shell-env-4000001-00112233445566ff')
      const live = path.join(spillDir, 'dsh-shell-env-4000002-00112233445566ff')
      const unrelated = path.join(spillDir, 'dsh-shell-env-notes')
      for (const dir of [dead, live, unrelated]) fs.mkdirSync(dir)
      for (const dir of [dead, live]) fs.writeFileSync(path.join(dir, 'lock'), '')
      fs.writeFileSync(path.join(dead, '0-1.stdout'), 'left behind')
      const holder = spawn('flock', [path.join(live, 'lock'), '-c', 'echo locked; sleep 30'], { stdio: ['ignore', 'pipe', 'inherit'] })
      try {
        await new Promise((resolve) => holder.stdout.once('data', resolve))
        const { shell: s } = await shell({ maxOutputBytes: 100, spillDir })
        const result = await s.run(s.resolve({ command: 'seq 1 1000' }))
        expect(path.dirname(path.dirname(result.stdout.spillPath))).toBe(spillDir)
        // The sweep runs on a thread of its own, which nothing waits for.
        await until(() => !fs.existsSync(dead), 'the dead host\'s directory to go')
        expect([fs.existsSync(dead), fs.existsSync(live), fs.existsSync(unrelated)]).toEqual([false, true, true])
      } finally {
        holder.kill('SIGKILL')
      }
    })
  })

  posix.describe('pwsh', () => {
    it('runs the configured pwsh as `-NoLogo -NoProfile -NonInteractive -Command <preamble><command>`, with its overrides', async () => {
      const record = path.join(tmp, 'pwsh-record')
      const standIn = path.join(tmp, 'pwsh')
      fs.writeFileSync(
        standIn,
        `#!/bin/sh\nprintf '%s\\n' "$@" > '${record}.argv'\nenv > '${record}.env'\necho pwsh-out\necho pwsh-err >&2\nexit 7\n`,
        { mode: 0o755 },
      )
      const { shell: s } = await shell({ pwshPath: standIn }, PwshLocalExecutor)
      expect(s.pwshPath).toBe(standIn)
      const result = await s.run(s.resolve({ command: 'Get-Date', dshEnv: { DSH_SHELL: '1' } }))
      expect({ exitCode: result.exitCode, out: result.stdout.text, err: result.stderr.text }).toEqual({ exitCode: 7, out: 'pwsh-out\n', err: 'pwsh-err\n' })
      expect(fs.readFileSync(`${record}.argv`, 'utf8')).toBe(['-NoLogo', '-NoProfile', '-NonInteractive', '-Command', `${ENCODING_PREAMBLE}Get-Date`, ''].join('\n'))
      const env = variables(fs.readFileSync(`${record}.env`, 'utf8'))
      expect({ NO_COLOR: env.NO_COLOR, PAGER: env.PAGER, GIT_PAGER: env.GIT_PAGER, DSH_SHELL: env.DSH_SHELL }).toEqual({ NO_COLOR: '1', PAGER: 'cat', GIT_PAGER: 'cat', DSH_SHELL: '1' })
      // pwsh's overrides set no TERM, unlike bash's: the child keeps the inherited one.
      expect(env.TERM).toBe(process.env.TERM)
    })
  })
})
