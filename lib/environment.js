'use strict'
// The parent environment crosses to the binding packed, one string per call
// instead of a Node-API call per name and value, and `buildEnvironment()`'s
// result comes back packed (crates/core/src/environment/parent.rs and
// crates/core/src/packed.rs are the other side). The binding calls
// `packEnvironment` at the moment it used to read the object itself, after
// checking that it is one, so what it reads, in what order, and what a throw
// while reading becomes are as before.

const binding = require('./native.js')

// What this module makes or throws belongs to the realm the addon was loaded
// in, as what the binding made or threw itself: under Jest, whose test files
// each run in a realm of their own, Node's objects, not the test file's. Its
// `Object.keys` lists a parent's names (an error it throws is that realm's),
// its constructors make the objects built one by one, and its `Function`
// compiles the builders, whose literals are then that realm's objects too.
const host = binding.hostGlobal()
const HostObject = host.Object
const HostArray = host.Array
const HostFunction = host.Function

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
  const names = HostObject.keys(env)
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

// How results are built, by shape: the names and their sources, which lead
// the packed text (`<vars>\0`, then a source and `<name>\0` per variable).
// A host's shape seldom changes between calls, so the last one is checked
// first (one comparison at the start of the text) and a few more are kept;
// from a shape's second use on, its results are built by a function compiled
// for it, as packed.js builds snapshots: one object literal for `env` and
// one for `sources`, which V8 makes from a template, where objects built name
// by name cost a keyed store each and turn into slower dictionaries.
const SHAPES_KEPT = 16
/** Shapes with more names are built name by name (V8 keeps no more than about a thousand fast properties). */
const MAX_COMPILED_NAMES = 512
/** A shape's names are cut out of its first packed text, which they keep alive: a longer one is not kept. */
const MAX_KEPT_TEXT = 64 * 1024
const shapes = new Map()
let lastShape = { text: '\0', names: [], sources: [], build: undefined }

/**
 * A packed environment (see crates/core/src/packed.rs) as the object
 * `buildEnvironment()` returns: `env` and `sources` in name order, `removed`
 * in pipeline order.
 */
function unpackEnvironment(packed) {
  let shape = lastShape
  if (!packed.startsWith(shape.text)) {
    shape = shapeOf(packed)
    const known = shapes.get(shape.text)
    if (known === undefined) {
      if (packed.length > MAX_KEPT_TEXT) return buildByName(shape, packed, shape.text.length)
      if (shapes.size >= SHAPES_KEPT) shapes.clear()
      shapes.set(shape.text, shape)
      lastShape = shape
      return buildByName(shape, packed, shape.text.length)
    }
    shape = known
    lastShape = shape
  }
  shape.build ??= compileBuild(shape)
  return shape.build(packed, shape.text.length, removedOf)
}

/** The shape that leads `packed`: its text, names and sources. */
function shapeOf(packed) {
  sources ??= binding.environmentSources()
  let end = packed.indexOf('\0')
  const count = Number(packed.slice(0, end))
  const names = new Array(count)
  const sourceOf = new Array(count)
  let at = end + 1
  for (let index = 0; index < count; index++) {
    sourceOf[index] = sources[packed.charCodeAt(at) - 48]
    end = packed.indexOf('\0', at + 1)
    names[index] = packed.slice(at + 1, end)
    at = end + 1
  }
  return { text: packed.slice(0, at), names, sources: sourceOf, build: undefined }
}

/** The result of `shape`, its values in `packed` from `from` on, built name by name. */
function buildByName(shape, packed, from) {
  const { names } = shape
  const env = new HostObject()
  const sourceOf = new HostObject()
  for (let index = 0; index < names.length; index++) {
    const end = packed.indexOf('\0', from)
    const name = names[index]
    if (name === '__proto__') {
      // Assigned, it would call Object.prototype's setter instead of making a property.
      ownProperty(env, name, packed.slice(from, end))
      ownProperty(sourceOf, name, shape.sources[index])
    } else {
      env[name] = packed.slice(from, end)
      sourceOf[name] = shape.sources[index]
    }
    from = end + 1
  }
  const result = /** @type {any} */ (new HostObject())
  result.env = env
  result.sources = sourceOf
  result.removed = removedOf(packed, from)
  return result
}

/** A function building the results of `shape`, as object literals. */
function compileBuild(shape) {
  const { names } = shape
  const byName = (packed, from) => buildByName(shape, packed, from)
  // In a literal, `__proto__: value` sets the prototype.
  if (names.length > MAX_COMPILED_NAMES || names.includes('__proto__')) return byName
  const cut = names.map((_, index) => `end = packed.indexOf('\\0', from); const v${index} = packed.slice(from, end); from = end + 1`)
  const env = names.map((name, index) => `${JSON.stringify(name)}: v${index}`)
  const sourceOf = names.map((name, index) => `${JSON.stringify(name)}: ${JSON.stringify(shape.sources[index])}`)
  try {
    return new HostFunction(
      'packed',
      'from',
      'removedOf',
      `let end\n${cut.join('\n')}\nreturn { env: { ${env.join(', ')} }, sources: { ${sourceOf.join(', ')} }, removed: removedOf(packed, from) }`,
    )
  } catch {
    // Code generation from strings is disallowed here (--disallow-code-generation-from-strings).
    return byName
  }
}

/** The removals packed in `packed` from `from` on, in order. */
function removedOf(packed, from) {
  reasons ??= binding.removalReasons().map(({ reason }) => reason)
  const removed = new HostArray()
  while (from < packed.length) {
    const end = packed.indexOf('\0', from + 1)
    const length = Number(packed.slice(from + 1, end))
    const removal = /** @type {any} */ (new HostObject())
    removal.key = packed.slice(end + 1, end + 1 + length)
    removal.reason = reasons[packed.charCodeAt(from) - 48]
    removed.push(removal)
    from = end + 1 + length
  }
  return removed
}

function ownProperty(object, name, value) {
  Object.defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true })
}

module.exports = { packEnvironment, unpackEnvironment }
