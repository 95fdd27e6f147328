// `ctx.subprocess.spawnTerminal()` of this package's runtime: a command on a
// real pseudo-terminal, its foreground groups, its input, and the end of its
// whole session. Real bash sessions; Linux (the supervisor and /proc).
// Runs unchanged under `vitest run` (globals: true) and `jest`.

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { Context } from '@deepseek-ai/cordis'
import LocalSubprocessRuntime from '@deepseek-ai/dsh-shell-env/subprocess-local'
import { execute } from '@deepseek-ai/dsh-shell-env'
import platform from './platform.cjs'
import processHelpers from './process-helpers.cjs'

const { proc } = platform
const { waitFor, running } = processHelpers

/** The program `pid` runs, as /proc names it. */
function command(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return undefined
  }
}

const SHELL = ['bash', '--norc', '--noprofile', '-i']
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

proc.describe('a terminal of ctx.subprocess', () => {
  let root
  let runtime
  let subprocess
  let tmp
  beforeEach(async () => {
    root = new Context()
    runtime = root.plugin(LocalSubprocessRuntime)
    await runtime
    subprocess = root.subprocess
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-terminal-spec-'))
  })
  afterEach(async () => {
    await runtime.dispose()
    fs.rmSync(tmp, { recursive: true, force: true })
  })

  /** A shell on a terminal, its output gathered as text. */
  async function shell(extra = {}) {
    const terminal = await subprocess.spawnTerminal({ argv: SHELL, cwd: tmp, env: { PS1: '$ ' }, rows: 33, cols: 101, graceMs: 500, ...extra })
    let text = ''
    terminal.output.on('data', (chunk) => {
      text += chunk
    })
    return { terminal, text: () => text }
  }

  /** Waits until the foreground is `pgid` (or another group when `pgid` is `'other'`) and waits for input as `waiting` says. */
  async function foregroundIs(terminal, pgid, waiting) {
    let last
    await waitFor(async () => {
      last = await terminal.inspectForeground()
      const group = pgid === 'other' ? last?.processGroupId !== terminal.pid : last?.processGroupId === pgid
      return group && last.inputWaiting === waiting
    }, `foreground ${pgid} waiting=${waiting} (last: ${JSON.stringify(last)})`)
    return last
  }

  it('runs the command as its session leader on a terminal of the asked size; done has its exit, and the output ends with the last of it', async () => {
    const { terminal, text } = await shell({ env: { PS1: '$ ', DSH_TERMINAL_SPEC: 'managed', TERMINAL_SPEC_TOKEN: 'not-for-the-terminal' } })
    expect(terminal.pid).toBeGreaterThan(0)
    await terminal.write('stty size; tty; ps -o sid= -p $$; echo "$TERM|$DSH_TERMINAL_SPEC|${TERMINAL_SPEC_TOKEN-unset}"; exit 7\n')
    expect(await terminal.done).toEqual({ exitCode: 7, signal: null })
    await new Promise((ended) => (terminal.output.readableEnded ? ended() : terminal.output.once('end', ended)))
    const lines = text().split('\r\n')
    expect(lines).toContain('33 101')
    expect(lines.some((line) => /^\/dev\/pts\/\d+$/.test(line))).toBe(true)
    expect(lines.map((line) => line.trim())).toContain(String(terminal.pid))
    expect(lines).toContain('dumb|managed|not-for-the-terminal')
  })

  it('the foreground: the waiting shell, a job that does not read, one that reads; SIGINT reaches the job, SIGKILL never the shell', async () => {
    const { terminal } = await shell()
    expect(await foregroundIs(terminal, terminal.pid, true)).toEqual({ processGroupId: terminal.pid, inputWaiting: true })
    await terminal.write('sleep 30\n')
    const sleeping = await foregroundIs(terminal, 'other', false)
    // As in a real terminal, a SIGINT between bash's fork and the job's exec
    // reaches bash's handler in the child: wait until it is sleep.
    await waitFor(() => command(sleeping.processGroupId) === 'sleep', 'the job to be sleep')
    expect(await terminal.signalForeground('SIGINT')).toBe(sleeping.processGroupId)
    await foregroundIs(terminal, terminal.pid, true)
    await terminal.write('cat\n')
    const reading = await foregroundIs(terminal, 'other', true)
    expect(reading.processGroupId).not.toBe(sleeping.processGroupId)
    expect(command(reading.processGroupId)).toBe('cat')
    expect(await terminal.signalForeground('SIGKILL')).toBe(reading.processGroupId)
    await foregroundIs(terminal, terminal.pid, true)
    await expect(terminal.signalForeground('SIGKILL')).rejects.toThrow(/refusing to SIGKILL the terminal shell/)
    await expect(terminal.signalForeground('SIGUSR1')).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_INVALID_SIGNAL' })
    await terminal.terminate()
  })

  it('terminate() ends the whole session, a TERM-ignoring job and a setsid escapee too, and settles once all are gone', async () => {
    const { terminal } = await shell()
    const pids = path.join(tmp, 'pids')
    await terminal.write(`(trap '' TERM; echo $BASHPID >> ${pids}; exec sleep 60) & setsid -f sh -c 'echo $$ >> ${pids}; exec sleep 60'\n`)
    await waitFor(() => fs.existsSync(pids) && fs.readFileSync(pids, 'utf8').trim().split('\n').length === 2, 'both to start')
    const started = fs.readFileSync(pids, 'utf8').trim().split('\n').map(Number)
    expect(started.every(running)).toBe(true)
    await terminal.terminate()
    await terminal.terminate()
    expect([terminal.pid, ...started].filter(running)).toEqual([])
    // Interactive bash ignores SIGTERM: the grace runs out and SIGKILL ends it.
    expect(await terminal.done).toEqual({ exitCode: null, signal: 'SIGKILL' })
    expect(await terminal.inspectForeground()).toBeUndefined()
    await expect(terminal.write('echo late\n')).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_TERMINAL_CLOSED' })
  })

  it('without the cgroup tier too, terminate() ends a setsid escapee of the session (a host of its own)', () => {
    const script = `
      import { Context } from '@deepseek-ai/cordis'
      import Runtime from '@deepseek-ai/dsh-shell-env/subprocess-local'
      import fs from 'node:fs'
      const root = new Context()
      await root.plugin(Runtime)
      const pids = ${JSON.stringify(path.join(tmp, 'sweep-pids'))}
      const terminal = await root.subprocess.spawnTerminal({ argv: ${JSON.stringify(SHELL)}, cwd: '/', rows: 24, cols: 80, graceMs: 300 })
      await terminal.write("setsid -f sh -c 'echo $$ > " + pids + "; exec sleep 60'\\n")
      while (!fs.existsSync(pids) || fs.readFileSync(pids, 'utf8').trim() === '') await new Promise((r) => setTimeout(r, 10))
      const escapee = Number(fs.readFileSync(pids, 'utf8'))
      await terminal.terminate()
      let alive = true
      try { process.kill(escapee, 0) } catch { alive = false }
      console.log(JSON.stringify({ escapee, alive }))
    `
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, DSH_SHELL_ENV_NO_CGROUPS: '1' },
      timeout: 30_000,
    })
    expect(run.stderr).toBe('')
    const report = JSON.parse(run.stdout.trim())
    expect(report.escapee).toBeGreaterThan(0)
    expect(report.alive).toBe(false)
  }, 40_000)

  it('1 MiB written to a command that never reads: write() reports backpressure, the host\'s timers keep running, the pending write rejects with ERR_SHELL_EXEC_TERMINAL_CLOSED once the command is gone, and the host exits by itself (a host of its own)', () => {
    const started = Date.now()
    const child = spawnSync(process.execPath, [path.join(ROOT, '__test__/fixtures/terminal-unread-input.mjs')], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
      killSignal: 'SIGKILL',
    })
    const elapsedMs = Date.now() - started
    expect(child.stderr).toBe('')
    expect({ status: child.status, signal: child.signal }).toEqual({ status: 0, signal: null })
    const report = JSON.parse(child.stdout.trim().split('\n').pop())
    expect(report).toEqual({
      refused: expect.any(Number),
      drained: false,
      writeOutcome: 'ERR_SHELL_EXEC_TERMINAL_CLOSED',
      done: { exitCode: 0, signal: null },
      lateMs: expect.any(Number),
      inputDestroyed: true,
    })
    expect(report.refused).toBeGreaterThan(0)
    // The command sleeps 2 s; a host whose thread a write blocked runs its timers late, and exits late.
    expect({ lateMs: report.lateMs < 1000, exitedSoon: elapsedMs < 15_000 }).toEqual({ lateMs: true, exitedSoon: true })
  }, 40_000)

  it('disposing the runtime ends its terminals', async () => {
    const { terminal } = await shell()
    await foregroundIs(terminal, terminal.pid, true)
    await runtime.dispose()
    expect(running(terminal.pid)).toBe(false)
    await terminal.done
  })

  it('bad specs are refused with a code and nothing started; an aborted signal rejects before anything starts', async () => {
    const base = { argv: SHELL, cwd: tmp, rows: 24, cols: 80, graceMs: 500 }
    await expect(subprocess.spawnTerminal({ ...base, argv: [] })).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_INVALID_SPEC' })
    await expect(subprocess.spawnTerminal({ ...base, rows: 0 })).rejects.toMatchObject({
      code: 'ERR_SHELL_EXEC_INVALID_SPEC',
      message: expect.stringContaining('stdio.terminal.rows'),
    })
    await expect(subprocess.spawnTerminal({ ...base, cols: 1.5 })).rejects.toMatchObject({
      code: 'ERR_SHELL_EXEC_INVALID_SPEC',
      message: expect.stringContaining('stdio.terminal.cols'),
    })
    await expect(subprocess.spawnTerminal({ ...base, argv: ['no-such-program-here'] })).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_SPAWN_FAILED' })
    await expect(subprocess.spawnTerminal({ ...base, cwd: path.join(tmp, 'missing') })).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_INVALID_WORKDIR' })
    const controller = new AbortController()
    controller.abort()
    await expect(subprocess.spawnTerminal({ ...base, signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('execute() runs commands on pipes: stdio.terminal is refused there', async () => {
    await expect(execute({ command: ['true'], stdio: { terminal: { rows: 24, cols: 80 } } })).rejects.toMatchObject({
      code: 'ERR_SHELL_EXEC_INVALID_SPEC',
      message: expect.stringContaining('stdio.terminal'),
    })
  })
})
