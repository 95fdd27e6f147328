'use strict'
// The parent environment crosses to the binding packed, one string per call
// instead of a Node-API call per name and value, and `buildEnvironment()`'s
// result comes back packed (crates/core/src/environment/parent.rs and
// crates/core/src/packed.rs are the other side). The binding calls
// `packEnvironment` at the moment it used to read the object itself, after
// checking that it is one, so what it reads, in what order, and what a throw
// while reading becomes are as before.

const binding = require('./native.js')

/**
 * `env` read as the binding reads an environment object: its own enumerable
 * string keys in order, each value read once, `undefined` no entry at all.
 * Returns `<entries>\0` then `<name>\0<value>\0` per entry; when some entry
 * holds no text a child could be given (a value that is not a string, a
 * lone surrogate, a NUL), `[packed, ...names]` instead, each such name once
 * per entry (a name with a lone surrogate shown with U+FFFD, its value not
 * read).
 */
function packEnvironment(env) {
  const names = Object.keys(env)
  let packed = ''
  let entries = 0
  let unrepresentable
  for (let index = 0; index < names.length; index++) {
    const name = names[index]
    if (!wellFormed(name)) {
      unrepresentable ??= []
      unrepresentable.push(shown(name))
      continue
    }
    const value = env[name]
    if (typeof value === 'string' && wellFormed(value) && !name.includes('\0') && !value.includes('\0')) {
      packed += `${name}\0${value}\0`
      entries++
    } else if (value !== undefined) {
      unrepresentable ??= []
      unrepresentable.push(name)
    }
  }
  packed = `${entries}\0${packed}`
  return unrepresentable === undefined ? packed : [packed, ...unrepresentable]
}

// (Untyped parameters: the TypeScript library the JS is checked against predates these.)
const wellFormed = (text) => text.isWellFormed()
/** A name as messages show it: each lone surrogate as U+FFFD. */
const shown = (text) => text.toWellFormed()

// The binding's vocabularies, by their place: the packed result names a
// source or a reason by it.
let sources
let reasons

/**
 * A packed environment (see crates/core/src/packed.rs) as the object
 * `buildEnvironment()` returns: `env` and `sources` in name order, `removed`
 * in pipeline order.
 */
function unpackEnvironment(packed) {
  sources ??= binding.environmentSources()
  reasons ??= binding.removalReasons().map(({ reason }) => reason)
  const env = {}
  const sourceOf = {}
  const removed = []
  let end = packed.indexOf('\0')
  const count = Number(packed.slice(0, end))
  let at = end + 1
  for (let index = 0; index < count; index++) {
    const source = sources[packed.charCodeAt(at) - 48]
    end = packed.indexOf('\0', at + 1)
    const name = packed.slice(at + 1, end)
    at = end + 1
    end = packed.indexOf('\0', at)
    const value = packed.slice(at, end)
    at = end + 1
    if (name === '__proto__') {
      // Assigned, it would call Object.prototype's setter instead of making a property.
      ownProperty(env, name, value)
      ownProperty(sourceOf, name, source)
    } else {
      env[name] = value
      sourceOf[name] = source
    }
  }
  while (at < packed.length) {
    const reason = reasons[packed.charCodeAt(at) - 48]
    end = packed.indexOf('\0', at + 1)
    const length = Number(packed.slice(at + 1, end))
    removed.push({ key: packed.slice(end + 1, end + 1 + length), reason })
    at = end + 1 + length
  }
  return { env, sources: sourceOf, removed }
}

function ownProperty(object, name, value) {
  Object.defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true })
}

module.exports = { packEnvironment, unpackEnvironment }
