'use strict'
// The packed text in which resolvers' answers cross to the binding and a
// snapshot comes back: one string each way instead of a Node-API call per
// key and value. This is the JS side of crates/core/src/packed.rs, which
// states the format.

// An answer: `<pairs>\0` then `<key>\0<value>\0` per pair. Only an answer
// whose every key and value is well-formed text without NUL packs, which is
// every valid answer; any other is handed over boxed, as it is, for the
// binding to read and report as before.

/**
 * One resolver's answer: packed, or `[answer]` when it does not pack (a
 * promise, not a plain object, a symbol key, a value that is not a string or
 * holds NUL or a lone surrogate). Reads the answer as the binding would: its
 * `then`, its prototype, its own enumerable keys, then each value.
 */
function answerOf(resolve, execution) {
  const answer = resolve(execution)
  if (answer === null || typeof answer !== 'object' || typeof answer.then === 'function' || Array.isArray(answer)) return [answer]
  const prototype = Object.getPrototypeOf(answer)
  if (prototype !== null && Object.getPrototypeOf(prototype) !== null) return [answer]
  if (Object.getOwnPropertySymbols(answer).length > 0) return [answer]
  const keys = Object.keys(answer)
  let packed = `${keys.length}\0`
  for (const key of keys) {
    const value = answer[key]
    if (typeof value !== 'string' || !packable(key) || !packable(value)) return [answer]
    packed += `${key}\0${value}\0`
  }
  return packed
}

function packable(text) {
  return !text.includes('\0') && text.isWellFormed()
}

/**
 * Runs `resolvers` (the contributors' own functions, in order) at once for
 * one collection: their answers packed; at the first answer that does not
 * pack or the first throw, `[answers before, index, value, threw]`; when
 * `signal` fired (a resolver aborted it), `[answers before, index]`.
 */
function answerAll(resolvers, execution, signal) {
  let packed = ''
  for (let index = 0; index < resolvers.length; index++) {
    if (signal !== undefined && signal.aborted) return [packed, index]
    let answer
    try {
      answer = answerOf(resolvers[index], execution)
    } catch (error) {
      return [packed, index, error, true]
    }
    if (typeof answer !== 'string') return [packed, index, answer, false]
    packed += answer
  }
  return packed
}

/**
 * A packed snapshot as the frozen object `collect()` returns: `0` or `1`
 * (directories were left out, see `leftOutIn`), the keys, `\x01`, the values.
 */
function unpackSnapshot(packed) {
  const keysEnd = packed.indexOf('\x01')
  return buildSnapshot(packed.slice(1, keysEnd), packed, keysEnd + 1)
}

/** Whether the collection of a packed snapshot left directories out of its PATH. */
function leftOutIn(packed) {
  return packed[0] === '1'
}

// How snapshots are built, by key list (as packed). A registry's key list
// seldom changes between collections (with its contributors, and with
// whether the execution has an agent), so each list is split once, and from
// its second use on its snapshots are built by a function compiled for it:
// it cuts each value out of the packed text in turn (twice as fast as
// splitting it) and makes the snapshot as one object literal, which V8 makes
// one fast object, where an object built key by key turns into a slower
// dictionary past a dozen keys. The last list is checked first; a few more
// are kept.
const SHAPES_KEPT = 16
const shapes = new Map()
let lastShape = { keyText: '', keys: [], build: undefined }

/**
 * The frozen snapshot of `keyText`'s keys (each ending with a NUL) and their
 * values, in the same order, in `packed` from `from` on (each ending with a NUL).
 */
function buildSnapshot(keyText, packed, from) {
  let shape = lastShape
  if (keyText !== shape.keyText) {
    shape = shapes.get(keyText)
    if (shape === undefined) {
      if (shapes.size >= SHAPES_KEPT) shapes.clear()
      shape = { keyText, keys: keyText.split('\0').slice(0, -1), build: undefined }
      shapes.set(keyText, shape)
      lastShape = shape
      return buildByKey(shape.keys, packed, from)
    }
    lastShape = shape
  }
  shape.build ??= compileBuild(shape.keys)
  return shape.build(packed, from)
}

function buildByKey(keys, packed, from) {
  const values = packed.slice(from).split('\0')
  const snapshot = {}
  for (let index = 0; index < keys.length; index++) snapshot[keys[index]] = values[index]
  return Object.freeze(snapshot)
}

/** A function building the snapshot of `keys` from packed values, as one object literal. */
function compileBuild(keys) {
  // Keys are `DSH_*` names and PATH (the core admits no other), so each is
  // an identifier of its own; anything else is built key by key.
  if (!keys.every((key) => /^[A-Z_][A-Z0-9_]*$/.test(key))) return (packed, from) => buildByKey(keys, packed, from)
  const cut = keys.map((_, index) => `end = packed.indexOf('\\0', from); const v${index} = packed.slice(from, end); from = end + 1`)
  const literal = keys.map((key, index) => `${key}: v${index}`)
  try {
    return new Function('packed', 'from', `let end\n${cut.join('\n')}\nreturn Object.freeze({ ${literal.join(', ')} })`)
  } catch {
    // Code generation from strings is disallowed here (--disallow-code-generation-from-strings).
    return (packed, from) => buildByKey(keys, packed, from)
  }
}

module.exports = { answerOf, answerAll, unpackSnapshot, leftOutIn }
