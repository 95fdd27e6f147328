'use strict'
// `dsh-shell-env`: parses the command line, runs the subcommand, reports
// errors as one line on stderr and exits with the right code (0 ok, 1 failure,
// 2 usage error, the child's code for `run`).

const { colorEnabled, outputWidth } = require('./style.js')
const { parseCommandLine } = require('./args.js')
const { helpText } = require('./help.js')
const { UsageError, debugText, debugWanted, errorLine } = require('./errors.js')
const COMMANDS = require('./commands/index.js')

/** Where commands read and write; `width` is the terminal's on a TTY, else 80. */
function processIo() {
  const { stdin, stdout, stderr } = process
  return {
    stdin,
    stdout,
    stderr,
    env: process.env,
    cwd: process.cwd(),
    color: colorEnabled(stdout),
    width: outputWidth(stdout),
  }
}

/** Runs the command line `argv` (without node and the script); resolves to the exit code. */
async function main(argv, io = processIo()) {
  let parsed
  try {
    parsed = parseCommandLine(argv, COMMANDS)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.stderr.write(`${errorLine(error)}\n`)
    return 2
  }
  if (parsed.kind === 'help') {
    io.stdout.write(helpText(COMMANDS, parsed.command))
    return 0
  }
  if (parsed.kind === 'version') {
    io.stdout.write(`${require('../package.json').version}\n`)
    return 0
  }
  try {
    return await parsed.command.run(parsed.options, io)
  } catch (error) {
    io.stderr.write(`${errorLine(error)}\n`)
    if (debugWanted(argv, io.env)) io.stderr.write(debugText(error))
    return typeof error?.exitCode === 'number' ? error.exitCode : 1
  }
}

/** Waits until everything written to `stream` so far is handed to the OS. */
function drained(stream) {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) resolve(undefined)
    else stream.write('', () => resolve(undefined))
  })
}

/**
 * The bin entry: runs `main`, then exits once stdout and stderr are flushed
 * (a plugin may leave timers or sockets behind; they must not keep the
 * command alive).
 */
function cli(argv = process.argv.slice(2)) {
  // A closed pipe (`dsh-shell-env catalog | head -1`) is not an error.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0)
      throw error
    })
  }
  main(argv).then(
    async (code) => {
      process.exitCode = code
      await Promise.all([drained(process.stdout), drained(process.stderr)])
      process.exit(code)
    },
    (error) => {
      process.stderr.write(`${errorLine(error)}\n`)
      process.exit(1)
    },
  )
}

module.exports = { main, cli, processIo }
