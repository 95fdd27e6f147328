// `ctx.subprocess` over this package's spawner: a drop-in for
// @deepseek-ai/dsh-subprocess-local's LocalSubprocessRuntime (the published
// `SubprocessRuntime` seam of @deepseek-ai/dsh-subprocess). Every process it
// starts is spawned by Rust with the package's containment (its group, its
// descendants that left it, the host's death); the parent environment is the
// package's default scrub; piped streams are the child's raw pipes, wrapped
// in Node streams and never buffered here; collected streams keep a bounded
// tail with offset reads and a spill file.

import { createRequire } from 'node:module'
import { access, stat } from 'node:fs/promises'
import { constants } from 'node:fs'
import { delimiter, extname, isAbsolute, resolve } from 'node:path'

import { SubprocessRuntime } from '@deepseek-ai/dsh-subprocess'

import { warnIfShellEnvMissing } from '../executor/shell-env-missing.mjs'
import { spawnTerminal } from './terminal.mjs'

const require = createRequire(import.meta.url)
const binding = require('../lib/native.js')
const { codedError } = require('../lib/js-errors.js')
const { streamsOf } = require('../lib/pipes.js')
const { packEnvironment, unpackEnvironment } = require('../lib/environment.js')

const WINDOWS = process.platform === 'win32'
/** The longest delay one Node timer holds; a longer one fires at once. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1

/**
 * The caller's explicit `env` split the package's way: current `DSH_*` facts
 * (keys the registry could set, as the core judges them) are managed values
 * (merged last, never scrubbed), everything else goes over the scrubbed
 * parent, where another spelling in the `DSH_` namespace is removed;
 * `undefined` removes an inherited entry.
 * @param {Record<string, string | undefined> | undefined} env
 * @returns {{ env: Record<string, string | undefined>, dshEnv: Record<string, string>, terminalEnv: false }}
 */
function layers(env) {
  const explicit = {}
  const managed = {}
  for (const [key, value] of Object.entries(env ?? {})) {
    if (value !== undefined && binding.isManagedKey(key)) managed[key] = value
    else explicit[key] = value
  }
  return { env: explicit, dshEnv: managed, terminalEnv: false }
}

/** `spec.argv` as an array whose first element names a program, else a coded error. */
function argvOf(spec) {
  const argv = [...(spec?.argv ?? [])]
  if (argv.length === 0 || typeof argv[0] !== 'string' || argv[0].length === 0) {
    throw codedError('ERR_SHELL_EXEC_INVALID_SPEC', 'invalid argv: must hold a program')
  }
  return argv
}

/** The environment a child of this runtime gets with `env` as its explicit entries. */
function childEnv(env) {
  return unpackEnvironment(binding.buildEnvironmentPacked(layers(env), process.env, packEnvironment)).env
}

/** `name`'s value in `env`, compared as the platform compares names. */
function environmentValue(env, name) {
  if (env[name] !== undefined || !WINDOWS) return env[name]
  const upper = name.toUpperCase()
  return Object.entries(env).find(([key]) => key.toUpperCase() === upper)?.[1]
}

/**
 * The spec's output mode as the native spawner takes it.
 * @returns {{ mode: 'pipe' | 'inherit' | 'capture', maxBytes?: number, spillMaxBytes?: number }}
 */
function outputMode(mode, stream) {
  if (mode === 'pipe' || mode === 'inherit') return { mode }
  if (mode === null || typeof mode !== 'object' || mode.maxBytes === undefined) {
    throw codedError('ERR_SHELL_EXEC_INVALID_SPEC', `invalid stdio.${stream}: must be 'pipe', 'inherit' or { maxBytes, spill? }`)
  }
  // The byte counts follow the core's rule for execute()'s.
  for (const [field, bytes] of [['maxBytes', mode.maxBytes], ['spill.maxBytes', mode.spill?.maxBytes]]) {
    const problem = bytes === undefined ? null : binding.specOptionProblem({ stdoutMaxBytes: bytes })
    if (problem !== null) throw codedError('ERR_SHELL_EXEC_INVALID_SPEC', `invalid stdio.${stream}.${field}: ${problem.reason}`)
  }
  return { mode: 'capture', maxBytes: mode.maxBytes, spillMaxBytes: mode.spill?.maxBytes }
}

/**
 * A spawn failure as Node's `child_process` reports it (`code`, `errno`,
 * `syscall: 'spawn <argv0>'`, `path`, `spawnargs`), which consumers classify;
 * the package's coded error is its `cause`, whose `errno` is already Node's
 * (libuv's number: -4058 for `ENOENT` on Windows).
 */
function spawnError(error, argv) {
  const os = error?.cause
  const code = typeof os?.code === 'string' ? os.code : 'UNKNOWN'
  const failure = new Error(`spawn ${argv[0]} ${code}`, { cause: error })
  return Object.assign(failure, { code, errno: os?.errno, syscall: `spawn ${argv[0]}`, path: argv[0], spawnargs: argv.slice(1) })
}

/** A reader of one collected stream: offsets are the caller's, nothing is consumed. */
function reader(native, stream) {
  return {
    readFrom(fromByte) {
      const read = native.readFrom(stream, fromByte)
      const result = { text: read.text, nextOffset: read.nextOffset, lossy: read.lossy }
      if (read.spillPath) result.spillPath = read.spillPath
      return result
    },
  }
}

/**
 * One process tree. `done` settles at close (the whole tree gone, piped
 * output streams closed or the grace spent); `terminate()` is SIGTERM to the
 * tree, SIGKILL after the grace; `waitForExit()` is the whole tree gone.
 */
class NativeSubprocessHandle {
  constructor(spec) {
    const argv = argvOf(spec)
    const stdio = spec.stdio ?? {}
    const stdout = outputMode(stdio.stdout, 'stdout')
    const stderr = outputMode(stdio.stderr, 'stderr')
    const stdin = stdio.stdin
    const spills = [stdout, stderr].map((output) => output.spillMaxBytes).filter((bytes) => bytes !== undefined)
    /** @type {import('../index.js').ShellExecSpec} */
    const native = {
      command: argv,
      workdir: spec.cwd,
      onExpiry: 'none',
      graceMs: spec.graceMs,
      ...layers(spec.env),
      stdio: {
        ...(stdin === 'pipe' ? { stdin: 'pipe' } : {}),
        stdout: stdout.mode,
        stderr: stderr.mode,
      },
      ...(stdin !== null && typeof stdin === 'object' ? { stdin: String(stdin.data) } : {}),
      ...(stdout.maxBytes !== undefined ? { stdoutMaxBytes: stdout.maxBytes } : {}),
      ...(stderr.maxBytes !== undefined ? { stderrMaxBytes: stderr.maxBytes } : {}),
      // One spill cap for both streams; none at all when neither asks to spill.
      spillMaxBytes: spills.length > 0 ? Math.max(...spills) : 0,
      ...(spec.signal !== undefined ? { signal: spec.signal } : {}),
    }
    this.collected = {}
    try {
      this.native = binding.spawn(native, process.env, packEnvironment)
    } catch (error) {
      // Settled like child_process's 'error': a handle whose done rejects, and
      // whose collected streams read empty.
      this.native = undefined
      this.pid = -1
      this.stdin = this.stdout = this.stderr = undefined
      const empty = { readFrom: (fromByte) => ({ text: '', nextOffset: fromByte, lossy: false }) }
      if (stdout.mode === 'capture') this.collected.stdout = empty
      if (stderr.mode === 'capture') this.collected.stderr = empty
      this.done = Promise.reject(spawnError(error, argv))
      this.done.catch(() => {})
      this.exited = Promise.resolve()
      return
    }
    const execution = this.native
    this.pid = execution.pid
    const pipes = execution.takePipes()
    const streams = streamsOf(pipes)
    this.stdin = streams.stdin ?? undefined
    this.stdout = streams.stdout ?? undefined
    this.stderr = streams.stderr ?? undefined
    if (stdout.mode === 'capture') this.collected.stdout = reader(execution, 'stdout')
    if (stderr.mode === 'capture') this.collected.stderr = reader(execution, 'stderr')
    /** Settles once the whole tree is gone and reaped. */
    this.exited = new Promise((resolveExit) => execution.onFinish(resolveExit))
    const streamsClosed = Promise.all(
      [this.stdout, this.stderr].filter(Boolean).map((stream) => new Promise((closed) => stream.once('close', closed))),
    )
    this.done = this.exited.then(async (result) => {
      // As child_process's 'close': after the piped output ends, but never
      // held past the grace by a caller that does not read it.
      let timer
      const grace = new Promise((spent) => {
        timer = setTimeout(spent, Math.min(spec.graceMs, MAX_TIMER_DELAY_MS))
        timer.unref()
      })
      await Promise.race([streamsClosed, grace])
      clearTimeout(timer)
      // endedAfterExit: what the command left running, which the package ended.
      return { exitCode: result.exitCode ?? null, signal: result.signal ?? null, endedAfterExit: result.endedAfterExit ?? 0 }
    })
  }

  terminate() {
    this.native?.kill()
  }

  async waitForExit(signal) {
    if (signal?.aborted) return false
    if (signal === undefined) {
      await this.exited
      return true
    }
    return new Promise((settle) => {
      const onAbort = () => settle(false)
      signal.addEventListener('abort', onAbort, { once: true })
      this.exited.then(() => {
        signal.removeEventListener('abort', onAbort)
        settle(true)
      })
    })
  }
}

/** `ctx.subprocess`: processes spawned, contained and collected by this package. */
export class LocalSubprocessRuntime extends SubprocessRuntime {
  /** Live handles, ended and awaited at disposal. */
  live = new Set()
  /** Live terminals, ended and awaited at disposal. */
  terminals = new Set()

  constructor(ctx) {
    super(ctx)
    ctx.effect(() => async () => {
      const pending = [...this.live].map((handle) => {
        handle.terminate()
        return handle.waitForExit()
      })
      pending.push(...[...this.terminals].map((terminal) => terminal.terminate()))
      this.live.clear()
      this.terminals.clear()
      await Promise.all(pending)
    }, 'native subprocess teardown')
    warnIfShellEnvMissing(ctx, 'subprocess-local')
  }

  async resolveExecutable(command, env, signal) {
    if (typeof command !== 'string' || command.length === 0) throw new Error('subprocess-local: executable must be non-empty')
    signal?.throwIfAborted()
    const absolute = isAbsolute(command)
    if (!absolute && (command.includes('/') || (WINDOWS && command.includes('\\')))) {
      throw new Error(`subprocess-local: command ${JSON.stringify(command)} is a relative path; use an absolute path or a bare PATH name`)
    }
    const candidates = absolute ? [command] : this.executableCandidates(command, childEnv(env))
    for (const candidate of candidates) {
      signal?.throwIfAborted()
      try {
        if (!(await stat(candidate)).isFile()) continue
        await access(candidate, constants.X_OK)
        signal?.throwIfAborted()
        return candidate
      } catch {
        // Not this one.
      }
    }
    signal?.throwIfAborted()
    throw new Error(
      absolute
        ? `subprocess-local: command ${JSON.stringify(command)} is not an executable file`
        : `subprocess-local: command ${JSON.stringify(command)} was not found on PATH`,
    )
  }

  executableCandidates(command, env) {
    const path = environmentValue(env, 'PATH') ?? ''
    const extensions = WINDOWS && extname(command) === '' ? (environmentValue(env, 'PATHEXT') ?? '.COM;.EXE;.BAT;.CMD').split(';') : ['']
    return path
      .split(delimiter)
      .filter((directory) => isAbsolute(directory))
      .flatMap((directory) => extensions.map((extension) => resolve(directory, command + extension)))
  }

  spawn(spec) {
    const handle = new NativeSubprocessHandle(spec)
    if (handle.pid > 0) {
      this.live.add(handle)
      handle.exited.then(() => this.live.delete(handle))
    }
    return handle
  }

  /**
   * A command on a real terminal: a pseudo-terminal on POSIX, a pseudo
   * console on Windows 10 version 1809 and later (on an older Windows it
   * rejects with `ERR_SHELL_EXEC_UNSUPPORTED`). `TERM` is `dumb` unless
   * `spec.env` sets it.
   * @param {import('@deepseek-ai/dsh-subprocess').SubprocessTerminalSpawnSpec} spec
   * @returns {Promise<import('@deepseek-ai/dsh-subprocess').SubprocessTerminalHandle>}
   */
  async spawnTerminal(spec) {
    const terminal = await spawnTerminal(spec, argvOf(spec), layers({ TERM: 'dumb', ...spec?.env }))
    this.terminals.add(terminal)
    terminal.done.then(() => this.terminals.delete(terminal))
    return terminal
  }
}

export default LocalSubprocessRuntime
