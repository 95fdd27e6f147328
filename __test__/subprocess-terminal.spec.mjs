// `ctx.subprocess.spawnTerminal()` of this package's runtime: a command on a
// real terminal, its foreground, its input, and the end of its whole tree.
// One file for every platform, each difference stated where it is:
//
// - Linux: bash on a pseudo-terminal, as its session leader. The foreground
//   is the terminal's group, and whether it waits for input is read of
//   /proc; signals go to the foreground group.
// - Windows: commands on a pseudo console (ConPTY), inside their Job Object.
//   As in the runtime this one replaces (`@deepseek-ai/dsh-subprocess-local`
//   through node-pty there), the foreground is always the command itself
//   and never waits for input, SIGINT is a typed ^C, SIGTERM ends the
//   command, and SIGTSTP and SIGHUP do not exist. Under wine nothing a node,
//   cmd or pwsh command shows reaches the pseudo console: the cases that
//   need no output run there and on Windows (their commands report to a
//   file), the ones that read the output on a Windows machine only
//   (`consoleCommands`; the core's tests read a pseudo console under wine,
//   with a command that writes `CONOUT$` itself). Not on Windows: a command
//   that never reads its input, since there conhost, not the command, reads
//   the input pipe (into the console's input buffer).
// - Everywhere: bad specs, and execute() refusing a terminal.
//
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

const { proc, conpty, consoleCommands, nodeArgv, WINDOWS } = platform
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

/** A runtime of its own for each case, and a scratch directory. */
function withRuntime() {
  const state = {}
  beforeEach(async () => {
    state.root = new Context()
    state.runtime = state.root.plugin(LocalSubprocessRuntime)
    await state.runtime
    state.subprocess = state.root.subprocess
    state.tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-terminal-spec-'))
  })
  afterEach(async () => {
    await state.runtime.dispose()
    fs.rmSync(state.tmp, { recursive: true, force: true })
  })
  return state
}

/** A terminal's output gathered as text, and a promise of its end. */
function gather(terminal) {
  let text = ''
  terminal.output.on('data', (chunk) => {
    text += chunk
  })
  const ended = new Promise((resolve) => (terminal.output.readableEnded ? resolve() : terminal.output.once('end', resolve)))
  return { text: () => text, ended }
}

proc.describe('a terminal of ctx.subprocess on Linux: bash on a pseudo-terminal', () => {
  const state = withRuntime()

  /** A shell on a terminal, its output gathered as text. */
  async function shell(extra = {}) {
    const terminal = await state.subprocess.spawnTerminal({ argv: SHELL, cwd: state.tmp, env: { PS1: '$ ' }, rows: 33, cols: 101, graceMs: 500, ...extra })
    return { terminal, text: gather(terminal).text }
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
    const pids = path.join(state.tmp, 'pids')
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
      const pids = ${JSON.stringify(path.join(state.tmp, 'sweep-pids'))}
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
    await state.runtime.dispose()
    expect(running(terminal.pid)).toBe(false)
    await terminal.done
  })
})

/**
 * The text of a console's VT output as it reads on the screen, for output of
 * a line at a time: control sequences and window titles left out, a cursor
 * moved forward (`CSI n C`) read as that many spaces.
 */
function screenText(vt) {
  return vt
    .replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, '')
    .replace(/\x1b\[([0-9;?]*)([@-~])/g, (_, parameters, final) => (final === 'C' ? ' '.repeat(Number(parameters || 1)) : ''))
}

conpty.describe('a terminal of ctx.subprocess on Windows: a pseudo console', () => {
  const state = withRuntime()

  /** `argv` on a pseudo console, its output gathered. */
  async function onConsole(argv, extra = {}) {
    const terminal = await state.subprocess.spawnTerminal({ argv, cwd: state.tmp, rows: 24, cols: 80, graceMs: 500, ...extra })
    const output = gather(terminal)
    return { terminal, ...output, screen: () => screenText(output.text()) }
  }

  /**
   * A node command that writes `text` to the file `name` in the case's
   * directory (a report wine passes too, which shows nothing of a node
   * command on a pseudo console), then runs `script`.
   */
  function reporting(name, text, script) {
    const file = JSON.stringify(path.join(state.tmp, name))
    return nodeArgv(`require('node:fs').writeFileSync(${file}, ${text}); ${script}`)
  }

  /** What the command wrote to the file `name`, once it has. */
  function report(name, what) {
    const file = path.join(state.tmp, name)
    return waitFor(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8'), what)
  }

  it('done has the command\'s exit code, and the output ends', async () => {
    const { terminal, ended } = await onConsole(nodeArgv('process.exit(7)'))
    expect(terminal.pid).toBeGreaterThan(0)
    expect(await terminal.done).toEqual({ exitCode: 7, signal: null })
    await ended
  })

  it('the foreground is the command itself and never waits for input; SIGKILL is refused, SIGTSTP and SIGHUP do not exist, SIGTERM ends the command', async () => {
    const { terminal } = await onConsole(reporting('ready', 'String(process.pid)', 'setTimeout(() => {}, 60_000)'))
    expect(Number(await report('ready', 'the command to start'))).toBe(terminal.pid)
    expect(await terminal.inspectForeground()).toEqual({ processGroupId: terminal.pid, inputWaiting: false })
    await expect(terminal.signalForeground('SIGKILL')).rejects.toThrow(/refusing to SIGKILL the terminal shell/)
    for (const signal of ['SIGTSTP', 'SIGHUP']) {
      await expect(terminal.signalForeground(signal)).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_UNSUPPORTED', message: expect.stringContaining(signal) })
    }
    await expect(terminal.signalForeground('SIGUSR1')).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_INVALID_SIGNAL' })
    // Typed input reaches the console's input pipe while the command runs.
    await terminal.write('typed\r')
    expect(running(terminal.pid)).toBe(true)
    expect(await terminal.signalForeground('SIGTERM')).toBe(terminal.pid)
    await terminal.done
    expect(running(terminal.pid)).toBe(false)
    expect(await terminal.inspectForeground()).toBeUndefined()
    await expect(terminal.write('late\r')).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_TERMINAL_CLOSED' })
  })

  it('terminate() ends the command and what it started through its job, and settles once all are gone', async () => {
    const child = "require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' })"
    const { terminal } = await onConsole(reporting('pids', `process.pid + ' ' + ${child}.pid`, 'setTimeout(() => {}, 60_000)'))
    const pids = (await report('pids', 'both to start')).split(' ').map(Number)
    expect(pids[0]).toBe(terminal.pid)
    expect(pids.every(running)).toBe(true)
    await terminal.terminate()
    await terminal.terminate()
    expect(pids.filter(running)).toEqual([])
    await terminal.done
  })

  it('disposing the runtime ends its terminals', async () => {
    const { terminal } = await onConsole(reporting('ready', "'ready'", 'setTimeout(() => {}, 60_000)'))
    await report('ready', 'the command to start')
    await state.runtime.dispose()
    expect(running(terminal.pid)).toBe(false)
    await terminal.done
  })

  consoleCommands.it('what a command shows arrives as VT sequences, on a console of the asked size', async () => {
    const { terminal, text, screen, ended } = await onConsole(nodeArgv('console.log(`SIZE ${process.stdout.rows}x${process.stdout.columns} PID ${process.pid}`)'), {
      rows: 33,
      cols: 101,
    })
    expect(await terminal.done).toEqual({ exitCode: 0, signal: null })
    await ended
    expect(text()).toContain('\x1b[')
    expect(screen()).toContain(`SIZE 33x101 PID ${terminal.pid}`)
  })

  consoleCommands.it('cmd: what it echoes, with TERM and the spec\'s variables, and its exit code', async () => {
    const { terminal, screen, ended } = await onConsole(['cmd.exe', '/d', '/c', 'echo [%TERM%][%DSH_TERMINAL_SPEC%][%TERMINAL_SPEC_TOKEN%] & exit 7'], {
      env: { DSH_TERMINAL_SPEC: 'managed', TERMINAL_SPEC_TOKEN: 'not-for-the-terminal' },
    })
    expect(await terminal.done).toEqual({ exitCode: 7, signal: null })
    await ended
    expect(screen()).toContain('[dumb][managed][not-for-the-terminal]')
  })

  consoleCommands.it('pwsh: an interactive shell on a console of the asked size; SIGINT, a typed ^C, stops the command it runs', async () => {
    const { terminal, screen } = await onConsole(['pwsh', '-NoLogo', '-NoProfile'], { rows: 33, cols: 101 })
    await terminal.write("'SIZE ' + [Console]::WindowHeight + 'x' + [Console]::WindowWidth\r")
    await waitFor(() => screen().includes('SIZE 33x101'), 'the size', 30_000)
    // Only the running command prints "sleeping" (the typed line shows 'sle' + 'eping').
    await terminal.write("'sle' + 'eping'; Start-Sleep -Seconds 120\r")
    await waitFor(() => screen().includes('sleeping'), 'the sleep to start', 30_000)
    expect(await terminal.signalForeground('SIGINT')).toBe(terminal.pid)
    // Unless ^C stopped the sleep, this line runs only after 120 s.
    await terminal.write('exit 5\r')
    expect(await terminal.done).toEqual({ exitCode: 5, signal: null })
  }, 60_000)
})

describe('a terminal of ctx.subprocess on every platform', () => {
  const state = withRuntime()

  it('bad specs are refused with a code and nothing started; an aborted signal rejects before anything starts', async () => {
    const base = { argv: WINDOWS ? ['cmd.exe', '/d', '/k'] : SHELL, cwd: state.tmp, rows: 24, cols: 80, graceMs: 500 }
    await expect(state.subprocess.spawnTerminal({ ...base, argv: [] })).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_INVALID_SPEC' })
    await expect(state.subprocess.spawnTerminal({ ...base, rows: 0 })).rejects.toMatchObject({
      code: 'ERR_SHELL_EXEC_INVALID_SPEC',
      message: expect.stringContaining('stdio.terminal.rows'),
    })
    await expect(state.subprocess.spawnTerminal({ ...base, cols: 1.5 })).rejects.toMatchObject({
      code: 'ERR_SHELL_EXEC_INVALID_SPEC',
      message: expect.stringContaining('stdio.terminal.cols'),
    })
    await expect(state.subprocess.spawnTerminal({ ...base, argv: ['no-such-program-here'] })).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_SPAWN_FAILED' })
    await expect(state.subprocess.spawnTerminal({ ...base, cwd: path.join(state.tmp, 'missing') })).rejects.toMatchObject({ code: 'ERR_SHELL_EXEC_INVALID_WORKDIR' })
    const controller = new AbortController()
    controller.abort()
    await expect(state.subprocess.spawnTerminal({ ...base, signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('execute() runs commands on pipes: stdio.terminal is refused there', async () => {
    await expect(execute({ command: ['true'], stdio: { terminal: { rows: 24, cols: 80 } } })).rejects.toMatchObject({
      code: 'ERR_SHELL_EXEC_INVALID_SPEC',
      message: expect.stringContaining('stdio.terminal'),
    })
  })
})
