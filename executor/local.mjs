// The native local executors' shared part: a `ctx.shell` provider (the
// published `ShellExecutor` seam of @deepseek-ai/dsh-shell) whose commands
// are spawned by this package's Rust spawner, with the one Rust environment
// pipeline, instead of `child_process`. The config, `resolve()`, the results
// and the process handles follow the published local executors
// (@deepseek-ai/dsh-bash-local, @deepseek-ai/dsh-pwsh-local); bash-local.mjs
// and pwsh-local.mjs supply the argv.

import { createRequire } from 'node:module'
import { isAbsolute } from 'node:path'

import { SHELL_SETTINGS_NAMESPACE, ShellExecutor } from '@deepseek-ai/dsh-shell'
import { installSettingsSection } from '@deepseek-ai/dsh-settings'
import z from '@deepseek-ai/schemastery'

import { ownerOf } from './ownership.mjs'
import { warnIfShellEnvMissing } from './shell-env-missing.mjs'

const require = createRequire(import.meta.url)
const { execute, limitMechanisms } = require('../lib/index.js')
const { codedError } = require('../lib/js-errors.js')
const { LIMIT_WORDS, limitAmount, processCount, tamperedInWords } = require('../lib/limit-words.js')
const { specOptionProblem } = require('../lib/native.js')
/** Default SIGTERM→SIGKILL grace. */
export const DEFAULT_GRACE_MS = 3e3
/** Default largest spill file per stream. */
export const DEFAULT_MAX_SPILL_BYTES = 64 * 1024 * 1024

// Cordis calls a service's methods with a proxy as `this` (its `ctx` is the
// caller's), and private fields cannot be read through a proxy: the
// executor's own state sits under module-private symbols instead.
const kOwner = Symbol('NativeShellExecutor.owner')

/**
 * What each executor class declares beside the base (bash-local.mjs, pwsh-local.mjs).
 * @typedef {{ label: string, envOverrides: Record<string, string>, Config: import('@deepseek-ai/schemastery').default<any> }} ExecutorClass
 */

/**
 * The class of `executor`, with the statics every executor declares.
 * @param {NativeShellExecutor} executor
 * @returns {ExecutorClass}
 */
function classOf(executor) {
  return /** @type {ExecutorClass} */ (/** @type {unknown} */ (executor.constructor))
}

/** The config fields both executors share, with the reference's defaults. */
export const COMMON_CONFIG = {
  cwd: z.string(),
  timeoutMs: z.number().default(12e4),
  maxTimeoutMs: z.number().default(6e5),
  maxOutputBytes: z.number().default(64e3),
  maxSpillBytes: z.number().default(DEFAULT_MAX_SPILL_BYTES),
  graceMs: z.number().default(DEFAULT_GRACE_MS),
  spillDir: z.string(),
  // Resource limits of every command (none by default); a request from
  // trusted code may override each.
  limits: z.object({
    memoryBytes: z.number(),
    processes: z.number(),
    cpuSeconds: z.number(),
    fileBytes: z.number(),
    openFiles: z.number(),
  }),
}

/** The `execute()` spec field each config field becomes, whose rule it follows. */
const CONFIG_SPEC_FIELDS = {
  timeoutMs: 'timeoutMs',
  maxTimeoutMs: 'timeoutMs',
  maxOutputBytes: 'stdoutMaxBytes',
  maxSpillBytes: 'spillMaxBytes',
  graceMs: 'graceMs',
  spillDir: 'spillDir',
}

/**
 * Throws `code` when the core refuses `value` as spec field `field`: the
 * executor keeps no rule of its own, only its own name for the value
 * (`maxOutputBytes`, `request.timeoutMs`) in the message.
 */
function assertAsSpecField(code, label, name, field, value) {
  const problem = specOptionProblem({ [field]: value })
  if (problem !== null) throw codedError(code, `${label}: ${name} ${problem.reason}`)
}

/**
 * Refuses a resolved config the executor could not run with: each value by
 * the rule of the spec field it becomes (the schema says only "a number"),
 * and a working directory that is not absolute, as the reference does.
 */
export function assertServiceableConfig(label, config) {
  for (const [name, field] of Object.entries(CONFIG_SPEC_FIELDS)) {
    if (config[name] !== undefined) assertAsSpecField('ERR_SHELL_EXEC_INVALID_CONFIG', label, name, field, config[name])
  }
  if (config.cwd !== undefined && !isAbsolute(config.cwd)) {
    throw codedError('ERR_SHELL_EXEC_INVALID_CONFIG', `${label}: cwd must be an absolute path (got ${JSON.stringify(config.cwd)})`)
  }
  if (config.limits !== undefined) assertEnforceableLimits(label, config.limits)
}

/**
 * Refuses configured limits the core refuses (checked by the core itself)
 * or this host cannot enforce: a command would otherwise fail only when run.
 */
function assertEnforceableLimits(label, limits) {
  let mechanisms
  try {
    mechanisms = limitMechanisms(limits)
  } catch (error) {
    throw codedError('ERR_SHELL_EXEC_INVALID_CONFIG', `${label}: ${error.message}`, error)
  }
  const refused = mechanisms.find((entry) => entry.value !== null && entry.refused !== null)
  if (refused !== undefined) {
    throw codedError('ERR_SHELL_EXEC_INVALID_CONFIG', `${label}: limits.${refused.field} cannot be enforced here: it ${refused.refused}`)
  }
}

/** ` 512 MiB`, ` 30 s`, ` 64` after a limit's words; empty without a value. */
function amount(limit, limits) {
  const value = limitAmount(limit, limits)
  return value === undefined ? '' : ` ${value}`
}

/**
 * What a command's limits did, one line each for the model: the limit that
 * ended it (`[killed: memory limit 512 MiB]`), those it reached
 * (`[limit reached: process limit 64]`) and those it tampered with
 * (`[limit tampered with: the command interfered with its memory limit (512 MiB), which may not have held]`);
 * empty when none acted.
 */
export function limitNotice(result, limits) {
  const lines = []
  if (result.limit) lines.push(`[killed: ${LIMIT_WORDS[result.limit]} limit${amount(result.limit, limits)}]`)
  for (const limit of result.limitsHit ?? []) lines.push(`[limit reached: ${LIMIT_WORDS[limit]} limit${amount(limit, limits)}]`)
  for (const limit of result.limitsTampered ?? []) lines.push(`[limit tampered with: ${tamperedInWords(limit, limits)}]`)
  const ended = result.endedAfterExit ?? 0
  if (ended > 0) lines.push(`[ended ${processCount(ended, 'background process')} when the command exited; use the jobs tool to keep one running]`)
  return lines.join('\n')
}

/** `stream`'s text with `notice` as its last line(s). */
function withNotice(stream, notice) {
  if (notice === '') return stream
  const separator = stream.text.length > 0 && !stream.text.endsWith('\n') ? '\n' : ''
  return { ...stream, text: `${stream.text}${separator}${notice}\n` }
}

/**
 * Refuses a config field the executor does not know, as the registry does: a
 * misspelt one (`cwdd`) would otherwise fall back to its default silently.
 */
function assertKnownFields(label, schema, config) {
  if (config === null || typeof config !== 'object') return
  const known = Object.keys(schema.dict ?? {})
  const unknown = Object.keys(config).find((name) => !known.includes(name))
  if (unknown !== undefined) {
    throw codedError('ERR_SHELL_EXEC_INVALID_CONFIG', `${label}: unknown config field ${JSON.stringify(unknown)} (the fields are ${known.join(', ')})`)
  }
}

/** `requested` (when given, a valid `timeoutMs`) or `fallback`, capped at `max`. */
function clampTimeout(label, requested, fallback, max) {
  if (requested !== undefined) assertAsSpecField('ERR_SHELL_EXEC_INVALID_REQUEST', label, 'request.timeoutMs', 'timeoutMs', requested)
  return Math.min(requested ?? fallback, max)
}

/** The config's limits with a trusted request's over them, as a spec field; none when neither sets any. */
function limitsOf(configured, requested) {
  const limits = { ...configured, ...requested }
  return Object.keys(limits).length > 0 ? { limits } : {}
}

/**
 * A captured stream as the seam's `CollectedOutput`; when its spill file
 * could not be written, a last line says that what came before the tail is
 * lost (the tool then also finds no full output to point to).
 */
function collected(stream) {
  const output = { text: stream.text, truncated: stream.truncated, ...(stream.spillPath ? { spillPath: stream.spillPath } : {}) }
  if (!stream.spillError) return output
  return withNotice(output, `[output lost: the spill file could not be written (${stream.spillError.code}); only the tail above was kept]`)
}

/**
 * A background process handle (the seam's `ShellProcess`), returned before
 * the spawn completes: reads are empty and a kill is remembered until the
 * child runs.
 */
export class LocalShellProcess {
  /** @type {import('@deepseek-ai/dsh-shell').ShellProcessStatus} */
  status = 'running'
  /** @type {number | null} */
  exitCode = null
  /** @type {NodeJS.Signals | null} */
  signal = null
  /**
   * Settles once the whole process group is gone; never rejects.
   * @type {Promise<void>}
   */
  done
  #execution
  #killRequested = false
  #pendingNotice

  /** The native execution, once started; a kill requested before then is delivered now. */
  attach(execution) {
    this.#execution = execution
    if (this.#killRequested) execution.kill()
  }

  /** The child never ran: it settles as killed, with the error on stderr. */
  failed(note) {
    this.status = 'killed'
    this.#pendingNotice = note
  }

  /** A line for the next read's stderr, after the command's own (what its limits did). */
  notice(note) {
    if (note !== '') this.#pendingNotice = note
  }

  /**
   * Output since the previous read (consuming), stdout first, then stderr in
   * a marked `[stderr]` section. `lossy` when unread output was dropped from
   * memory; the spill paths appear as soon as a stream starts spilling.
   */
  readOutput() {
    const read = this.#execution?.readOutput() ?? { stdout: '', stderr: '', lossy: false }
    let errText = read.stderr
    // Set only once the command ended (or never ran): its own stderr is all read.
    if (this.#pendingNotice !== undefined) {
      errText += `${errText.length > 0 && !errText.endsWith('\n') ? '\n' : ''}${this.#pendingNotice}`
      this.#pendingNotice = undefined
    }
    const separator = read.stdout.length > 0 && !read.stdout.endsWith('\n') ? '\n' : ''
    return {
      delta: read.stdout + (errText.length > 0 ? `${separator}[stderr]\n${errText}` : ''),
      lossy: read.lossy,
      ...(read.stdoutSpillPath ? { stdoutSpillPath: read.stdoutSpillPath } : {}),
      ...(read.stderrSpillPath ? { stderrSpillPath: read.stderrSpillPath } : {}),
    }
  }

  /** SIGTERM to the group, SIGKILL after the grace; `true` once, while running. */
  kill() {
    if (this.status !== 'running') return false
    this.status = 'killed'
    if (this.#execution !== undefined) this.#execution.kill()
    else this.#killRequested = true
    return true
  }
}

/** Runs the subclass hook; `done` never rejects, so a hook's failure is logged instead. */
function settle(executor, proc, stderr, spawnFailed, spawnError) {
  try {
    executor.onProcessDone(proc, stderr, spawnFailed, spawnError)
  } catch (error) {
    executor.ctx.logger?.error?.(error)
  }
}

/**
 * The shared executor. A subclass sets `static label`, `static Config`,
 * `static envOverrides` and `argv(spec)`.
 */
export class NativeShellExecutor extends ShellExecutor {
  /** No other service: the Rust spawner replaces `ctx.subprocess`. */
  static inject = []

  /** The currently authoritative config: the settings section, or the composition entry. */
  source

  /** Validated config (defaults applied). */
  get config() {
    return this.source()
  }

  constructor(ctx, config) {
    super(ctx)
    const Class = classOf(this)
    assertKnownFields(Class.label, Class.Config, config)
    let entry
    try {
      entry = Class.Config(config ?? {})
    } catch (error) {
      throw codedError('ERR_SHELL_EXEC_INVALID_CONFIG', `${Class.label}: ${error.message}`, error)
    }
    const validate = (value) => assertServiceableConfig(Class.label, value)
    validate(entry)
    this.source = () => entry
    // Who owns this executor's processes: its composition, across executor reloads.
    Object.defineProperty(this, kOwner, { value: ownerOf(ctx, Class.label) })
    warnIfShellEnvMissing(ctx, Class.label)
    installSettingsSection(ctx, SHELL_SETTINGS_NAMESPACE, Class.Config, entry, {
      validate,
      setSource: (current) => {
        this.source = current
      },
      onChange: () => this.configChanged(),
    })
  }

  /** Called when the settings section changed the config; the base does nothing. */
  configChanged() {}

  /**
   * The argv one command runs as: each executor defines its own.
   * @param {{ command: string }} _spec
   * @returns {string[]}
   */
  argv(_spec) {
    throw new TypeError(`${classOf(this).label} defines no argv()`)
  }

  /**
   * Fills `workdir` from `config.cwd` (else `process.cwd()`) and `timeoutMs`
   * from `config.timeoutMs`, capped at `config.maxTimeoutMs`; `stdoutMaxBytes`
   * defaults to `config.maxOutputBytes`.
   */
  resolve(request) {
    const { label } = classOf(this)
    const timeoutMs = clampTimeout(label, request.timeoutMs, this.config.timeoutMs, this.config.maxTimeoutMs)
    const stdoutMaxBytes = request.stdoutMaxBytes ?? this.config.maxOutputBytes
    if (request.stdoutMaxBytes !== undefined) {
      assertAsSpecField('ERR_SHELL_EXEC_INVALID_REQUEST', label, 'request.stdoutMaxBytes', 'stdoutMaxBytes', stdoutMaxBytes)
    }
    return {
      command: request.command,
      workdir: request.workdir ?? this.config.cwd ?? process.cwd(),
      timeoutMs,
      stdoutMaxBytes,
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
      ...(request.env !== undefined ? { env: request.env } : {}),
      ...(request.dshEnv !== undefined ? { dshEnv: request.dshEnv } : {}),
      ...limitsOf(this.config.limits, request.limits),
      sandboxPolicy: request.sandboxPolicy,
    }
  }

  /** One resolved spec and its argv as an `execute()` spec. */
  spawnSpec(spec, argv, stdoutMaxBytes, timing) {
    return {
      command: argv,
      workdir: spec.workdir,
      graceMs: this.config.graceMs,
      ...(spec.stdin !== undefined ? { stdin: spec.stdin } : {}),
      stdoutMaxBytes,
      stderrMaxBytes: this.config.maxOutputBytes,
      spillMaxBytes: this.config.maxSpillBytes,
      ...(this.config.spillDir !== undefined ? { spillDir: this.config.spillDir } : {}),
      // The model is told these paths and reads them later: they live until
      // the composition tears down, not until a result is garbage-collected.
      keepSpillFiles: true,
      // The default scrub: credentials by name and by value and every
      // inherited DSH_* name; everything else the developer's own
      // non-interactive shell would have (LD_LIBRARY_PATH, PYTHONPATH,
      // BASH_ENV, …) stays.
      terminalEnv: classOf(this).envOverrides,
      ...(spec.env !== undefined ? { env: spec.env } : {}),
      ...(spec.dshEnv !== undefined ? { dshEnv: spec.dshEnv } : {}),
      ...(spec.limits !== undefined ? { limits: spec.limits } : {}),
      ...timing,
    }
  }

  async run(spec) {
    return this.runArgv(spec, this.argv(spec))
  }

  /**
   * Runs an exact argv in the foreground: resolves for non-zero exits,
   * timeouts and aborts; rejects only when nothing could run (a bad workdir,
   * a missing program, a bad spec).
   */
  async runArgv(spec, argv) {
    const owner = this[kOwner]
    const timing = { timeoutMs: spec.timeoutMs, ...(spec.signal ? { signal: spec.signal } : {}) }
    const execution = await owner.spawning(execute(this.spawnSpec(spec, argv, spec.stdoutMaxBytes, timing)))
    const result = await owner.adopt(execution)
    return {
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      aborted: result.aborted,
      timeoutMs: spec.timeoutMs,
      stdout: collected(result.stdout),
      // The model reads the stderr section: a limit that acted says so there.
      stderr: withNotice(collected(result.stderr), limitNotice(result, spec.limits)),
    }
  }

  /**
   * @param {import('@deepseek-ai/dsh-shell').ShellExecSpec} spec
   * @returns {import('@deepseek-ai/dsh-shell').ShellProcess}
   */
  start(spec) {
    return this.startArgv(spec, this.argv(spec))
  }

  /**
   * Starts an exact argv in the background, without a timeout, and returns
   * its handle at once. A spawn failure settles the handle as `killed` with
   * the error on stderr; `done` never rejects. The process belongs to the
   * composition: it survives a reload of this executor.
   */
  startArgv(spec, argv) {
    const owner = this[kOwner]
    const proc = new LocalShellProcess()
    const timing = { onExpiry: 'none', ...(spec.signal ? { signal: spec.signal } : {}) }
    proc.done = owner
      .spawning(execute(this.spawnSpec(spec, argv, this.config.maxOutputBytes, timing)))
      .then(
        async (execution) => {
          proc.attach(execution)
          const result = await owner.adopt(execution)
          if (proc.status === 'running') {
            proc.status = spec.signal?.aborted === true || result.signal !== null ? 'killed' : 'completed'
          }
          proc.exitCode = result.exitCode
          proc.signal = result.signal
          proc.notice(limitNotice(result, spec.limits))
          settle(this, proc, result.stderr.text, false)
        },
        (error) => {
          const note = `spawn failed: ${String(error)}`
          proc.failed(note)
          settle(this, proc, note, true, error)
        },
      )
    return proc
  }

  /**
   * Settlement hook for subclasses that attach facts to a process: called
   * after the exit facts (or the spawn failure) are stamped, before `done`
   * resolves. The base does nothing.
   */
  onProcessDone(_proc, _stderr, _spawnFailed, _spawnError) {}
}
