'use strict'
// Help texts: the top level lists the commands, each command its usage,
// description and options (from the option table in args.js).

const { OPTIONS } = require('./args.js')
const { PROGRAM } = require('./errors.js')

const EXIT_CODES = `Exit codes: 0 ok; 1 a plugin, the registry or the spawn failed; 2 usage error;
run: the command's own exit code, 128+n when a signal n ended it, 127 when
the program was not found, 126 when it could not be executed.`

/** Left column at `width`, text wrapped to 80 columns under its own indent. */
function definitionList(entries, width) {
  const indent = ' '.repeat(2 + width + 2)
  return entries
    .map(([term, text]) => {
      const lines = []
      let current = ''
      for (const word of text.split(' ')) {
        if (current && indent.length + current.length + 1 + word.length > 80) {
          lines.push(current)
          current = word
        } else {
          current = current ? `${current} ${word}` : word
        }
      }
      lines.push(current)
      return `  ${term.padEnd(width)}  ${lines.join(`\n${indent}`)}`
    })
    .join('\n')
}

function topHelp(commands) {
  const width = Math.max(...commands.map((command) => command.name.length))
  return `Usage: ${PROGRAM} <command> [options]

Shows and runs the managed environment a harness shell call receives: the
DSH_* variables, who owns them, and what the pipeline keeps or removes.

Commands:
${definitionList(
  commands.map((command) => [command.name, command.summary]),
  width,
)}

Run '${PROGRAM} <command> --help' for a command's options.
${EXIT_CODES}
`
}

function commandHelp(command) {
  const entries = [...command.options, 'debug', 'help'].map((name) => {
    const option = OPTIONS[name]
    const flag = `${option.short ? `-${option.short}, ` : ''}--${name}${option.value ? ` ${option.value}` : ''}`
    return [flag, option.help]
  })
  const width = Math.max(...entries.map(([flag]) => flag.length))
  return `Usage: ${PROGRAM} ${command.usage}

${command.description}

Options:
${definitionList(entries, width)}
${command.takesCommand ? `\n${EXIT_CODES}\n` : ''}`
}

/** The help text for `command`, or the top-level help. */
function helpText(commands, command) {
  return command ? commandHelp(command) : topHelp(commands)
}

module.exports = { helpText }
