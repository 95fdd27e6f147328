'use strict'
// What human output may use, by the conventions other tools follow: colour on
// a terminal, unless NO_COLOR is set (https://no-color.org: any non-empty
// value) or TERM is "dumb"; FORCE_COLOR overrides both ways, as for Node
// itself ("0" or "false": never; any other value: also into a pipe). The
// width: COLUMNS when it is a positive number, else the terminal's, else 80.

const TONES = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
}

/** Whether output written to `stream` may carry colour. */
function colorEnabled(stream, env = process.env) {
  if (env.FORCE_COLOR !== undefined) return !['0', 'false'].includes(env.FORCE_COLOR)
  if (!stream || !stream.isTTY) return false
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  return env.TERM !== 'dumb'
}

/** Columns available on `stream`: COLUMNS, else the terminal's width on a TTY, else 80. */
function outputWidth(stream, env = process.env) {
  const columns = /^\d+$/.test(env.COLUMNS ?? '') ? Number(env.COLUMNS) : 0
  if (columns > 0) return columns
  return stream && stream.isTTY && stream.columns > 0 ? stream.columns : 80
}

/** A painter: `paint('dim', text)` wraps text in that tone's escapes when `enabled`, else returns it. */
function painter(enabled) {
  return (tone, text) => {
    const codes = enabled && tone ? TONES[tone] : undefined
    return codes ? `\u001b[${codes[0]}m${text}\u001b[${codes[1]}m` : text
  }
}

module.exports = { TONES, colorEnabled, outputWidth, painter }
