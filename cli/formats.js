'use strict'
// How `env` writes a snapshot for other tools: `export` lines a POSIX shell
// can source (`eval "$(dsh-shell-env env --format export)"`), and `.env`
// lines the dotenv package reads back unchanged. Masked values are never written as
// values: each becomes a comment naming the key, so sourcing the output can
// never set a variable to `<masked>`.

const FORMATS = ['table', 'json', 'export', 'dotenv']

/** `value` in single quotes for a POSIX shell: every byte literal, `'` as `'\''`. */
function shellQuote(value) {
  return `'${value.replaceAll("'", "'\\''")}'`
}

/**
 * `value` quoted so that dotenv reads it back unchanged, or `undefined` when
 * no quoting can: dotenv takes single- and backtick-quoted values literally
 * (new lines included, though it reads a carriage return as a new line)
 * and expands only `\\n` and `\\r` in double quotes, with no other escape.
 * So: single quotes, else backticks, else double quotes for a value without
 * `"` or a backslash (the only way to keep a carriage return).
 */
function dotenvQuote(value) {
  const doubled = () => (value.includes('"') || value.includes('\\') ? undefined : `"${value.replaceAll('\n', '\\n').replaceAll('\r', '\\r')}"`)
  if (value.includes('\r')) return doubled()
  if (!value.includes("'")) return `'${value}'`
  if (!value.includes('`')) return `\`${value}\``
  return doubled()
}

/**
 * What of `value` no .env quoting can hold together, in words (`', \` and "`,
 * `a carriage return and \`): the characters that ruled out each quoting.
 */
function unquotable(value) {
  const closing = ['"', '\\'].filter((char) => value.includes(char))
  const held = value.includes('\r') ? ['a carriage return', ...closing] : ["'", '`', ...closing]
  return held.length === 2 ? held.join(' and ') : `${held.slice(0, -1).join(', ')} and ${held[held.length - 1]}`
}

/**
 * The lines for `variables` (`{ key, value, masked }`, in order) in `format`
 * (`export` or `dotenv`), each ending in a newline.
 */
function formatLines(variables, format) {
  let text = ''
  for (const { key, value, masked } of variables) {
    if (masked) {
      text += `# ${key} is masked (--show-secrets writes it)\n`
    } else if (format === 'export') {
      text += `export ${key}=${shellQuote(value)}\n`
    } else {
      const quoted = dotenvQuote(value)
      text += quoted === undefined ? `# ${key} holds ${unquotable(value)}, which no .env quoting can hold together (--format export can)\n` : `${key}=${quoted}\n`
    }
  }
  return text
}

module.exports = { FORMATS, formatLines, shellQuote, dotenvQuote, unquotable }
