'use strict'
// How `env` writes a snapshot for other tools: `export` lines a POSIX shell
// can source (`eval "$(dsh-shell-env env --format export)"`), and `.env`
// lines as dotenv files spell them. Masked values are never written as
// values: each becomes a comment naming the key, so sourcing the output can
// never set a variable to `<masked>`.

const FORMATS = ['table', 'json', 'export', 'dotenv']

/** `value` in single quotes for a POSIX shell: every byte literal, `'` as `'\''`. */
function shellQuote(value) {
  return `'${value.replaceAll("'", "'\\''")}'`
}

/** `value` in double quotes as dotenv reads them: `\\`, `"`, newlines and carriage returns escaped. */
function dotenvQuote(value) {
  const escaped = value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n').replaceAll('\r', '\\r')
  return `"${escaped}"`
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
      text += `${key}=${dotenvQuote(value)}\n`
    }
  }
  return text
}

module.exports = { FORMATS, formatLines, shellQuote, dotenvQuote }
