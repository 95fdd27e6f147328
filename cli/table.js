'use strict'
// Aligned text tables that fit a given width (80 columns by default): a header,
// a rule, then one line per row. Columns that do not fit give up width, widest
// first; a cell longer than its column is elided in the middle with `…`
// (`overflow: 'middle'`, the default) or word-wrapped onto further lines
// (`overflow: 'wrap'`). Widths count code points; control characters in cells
// are shown escaped, so a value can neither break a line nor reach the terminal
// as an escape sequence. Used by the `dsh-shell-env` command and `npm run demo`.

const { painter } = require('./style.js')

const ELLIPSIS = '…'
const DEFAULTS = { width: 80, indent: 2, gap: 3, color: false }

/** `text` with control characters escaped (`\n`, `\t`, `\x1b`, …). */
function printable(text) {
  return String(text).replace(/[\u0000-\u001f\u007f-\u009f]/g, (char) => {
    if (char === '\n') return '\\n'
    if (char === '\t') return '\\t'
    if (char === '\r') return '\\r'
    return `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`
  })
}

const codePoints = (text) => Array.from(text)
const widthOf = (text) => codePoints(text).length

/** `text` cut to `width` code points by replacing its middle with `…`. */
function elideMiddle(text, width) {
  const chars = codePoints(text)
  if (chars.length <= width) return text
  if (width <= 1) return ELLIPSIS.slice(0, width)
  const head = Math.ceil((width - 1) / 2)
  const tail = width - 1 - head
  return chars.slice(0, head).join('') + ELLIPSIS + (tail > 0 ? chars.slice(chars.length - tail).join('') : '')
}

/** `text` as lines of at most `width` code points, broken at spaces where possible. */
function wrap(text, width) {
  const lines = []
  let rest = codePoints(text)
  while (rest.length > width) {
    let cut = rest.lastIndexOf(' ', width)
    if (cut <= 0) cut = width
    lines.push(rest.slice(0, cut).join('').trimEnd())
    rest = rest.slice(cut)
    while (rest[0] === ' ') rest = rest.slice(1)
  }
  lines.push(rest.join(''))
  return lines
}

/**
 * `natural` widths shrunk to fit `available`: the widest columns are capped at
 * a common width (never below their `floors`), then what is left over goes
 * back to the capped columns from left to right.
 */
function shrink(natural, floors, available) {
  const total = (widths) => widths.reduce((sum, width) => sum + width, 0)
  const capped = (cap) => natural.map((width, column) => Math.min(width, Math.max(cap, floors[column])))
  let low = 0
  let high = Math.max(...natural)
  while (low < high) {
    const cap = Math.ceil((low + high) / 2)
    if (total(capped(cap)) <= available) low = cap
    else high = cap - 1
  }
  const widths = capped(low)
  let spare = available - total(widths)
  for (let column = 0; column < widths.length && spare > 0; column += 1) {
    const grow = Math.min(spare, natural[column] - widths[column])
    widths[column] += grow
    spare -= grow
  }
  return widths
}

/**
 * Column widths: natural widths when they fit. Otherwise `flex` columns give
 * up width first, down to their `min`; only when that is not enough do the
 * other columns shrink too (and the flex ones stay at their minimum).
 */
function fitWidths(natural, mins, flex, available) {
  const total = (widths) => widths.reduce((sum, width) => sum + width, 0)
  if (total(natural) <= available) return natural
  const othersKept = natural.map((width, column) => (flex[column] ? mins[column] : width))
  if (flex.some(Boolean) && total(othersKept) <= available) return shrink(natural, othersKept, available)
  return shrink(othersKept, mins, available)
}

/**
 * Renders a table as a string (no trailing newline).
 *
 * - `columns`: `{ title, flex?: boolean, keep?: boolean, overflow?: 'middle' | 'wrap', min?: number, tone?: string }[]`;
 *   `flex` columns give up width first (the others keep theirs while possible),
 *   `keep` columns never do
 * - `rows`: arrays of cells; a cell is a string or `{ text, tone }` (tones: see style.js)
 * - `options`: `{ width = 80, indent = 2, gap = 3, color = false }`
 */
function renderTable(columns, rows, options = {}) {
  const { width, indent, gap, color } = { ...DEFAULTS, ...options }
  const paint = painter(color)
  const cells = rows.map((row) =>
    columns.map((column, index) => {
      const cell = row[index] ?? ''
      const text = printable(typeof cell === 'object' ? cell.text : cell)
      return { text, tone: (typeof cell === 'object' && cell.tone) || column.tone }
    }),
  )
  const natural = columns.map((column, index) =>
    Math.max(widthOf(column.title), ...cells.map((row) => widthOf(row[index].text))),
  )
  // A `keep` column (the variable names) never gives up width: a name cut in
  // the middle could be another name. The line is wider than `width` then.
  const mins = columns.map((column, index) =>
    column.keep ? natural[index] : Math.min(natural[index], Math.max(widthOf(column.title), column.min ?? 8)),
  )
  const available = width - indent - gap * (columns.length - 1)
  const widths = fitWidths(natural, mins, columns.map((column) => column.flex === true), available)

  const margin = ' '.repeat(indent)
  const separator = ' '.repeat(gap)
  /** One output line from per-column `{ text, tone }` already fitted to their widths. */
  const line = (parts) => {
    let last = parts.length - 1
    while (last > 0 && parts[last].text === '') last -= 1
    return (
      margin +
      parts
        .slice(0, last + 1)
        .map(({ text, tone }, index) => {
          const padded = index === last ? text : text + ' '.repeat(widths[index] - widthOf(text))
          return tone ? paint(tone, text) + padded.slice(text.length) : padded
        })
        .join(separator)
    )
  }

  const out = [
    line(columns.map((column) => ({ text: column.title, tone: 'bold' }))),
    line(widths.map((columnWidth) => ({ text: '-'.repeat(columnWidth), tone: 'dim' }))),
  ]
  for (const row of cells) {
    const blocks = row.map(({ text }, index) =>
      columns[index].overflow === 'wrap' ? wrap(text, widths[index]) : [elideMiddle(text, widths[index])],
    )
    const height = Math.max(...blocks.map((block) => block.length))
    for (let at = 0; at < height; at += 1) {
      out.push(line(blocks.map((block, index) => ({ text: block[at] ?? '', tone: row[index].tone }))))
    }
  }
  return out.join('\n')
}

module.exports = { renderTable, elideMiddle, wrap, printable, ELLIPSIS }
