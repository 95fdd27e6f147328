// Shared machinery for `npm run bench`: interleaved measurement on top of
// tinybench, statistics over pooled samples, and the printed table.

import { Bench } from 'tinybench'

/**
 * Measures `contenders` interleaved: every round runs each contender for
 * `perRound` iterations (a fresh tinybench `Bench` per contender and round,
 * sequential, no warmup of its own), and the order rotates from round to round,
 * so a slow phase of the machine hits every contender alike. `warmupRounds`
 * full rounds run first and are thrown away.
 *
 * A contender is `{ id, fn }` (timed by tinybench, one sample per call) or
 * `{ id, external(n) }` returning `n` samples in milliseconds that it timed
 * itself (the floor, timed inside its own process).
 *
 * Returns `Map<id, number[]>` of samples in milliseconds, in the order taken.
 */
export async function interleave(contenders, { rounds, perRound, warmupRounds = 1, onMeasureStart } = {}) {
  const samples = new Map(contenders.map((contender) => [contender.id, []]))
  for (let round = -warmupRounds; round < rounds; round++) {
    if (round === 0 && onMeasureStart) onMeasureStart()
    const offset = ((round % contenders.length) + contenders.length) % contenders.length
    const order = [...contenders.slice(offset), ...contenders.slice(0, offset)]
    for (const contender of order) {
      let taken
      if (contender.external) {
        taken = await contender.external(perRound)
      } else {
        const bench = new Bench({ iterations: perRound, time: 0, warmup: false, retainSamples: true, throws: true })
        bench.add(contender.id, contender.fn)
        await bench.run()
        const task = bench.tasks[0]
        if (task.result.state !== 'completed') {
          throw task.result.error ?? new Error(`${contender.id}: task ended in state ${task.result.state}`)
        }
        taken = task.result.latency.samples
      }
      if (round >= 0) samples.get(contender.id).push(...taken)
    }
  }
  return samples
}

/** Order statistics of `values` (any order); quantiles interpolate linearly. */
export function stats(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const n = sorted.length
  if (n === 0) return { n: 0, median: null, p99: null, mean: null, min: null, max: null }
  const quantile = (q) => {
    const position = (n - 1) * q
    const low = Math.floor(position)
    const high = Math.ceil(position)
    return sorted[low] + (sorted[high] - sorted[low]) * (position - low)
  }
  return {
    n,
    median: quantile(0.5),
    p99: quantile(0.99),
    mean: sorted.reduce((sum, value) => sum + value, 0) / n,
    min: sorted[0],
    max: sorted[n - 1],
  }
}

/** A duration in milliseconds, printed in s, ms or µs. */
export function formatMs(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—'
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`
  if (ms >= 1) return `${ms.toFixed(ms >= 100 ? 0 : ms >= 10 ? 1 : 2)} ms`
  return `${(ms * 1000).toFixed(ms >= 0.1 ? 0 : 1)} µs`
}

/** Renders rows of cells (strings) as an aligned plain-text table. */
export function table(header, rows) {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => String(row[column] ?? '').length)))
  const line = (cells) =>
    cells
      .map((cell, column) => {
        const text = String(cell ?? '')
        // Left-align the first and last (text) columns, right-align the numbers between.
        return column === 0 || column === cells.length - 1 ? text.padEnd(widths[column]) : text.padStart(widths[column])
      })
      .join('  ')
      .trimEnd()
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n')
}

/** A markdown table of the same rows. */
export function markdownTable(header, rows) {
  const line = (cells) => `| ${cells.map((cell) => String(cell ?? '').replaceAll('|', '\\|')).join(' | ')} |`
  return [line(header), `|${header.map((_, column) => (column === 0 || column === header.length - 1 ? '---' : '---:')).join('|')}|`, ...rows.map(line)].join('\n')
}
