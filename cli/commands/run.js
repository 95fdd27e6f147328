'use strict'
// `dsh-shell-env run -- COMMAND...`: runs a command through execute() with the
// registry and execution, as the harness would, streaming its output live.

const os = require('node:os')

const { openRegistry, executionFor } = require('../registry.js')
const { CliError, PROGRAM, describeError } = require('../errors.js')
const { LIMIT_WORDS, limitAmount, processCount, tamperedInWords } = require('../../lib/limit-words.js')

const definition = {
  name: 'run',
  summary: 'run a command with that environment and exit with its exit code',
  usage: 'run [options] [--] COMMAND [ARG]...',
  description: `Runs COMMAND (argv, no shell: use 'bash -c "…"' for a script) through execute()
with the registry and execution, exactly as the harness spawns a shell call:
the managed variables are collected right before the spawn, the inherited
environment is scrubbed, and the child leads its own process group. Its stdin
is this command's when that is a pipe or a file (not a terminal), else
/dev/null; --no-stdin always gives /dev/null. Output is streamed as it
arrives. SIGINT, SIGTERM and SIGHUP received meanwhile are passed on to the
command's process group. Everything from COMMAND's first word on is its own;
'--' is needed only before a command whose first word starts with '-'.
--memory, --processes, --cpu, --file-size and --open-files limit the command
as execute()'s limits do ('limits' shows how this host enforces each); the
limit that ended it, or one it reached, is said on stderr.`,
  options: [
    'session',
    'profile',
    'home',
    'plugin',
    'scrub',
    'hardening',
    'no-hardening',
    'timeout',
    'memory',
    'processes',
    'cpu',
    'file-size',
    'open-files',
    'no-stdin',
  ],
  takesCommand: true,
}

const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP']

/** 127 when the program was not found, 126 when it could not be executed (as shells do). */
function spawnFailureCode(error) {
  return error.cause && error.cause.code === 'ENOENT' ? 127 : 126
}

/** Characters a shell would read as syntax: a command name holding one was meant for a shell. */
const SHELL_SYNTAX = /[\s$|&;<>()`'"*?~{}]/

/** The spawn error's line, with a hint when the command looks like a shell script. */
function spawnFailureMessage(error, command) {
  const line = describeError(error)
  if (error.cause?.code !== 'ENOENT' || !SHELL_SYNTAX.test(command[0])) return line
  return `${line} (it looks like a shell script: run it as ${PROGRAM} run bash -c '…')`
}

/** `file size limit (1 MiB)`: the limit as its option says it, with the value given. */
function limitInWords(limit, limits) {
  const value = limitAmount(limit, limits)
  return `${LIMIT_WORDS[limit]} limit${value === undefined ? '' : ` (${value})`}`
}

/** Whether `stream` (this command's stdin) is a pipe or a file, which the command may read. */
function readable(stream) {
  return stream !== undefined && stream !== null && !stream.isTTY && process.platform !== 'win32'
}

async function run(options, io) {
  const registry = await openRegistry(options, io.cwd)
  const spec = {
    command: options.command,
    scrub: { inherit: options.scrub, hardening: options.hardening },
    onOutput: ({ stream, text }) => (stream === 'stderr' ? io.stderr : io.stdout).write(text),
  }
  if (options.limits !== undefined) spec.limits = options.limits
  if (options.timeoutMs === 0) spec.onExpiry = 'none'
  else if (options.timeoutMs !== undefined) spec.timeoutMs = options.timeoutMs
  const passStdin = options.stdin !== false && readable(io.stdin)
  if (passStdin) spec.stdio = { stdin: 'pipe' }

  let running
  try {
    running = await registry.execute(spec, executionFor(options))
  } catch (error) {
    if (error && error.code === 'ERR_SHELL_EXEC_SPAWN_FAILED') {
      throw new CliError(spawnFailureMessage(error, options.command), { exitCode: spawnFailureCode(error), cause: error })
    }
    throw error
  }
  if (passStdin) {
    // A command that stops reading early closes its end: not an error here.
    running.stdin.on('error', () => {})
    io.stdin.pipe(running.stdin)
  }

  const forward = (signal) => {
    if (running.status !== 'running') return
    try {
      process.kill(-running.pid, signal)
    } catch {
      // The group is already gone.
    }
  }
  for (const signal of FORWARDED) process.on(signal, forward)
  let result
  try {
    result = await running.result()
  } finally {
    for (const signal of FORWARDED) process.off(signal, forward)
  }

  if (result.timedOut) io.stderr.write(`${PROGRAM}: timed out after ${result.timeoutMs} ms\n`)
  if (result.limit !== null) io.stderr.write(`${PROGRAM}: ended by its ${limitInWords(result.limit, spec.limits)}\n`)
  for (const limit of result.limitsHit) io.stderr.write(`${PROGRAM}: reached its ${limitInWords(limit, spec.limits)}\n`)
  for (const limit of result.limitsTampered) io.stderr.write(`${PROGRAM}: ${tamperedInWords(limit, spec.limits)}\n`)
  if (result.endedAfterExit > 0) io.stderr.write(`${PROGRAM}: ended ${processCount(result.endedAfterExit)} the command left running when it exited\n`)
  if (result.exitCode !== null) return result.exitCode
  if (result.signal) return 128 + (os.constants.signals[result.signal] ?? 0)
  return 1
}

module.exports = { ...definition, run }
