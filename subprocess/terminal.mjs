// `ctx.subprocess.spawnTerminal()`: a command on a real terminal, spawned by
// this package's spawner.
//
// POSIX: the command leads a session of its own on a pseudo-terminal's
// slave; the host keeps the master, which is the handle's output. Its
// foreground group is asked of the terminal (`tcgetpgrp`) and whether that
// group waits for input of `/proc` (Linux), in Rust. Input goes through a
// pipe that Rust relays to the master: Node writes a terminal synchronously,
// so a command that does not read would stall the host's thread.
//
// Windows (10 version 1809 and later): the command runs on a pseudo console
// (ConPTY) inside its Job Object; the host keeps the console's two pipes, the
// output and the input. As in the runtime this one replaces
// (`@deepseek-ai/dsh-subprocess-local`, through node-pty): the foreground is
// always the command itself and never "waiting for input", SIGINT is a typed
// ^C (`\x03`), SIGTERM ends the command (the console's hang-up, then its job
// after the grace), and SIGTSTP and SIGHUP do not exist there.
//
// On both, the input is a writable stream with backpressure (`input`:
// `write()` returns false, then 'drain'), `write()` resolves once its bytes
// are in the pipe, and the whole tree ends as any command's does.

import { createRequire } from 'node:module'
import net from 'node:net'
import { PassThrough } from 'node:stream'
import tty from 'node:tty'

const WINDOWS = process.platform === 'win32'

const require = createRequire(import.meta.url)
const binding = require('../lib/native.js')
const { codedError } = require('../lib/js-errors.js')
const { packEnvironment } = require('../lib/environment.js')

/** The signals a terminal's foreground group may be sent (the seam's `SubprocessTerminalSignal`). */
const FOREGROUND_SIGNALS = new Set(['SIGINT', 'SIGTERM', 'SIGKILL', 'SIGTSTP', 'SIGHUP'])

/**
 * One command on a terminal and its session. `done` settles once the whole
 * session is gone (the command's exit, and what it left behind ended within
 * the grace); `output` ends after the terminal's last output.
 */
class NativeTerminalHandle {
  #native
  #master
  #fd
  #closed = false
  #ended
  #terminating

  constructor(native, terminal) {
    this.#native = native
    this.#fd = terminal.fd
    /** The command's own pid: its session's and first group's id. */
    this.pid = terminal.pid
    this.output = new PassThrough()
    /** The terminal's input, a writable stream with backpressure. */
    this.input = new net.Socket({ fd: terminal.input, readable: false, writable: true })
    // Once the terminal ended, a write fails (EPIPE): `write()` reports that, never as an unhandled error.
    this.input.on('error', () => {})
    // A pseudo console's output is a pipe; a pseudo-terminal's master is a terminal.
    this.#master = WINDOWS ? new net.Socket({ fd: terminal.fd, readable: true, writable: false }) : new tty.ReadStream(terminal.fd)
    this.#master.on('data', (chunk) => this.output.write(chunk))
    // Once no process holds the slave, a read of the master fails with EIO
    // (on Windows the pipe ends once the console is closed): that is the end
    // of the terminal's output, not an error.
    this.#ended = new Promise((ended) => {
      this.#master.once('error', ended)
      this.#master.once('end', ended)
      this.#master.once('close', ended)
    }).then(() => this.#close())
    const exited = new Promise((resolve) => native.onFinish(resolve))
    this.done = exited.then(async (result) => {
      await this.#ended
      return { exitCode: result.exitCode ?? null, signal: result.signal ?? null }
    })
  }

  #close() {
    if (this.#closed) return
    // Before the descriptor is closed, so that no later call uses its number.
    this.#closed = true
    this.#master.destroy()
    this.input.destroy()
    this.output.end()
  }

  /**
   * Writes `data` to the terminal, as typed (no newline conversion); resolves
   * once it is on its way, which waits while a command does not read.
   */
  async write(data) {
    if (this.#closed) throw terminalClosed()
    /** @type {Promise<void>} */
    const written = new Promise((resolve, reject) =>
      // Any failure of the pipe means its relay ended: the terminal did.
      this.input.write(String(data), (error) => (error ? reject(terminalClosed(error)) : resolve())),
    )
    await written
  }

  /**
   * The foreground group and whether it waits for input; `undefined` once the
   * terminal ended. On Windows always the command itself, never waiting.
   */
  async inspectForeground() {
    if (this.#closed) return undefined
    if (WINDOWS) return { processGroupId: this.pid, inputWaiting: false }
    return binding.terminalForeground(this.#fd) ?? undefined
  }

  /** Sends `signal` to the foreground group; its id. The shell's own group is never SIGKILLed: terminate() ends it. */
  async signalForeground(signal) {
    if (!FOREGROUND_SIGNALS.has(signal)) {
      throw codedError('ERR_SHELL_EXEC_INVALID_SIGNAL', `signal must be one of ${[...FOREGROUND_SIGNALS].join(', ')} (got ${String(signal)})`)
    }
    const foreground = await this.inspectForeground()
    if (foreground === undefined) throw new Error(`cannot resolve the foreground process group of terminal ${this.pid}`)
    if (signal === 'SIGKILL' && foreground.processGroupId === this.pid) {
      throw new Error('refusing to SIGKILL the terminal shell; terminate the terminal session instead')
    }
    if (WINDOWS) return this.#signalOnWindows(signal)
    process.kill(-foreground.processGroupId, signal)
    return foreground.processGroupId
  }

  /** `signal` to the command on its pseudo console (the foreground is always the command). */
  async #signalOnWindows(signal) {
    if (signal === 'SIGINT') {
      await this.write('\x03')
    } else if (signal === 'SIGTERM') {
      this.#native.kill()
    } else {
      throw codedError('ERR_SHELL_EXEC_UNSUPPORTED', `signal ${signal} is unsupported on Windows; only SIGINT, SIGTERM, and SIGKILL are available`)
    }
    return this.pid
  }

  /** Ends the whole session (SIGTERM, SIGKILL after the grace) and waits until it is gone; idempotent. */
  terminate() {
    this.#terminating ??= (async () => {
      this.#native.kill()
      await this.done
    })()
    return this.#terminating
  }
}

/** The error of a write to a terminal that has ended; `cause`, what the pipe to it said. */
function terminalClosed(cause) {
  return codedError('ERR_SHELL_EXEC_TERMINAL_CLOSED', 'the terminal has ended: nothing can be written to it', cause)
}

/**
 * Starts `spec` (the seam's `SubprocessTerminalSpawnSpec`) on a new
 * terminal: `argv` as the runtime checked it, `environment` the spec's `env`
 * as this runtime's spawn layers (`{ env, dshEnv }`). Rejects with the
 * spawn's coded error, nothing started.
 */
export async function spawnTerminal(spec, argv, environment) {
  spec.signal?.throwIfAborted()
  const native = binding.spawn(
    {
      command: argv,
      workdir: spec.cwd,
      onExpiry: 'none',
      graceMs: spec.graceMs,
      ...environment,
      stdio: { terminal: { rows: spec.rows, cols: spec.cols } },
    },
    process.env,
    packEnvironment,
  )
  return new NativeTerminalHandle(native, native.takePipes().terminal)
}
