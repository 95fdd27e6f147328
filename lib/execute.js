'use strict'
// `execute()` and the `ShellExecution` it resolves with: the command as the
// caller holds it (its result, streams, kill, unref), its async resource for
// open-handle reports, and the report of commands still running at the
// host's exit. The wrappers pass the caller's `process.env` explicitly: test
// runners such as Jest give each test file its own copy, which native code
// cannot see.

const { AsyncResource } = require('node:async_hooks')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

const binding = require('./native.js')
const hostSignals = require('./host-signals.js')
const { registryOf, warnLeftOut } = require('./native-registry.js')
const { answerAll } = require('./packed.js')
const { invalidThis } = require('./js-errors.js')
const { streamsOf } = require('./pipes.js')
const { packEnvironment } = require('./environment.js')

/** Only `execute()` makes executions: `new ShellExecution()` throws. */
const kConstruct = Symbol('ShellExecution.construct')

/** Commands that run, each by its resource: what the host's exit reports of them (`reportRunning`). */
const runningCommands = new Set()

/**
 * A command as `async_hooks` see it: made where `execute()` was called, so an
 * open-handle report (Jest's `--detectOpenHandles`, `why-is-node-running`)
 * shows that stack; active (`hasRef()`) while the command runs and holds the
 * event loop open, destroyed when it ends. Reports read `hasRef()` from the
 * resource, as they do from a timer.
 */
class CommandResource extends AsyncResource {
  running = true
  referenced = true
  /** The spec's `command` and pid, once it runs: read only if the host exits meanwhile. */
  #spec
  #pid
  /**
   * Where `execute()` was called, when call sites are kept: V8's frames in a
   * plain holder, formatted only if the report reads its `stack`.
   */
  #origin

  constructor(spec) {
    super('DshShellExecution', { requireManualDestroy: true })
    if (KEEP_CALL_SITES) Error.captureStackTrace((this.#origin = {}), execute)
    this.#spec = spec
  }

  hasRef() {
    return this.running && this.referenced
  }

  /** The command runs as `pid`: the host's exit reports it from now on. */
  started(pid) {
    this.#pid = pid
    if (this.running) runningCommands.add(this)
  }

  ended() {
    this.running = false
    this.#spec = undefined
    this.#origin = undefined
    runningCommands.delete(this)
    this.emitDestroy()
  }

  /** The line the host's exit prints while this command runs. */
  exitReport() {
    const where = this.#origin === undefined ? undefined : callSite(this.#origin)
    const started = where !== undefined ? `, started at ${where}` : KEEP_CALL_SITES ? '' : '; DEBUG=dsh-shell-env says where it was started'
    return `dsh-shell-env: command still running at exit, ended with the host: ${commandText(this.#spec)} (pid ${this.#pid})${started} (await its result(), kill() it, or unref() it)\n`
  }
}

/**
 * Whether each `execute()` keeps where it was called, for the report. A
 * stack costs some 20 µs a call (Node has V8 take a detailed trace too):
 * `execute()` of `/bin/true` took 1.12× as long with it. So only where the
 * report is wanted and that cost is not felt: under a test runner (Vitest,
 * Jest, `node --test`) or with `DEBUG=dsh-shell-env`.
 */
const KEEP_CALL_SITES = (() => {
  const env = process.env
  if (env.VITEST !== undefined || env.JEST_WORKER_ID !== undefined || env.NODE_TEST_CONTEXT !== undefined) return true
  return (env.DEBUG ?? '').split(/[\s,]+/).some((name) => name === '*' || name === 'dsh-shell-env')
})()

/**
 * `spec.command` as one short line, whatever the spec holds by now; masked
 * as the command line masks a value when it carries a credential (a token in
 * a `curl` header), since the line may end up in a CI log.
 */
function commandText(spec) {
  let text
  try {
    const command = spec?.command
    const quoted = (arg) => (/^[\w@%+=:,./-]+$/.test(String(arg)) ? String(arg) : JSON.stringify(String(arg)))
    text = (Array.isArray(command) ? command.map(quoted).join(' ') : String(command)).replace(/\s*\n\s*/g, ' ')
    text = binding.maskedValue('command', text) ?? text
  } catch {
    return 'a command'
  }
  return text.length > 120 ? `${text.slice(0, 119)}…` : text
}

/**
 * The first frame of `holder`'s stack outside this package (`file:line:column`),
 * or undefined when there is none: the caller of `execute()`, or of the
 * executor that called it.
 */
function callSite(holder) {
  let stack
  try {
    stack = String(holder.stack)
  } catch {
    return undefined
  }
  for (const line of stack.split('\n').slice(1)) {
    const frame = /^\s*at (?:.*?\((.*)\)|(.*))$/.exec(line)
    const location = frame?.[1] ?? frame?.[2]
    // A file's line and column; not Node's own, `native`, or `index 0` of a Promise.all.
    if (!location || !/:\d+:\d+$/.test(location) || location.startsWith('node:')) continue
    if (!OWN_CODE.some((own) => location.startsWith(own))) return location
  }
  return undefined
}

/** Where this package's own code is, as paths and as file URLs: the frames a call site is not. */
const OWN_CODE = [__dirname, ...['executor', 'subprocess', 'cli'].map((name) => path.join(__dirname, '..', name))]
  .flatMap((folder) => [path.join(folder, path.sep), pathToFileURL(folder).href + '/'])

/**
 * Writes a line to stderr for each command that still runs and holds the host
 * (not unref()ed), as the host exits: what Jest's `--detectOpenHandles`
 * tells, for any runner and plain scripts. Once: the host goes.
 */
function reportRunning() {
  for (const resource of runningCommands) {
    if (!resource.hasRef()) continue
    try {
      fs.writeSync(2, resource.exitReport())
    } catch {
      // Nothing to write to: the report is a courtesy.
    }
  }
  runningCommands.clear()
}
hostSignals.onHostExit(reportRunning)

/** Where a result and its streams keep the native execution that owns their spill files. */
const kSpillFiles = Symbol('spill files')

/**
 * `result` made to keep `native`, and with it the spill files its streams
 * name, alive for as long as the result or one of its streams is held: a
 * file goes when nothing that names it is reachable any more (unless kept
 * with `keepSpillFiles`).
 */
function holdingSpillFiles(result, native) {
  for (const stream of [result.stdout, result.stderr]) {
    if (typeof stream.spillPath === 'string') {
      Object.defineProperty(stream, kSpillFiles, { value: native })
      Object.defineProperty(result, kSpillFiles, { value: native, configurable: true })
    }
  }
  return result
}

/**
 * A running or finished command. `done` and `result()` are settled from one
 * native call, so every caller sees the same promise and the same result.
 */
class ShellExecution {
  #native
  #resource
  #result
  #pipes

  constructor(token, native, resource, signal) {
    if (token !== kConstruct) {
      const message = 'Illegal constructor: ShellExecution instances come from execute()'
      throw Object.assign(new TypeError(message), { code: 'ERR_ILLEGAL_CONSTRUCTOR' })
    }
    this.#native = native
    this.#resource = resource
    this.#pipes = streamsOf(native.takePipes())
    // The pending native call holds this callback and so the resource: a
    // report can see a running command whose execution nobody keeps.
    this.#result = new Promise((resolve) => {
      native.onFinish((result) => {
        resource.ended()
        // What the caller gave `abort()`, so the result says why it was aborted.
        if (result.aborted && signal?.reason !== undefined) result.abortReason = signal.reason
        resolve(holdingSpillFiles(result, native))
      })
    })
    /** Settles (never rejects) once the whole process group is gone. */
    this.done = this.#result.then(hostSignals.commandEnded)
  }

  static #nativeOf(execution, member) {
    if (execution === null || typeof execution !== 'object' || !(#native in execution)) {
      throw invalidThis('ShellExecution', member)
    }
    return execution.#native
  }

  get pid() {
    return ShellExecution.#nativeOf(this, 'pid').pid
  }

  get status() {
    return ShellExecution.#nativeOf(this, 'status').status
  }

  get exitCode() {
    return ShellExecution.#nativeOf(this, 'exitCode').exitCode ?? null
  }

  get signal() {
    return ShellExecution.#nativeOf(this, 'signal').signal ?? null
  }

  /** SIGTERM to the group, SIGKILL after the grace; `true` once while running. */
  kill() {
    return ShellExecution.#nativeOf(this, 'kill()').kill()
  }

  /**
   * Lets the host's event loop end while the command runs, as
   * `child_process`'s `unref()` does; the command then ends with the host
   * (its group is killed at exit). Returns the execution.
   */
  unref() {
    ShellExecution.#nativeOf(this, 'unref()').unref()
    this.#resource.referenced = false
    return this
  }

  /** Undoes `unref()`: the running command keeps the host alive again. Returns the execution. */
  ref() {
    ShellExecution.#nativeOf(this, 'ref()').ref()
    this.#resource.referenced = true
    return this
  }

  /** Whether the command is running and keeps the host's event loop alive. */
  hasRef() {
    ShellExecution.#nativeOf(this, 'hasRef()')
    return this.#resource.hasRef()
  }

  /** Output produced since the previous call. */
  readOutput() {
    return ShellExecution.#nativeOf(this, 'readOutput()').readOutput()
  }

  /** A captured stream's text from whole-stream byte `fromByte` on, consuming nothing. */
  readFrom(stream, fromByte) {
    const read = ShellExecution.#nativeOf(this, 'readFrom()').readFrom(stream, fromByte)
    const result = { text: read.text, nextOffset: read.nextOffset, lossy: read.lossy }
    if (read.spillPath) result.spillPath = read.spillPath
    return result
  }

  /** The child's stdin with `stdio.stdin: 'pipe'`, else `null`. */
  get stdin() {
    ShellExecution.#nativeOf(this, 'stdin')
    return this.#pipes.stdin
  }

  /** The child's raw stdout with `stdio.stdout: 'pipe'`, else `null`. */
  get stdout() {
    ShellExecution.#nativeOf(this, 'stdout')
    return this.#pipes.stdout
  }

  /** The child's raw stderr with `stdio.stderr: 'pipe'`, else `null`. */
  get stderr() {
    ShellExecution.#nativeOf(this, 'stderr')
    return this.#pipes.stderr
  }

  /** The run's result; the same promise on every call (never rejects). */
  result() {
    if (this === null || typeof this !== 'object' || !(#result in this)) {
      return Promise.reject(invalidThis('ShellExecution', 'result()'))
    }
    return this.#result
  }
}

/** Starts a command; resolves once the child runs. */
async function execute(spec) {
  // Made before the first await, so its stack is the caller's.
  const resource = new CommandResource(spec)
  // Counted from before the spawn, so a signal can never find a command unseen.
  hostSignals.commandStarting()
  let native
  const withRegistry = withNativeRegistry(withReportedOutputErrors(spec))
  try {
    native = await binding.execute(withRegistry, process.env, answerAll, packEnvironment)
  } catch (error) {
    resource.ended()
    hostSignals.commandEnded()
    throw error
  }
  // The directories the collection before the spawn left out of PATH.
  let registry
  try {
    registry = withRegistry?.registry
  } catch {
    // The binding read it already; a getter that throws now has nothing to report.
  }
  if (registry instanceof binding.ShellEnvRegistry) warnLeftOut(registry)
  const execution = new ShellExecution(kConstruct, native, resource, signalOf(spec))
  resource.started(native.pid)
  return execution
}

/** The spec's abort signal, if it is one (the binding reported anything else already). */
function signalOf(spec) {
  try {
    const signal = spec?.signal
    return signal instanceof AbortSignal ? signal : undefined
  } catch {
    return undefined
  }
}

/**
 * `spec` with its `registry` replaced by the native registry it wraps, which
 * is what the binding collects from. Anything else (no registry, a wrong
 * value, a getter that throws) goes to the binding as it is, to be reported
 * there with its code.
 */
function withNativeRegistry(spec) {
  let registry
  try {
    registry = spec?.registry
  } catch {
    return spec
  }
  const native = registryOf(registry)
  if (native === registry) return spec
  return Object.create(spec, { registry: { value: native, enumerable: true } })
}

/**
 * `spec` with its `onOutput` wrapped so that a throw is reported, once per
 * execution, as a process warning (code `DSH_SHELL_ENV_ON_OUTPUT_THREW`)
 * instead of vanishing; the output keeps being captured either way.
 */
function withReportedOutputErrors(spec) {
  let onOutput
  try {
    onOutput = spec?.onOutput
  } catch {
    return spec
  }
  if (typeof onOutput !== 'function') return spec
  let reported = false
  const guarded = (chunk) => {
    try {
      onOutput(chunk)
    } catch (error) {
      if (reported) return
      reported = true
      process.emitWarning(`onOutput threw (${describeThrown(error)}); the command's output is still captured, later throws of this execution are not reported`, {
        type: 'DshShellEnvWarning',
        code: 'DSH_SHELL_ENV_ON_OUTPUT_THREW',
      })
    }
  }
  return Object.create(spec, { onOutput: { value: guarded, enumerable: true } })
}

/** A thrown value in words, whatever it is (a Symbol, an object whose toString throws). */
function describeThrown(value) {
  try {
    return value instanceof Error ? `${value.name}: ${value.message}` : String(value)
  } catch {
    return typeof value
  }
}

module.exports = { ShellExecution, execute }
