'use strict'
// A resource limit in words, as people read it: the model's line from the
// executors (`[killed: file size limit 1 MiB]`) and the command line's
// (`ended by its file size limit (1 MiB)`) say the same, and so do a limit
// the command tampered with.

/** Each limit's name in `result.limit` and `limitsHit`, in words. */
const LIMIT_WORDS = Object.freeze({ memory: 'memory', processes: 'process', cpu: 'CPU', fileSize: 'file size', openFiles: 'open files' })

/** The `limits` field that sets each limit. */
const LIMIT_FIELDS = Object.freeze({ memory: 'memoryBytes', processes: 'processes', cpu: 'cpuSeconds', fileSize: 'fileBytes', openFiles: 'openFiles' })

/**
 * The value `limits` gives `limit`, in words (`512 MiB`, `30 s`, `64`), or
 * `undefined` when it gives none.
 * @param {string} limit
 * @param {Record<string, number | undefined> | undefined} limits
 */
function limitAmount(limit, limits) {
  const value = limits?.[LIMIT_FIELDS[limit]]
  if (value === undefined) return undefined
  if (limit === 'cpu') return `${value} s`
  if (limit !== 'memory' && limit !== 'fileSize') return `${value}`
  /** @type {Array<[string, number]>} */
  const units = [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]]
  for (const [unit, size] of units) {
    if (value >= size && value % size === 0) return `${value / size} ${unit}`
  }
  return `${value} bytes`
}

/**
 * A limit the command tampered with (`limitsTampered`), in words: `the
 * command interfered with its memory limit (512 MiB), which may not have
 * held`. It rewrote the limit's cgroup files, or killed the reaper watching
 * them.
 * @param {string} limit
 * @param {Record<string, number | undefined> | undefined} limits
 */
function tamperedInWords(limit, limits) {
  const value = limitAmount(limit, limits)
  return `the command interfered with its ${LIMIT_WORDS[limit]} limit${value === undefined ? '' : ` (${value})`}, which may not have held`
}

/**
 * `endedAfterExit` in words (`1 process`, `3 processes`; 255 is what the
 * supervisor counts at most, so it reads `255 or more`), with `noun` for
 * "process" (`background process`).
 * @param {number} count
 * @param {string} [noun]
 */
function processCount(count, noun = 'process') {
  if (count >= 255) return `255 or more ${noun}es`
  return count === 1 ? `1 ${noun}` : `${count} ${noun}es`
}

module.exports = { LIMIT_WORDS, LIMIT_FIELDS, limitAmount, processCount, tamperedInWords }
