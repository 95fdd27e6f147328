'use strict'
// The command's own errors and how any error is shown: one line on stderr,
// `dsh-shell-env: [plugin FILE: ][CODE: ]message`.

const PROGRAM = 'dsh-shell-env'

/** A malformed command line: exit code 2. `help` names the help to point at. */
class UsageError extends Error {
  constructor(message, help = PROGRAM) {
    super(message)
    this.name = 'UsageError'
    this.help = help
  }
}

/** A failure the command reports itself: exit code `exitCode` (default 1). */
class CliError extends Error {
  /**
   * @param {string} message
   * @param {{ exitCode?: number, cause?: unknown }} [options]
   */
  constructor(message, { exitCode = 1, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'CliError'
    this.exitCode = exitCode
  }
}

/**
 * An error from (or about) a `--plugin` file; `file` is the path as given,
 * `line` where in it the error points (`12` or `12:5`), when known.
 */
class PluginError extends Error {
  constructor(file, cause, line) {
    super(`plugin ${line ? `${file}:${line}` : file}: ${describeError(cause)}`, { cause })
    this.name = 'PluginError'
    this.file = file
  }
}

/**
 * `CODE: message` for coded errors, `Name: message` for errors of another
 * kind than Error (SyntaxError, TypeError, …), else the message (for a
 * thrown value that is not an Error, what it was); one line.
 */
function describeError(error) {
  const isObject = error !== null && typeof error === 'object'
  // A thrown string is its message; any other thrown value says what it was (`threw null`).
  const message = isObject && typeof error.message === 'string' ? error.message : typeof error === 'string' ? error : `threw ${String(error)}`
  const code = isObject && typeof error.code === 'string' ? error.code : undefined
  const kind = isObject && typeof error.name === 'string' && error.name !== 'Error' ? error.name : undefined
  const label = code ?? kind
  const text = label && !message.startsWith(label) ? `${label}: ${message}` : message
  return text.replace(/\s*\n\s*/g, ' ').trim()
}

/** The stderr line for an error the command did not anticipate in detail. */
function errorLine(error) {
  if (error instanceof UsageError) return `${PROGRAM}: ${error.message} (see ${error.help} --help)`
  if (error instanceof PluginError || error instanceof CliError) return `${PROGRAM}: ${error.message.replace(/\s*\n\s*/g, ' ')}`
  return `${PROGRAM}: ${describeError(error)}`
}

/** The error's stack and those of its causes, for `--debug`. */
function debugText(error) {
  const parts = []
  for (let at = error, depth = 0; at !== undefined && at !== null && depth < 8; at = at.cause, depth += 1) {
    const stack = typeof at === 'object' && typeof at.stack === 'string' ? at.stack : String(at)
    parts.push(depth === 0 ? stack : `caused by: ${stack}`)
    if (typeof at !== 'object') break
  }
  return `${parts.join('\n')}\n`
}

/** Whether stacks are wanted: `--debug`, or `DEBUG` naming this program (or `*`), as the debug package reads it. */
function debugWanted(argv, env) {
  if (argv.includes('--debug')) return true
  return (env.DEBUG ?? '').split(/[\s,]+/).some((name) => name === '*' || name === PROGRAM || name === `${PROGRAM}:*`)
}

module.exports = { PROGRAM, UsageError, CliError, PluginError, debugText, debugWanted, describeError, errorLine }
