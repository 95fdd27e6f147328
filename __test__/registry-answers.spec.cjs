'use strict'

// How resolvers' answers are read. The package's registry hands answers to
// the binding packed (one string per collection); the binding's own reader
// still reads what does not pack. Each answer below is collected both ways —
// through the package's registry, and through a registry of the raw binding
// that reads every answer itself — and must reach the same snapshot or the
// same error (code, message and cause), in collect() and collectAsync().

const path = require('node:path')

const { expectCode } = require('./helpers.cjs')

const binding = require('../lib/native.js')
const { ShellEnvRegistry } = require('..')

const HOME = path.resolve('/tmp/dsh-spec-home')

/** `[title, answer]`: `answer()` makes a fresh answer for each call. */
const ANSWERS = [
  ['a declared key', () => ({ DSH_A: 'a' })],
  ['no keys', () => ({})],
  ['two declared keys', () => ({ DSH_B: 'b', DSH_A: 'a' })],
  ['an empty value', () => ({ DSH_A: '' })],
  ['a value with = and newlines', () => ({ DSH_A: 'x=y\nz' })],
  ['non-ASCII text', () => ({ DSH_A: 'Zürich 東京 😀' })],
  ['a prototype-less object', () => Object.assign(Object.create(null), { DSH_A: 'a' })],
  ['a getter', () => ({ get DSH_A() { return 'got' } })],
  ['a non-enumerable key', () => Object.defineProperty({ DSH_A: 'a' }, 'DSH_HIDDEN', { value: 1 })],
  ['a non-enumerable symbol key', () => Object.defineProperty({ DSH_A: 'a' }, Symbol('hidden'), { value: 1 })],
  ['an undeclared key', () => ({ DSH_A: 'a', DSH_OTHER: 'x' })],
  ['an empty key', () => ({ '': 'x' })],
  ['a key with a NUL', () => ({ 'DSH_A\0': 'x' })],
  ['a key with a lone surrogate', () => ({ ['DSH_\uD800']: 'x' })],
  ['an integer key', () => ({ 7: 'x' })],
  ['an enumerable symbol key', () => ({ DSH_A: 'a', [Symbol('s')]: 'x' })],
  ['a value with a NUL', () => ({ DSH_A: 'a\0b' })],
  ['a value with a lone surrogate', () => ({ DSH_A: 'a\uDC00' })],
  ['a number value', () => ({ DSH_A: 42 })],
  ['an undefined value', () => ({ DSH_A: undefined })],
  ['an object value', () => ({ DSH_A: { toString: () => 'a' } })],
  ['a getter that throws', () => ({ get DSH_A() { throw new Error('getter failed') } })],
  ['a throwing getter after a number', () => ({ DSH_B: 1, get DSH_A() { throw new Error('late') } })],
  ['a class instance', () => new (class Answer { DSH_A = 'a' })()],
  ['an array', () => ['a']],
  ['a string', () => 'DSH_A=a'],
  ['a packed-looking string', () => '1\0DSH_A\0a\0'],
  ['null', () => null],
  ['undefined', () => undefined],
  ['a function', () => () => ({ DSH_A: 'a' })],
  ['a promise', () => Promise.resolve({ DSH_A: 'a' })],
  ['a thenable', () => ({ then: (resolve) => resolve({ DSH_A: 'a' }) })],
  ['a proxy', () => new Proxy({ DSH_A: 'a' }, {})],
]

const VARIABLES = { DSH_A: { description: 'a' }, DSH_B: { description: 'b' } }

/** A registry of the package and one of the raw binding, each with `contributors` registered. */
function registries(contributors) {
  const packaged = new ShellEnvRegistry({ dshHome: HOME })
  const raw = new binding.ShellEnvRegistry({ dshHome: HOME }, process.env)
  for (const contributor of contributors) {
    packaged.register(contributor)
    raw.register(contributor)
  }
  return { packaged, raw }
}

/** What a collection came to: the snapshot, or the error's code, message and cause. */
async function outcome(collect) {
  try {
    return { snapshot: { ...(await collect()) } }
  } catch (error) {
    return { code: error.code, message: error.message, cause: error.cause === undefined ? undefined : String(error.cause) }
  }
}

const COLLECTIONS = [
  ['collect', (registry) => registry.collect({}, undefined, process.env)],
  ['collectAsync', (registry) => registry.collectAsync({}, undefined, process.env)],
]

describe('resolver answers read through the package and by the raw binding agree', () => {
  describe.each(COLLECTIONS)('%s', (_mode, collect) => {
    it.each(ANSWERS)('an answer with %s', async (_title, answer) => {
      // Between two other contributors, so answers before and after it cross too.
      const { packaged, raw } = registries([
        { name: 'c-last', variables: { DSH_LAST: { description: 'last' } }, resolve: () => ({ DSH_LAST: 'z' }) },
        { name: 'b-answer', variables: VARIABLES, resolve: answer },
        { name: 'a-first', variables: { DSH_FIRST: { description: 'first' } }, resolve: () => ({ DSH_FIRST: '1' }) },
      ])
      const expected = await outcome(() => collect(raw))
      expect(await outcome(() => collect(packaged))).toEqual(expected)
    })
  })
})

describe('the order answers are checked in', () => {
  it('the first invalid answer fails the collection, even when a later resolver throws', () => {
    const { packaged } = registries([
      { name: 'a-invalid', variables: VARIABLES, resolve: () => ({ DSH_UNDECLARED: 'x' }) },
      { name: 'b-throws', variables: {}, resolve: () => { throw new Error('b failed') } },
    ])
    let error
    try {
      packaged.collect({})
    } catch (caught) {
      error = caught
    }
    expectCode(error, 'ERR_SHELL_ENV_UNDECLARED_KEY')
    expect(error.message).toContain('a-invalid')
  })

  it('no resolver runs after one that throws, or after an answer that is not an object', () => {
    for (const failing of [() => { throw new Error('x') }, () => 42]) {
      const calls = []
      const { packaged } = registries([
        { name: 'a', variables: {}, resolve: () => (calls.push('a'), {}) },
        { name: 'b', variables: {}, resolve: () => (calls.push('b'), failing()) },
        { name: 'c', variables: {}, resolve: () => (calls.push('c'), {}) },
      ])
      calls.length = 0
      expect(() => packaged.collect({})).toThrow()
      expect(calls).toEqual(['a', 'b'])
    }
  })

  it('resolvers after an answer read by the binding itself still run, each once', () => {
    const calls = []
    const { packaged } = registries([
      { name: 'a', variables: {}, resolve: () => (calls.push('a'), {}) },
      { name: 'b', variables: VARIABLES, resolve: () => (calls.push('b'), Object.defineProperty({ DSH_A: 'a' }, Symbol('hidden'), { value: 1 })) },
      { name: 'c', variables: { DSH_C: { description: 'c' } }, resolve: () => (calls.push('c'), { DSH_C: 'c' }) },
    ])
    expect(packaged.collect({})).toEqual({ DSH_A: 'a', DSH_C: 'c', DSH_HOME: HOME, DSH_SHELL: '1' })
    expect(calls).toEqual(['a', 'b', 'c'])
  })

  it('a getter in an answer runs once', () => {
    let reads = 0
    const { packaged } = registries([{ name: 'a', variables: VARIABLES, resolve: () => ({ get DSH_A() { reads++; return 'a' } }) }])
    expect(packaged.collect({}).DSH_A).toBe('a')
    expect(reads).toBe(1)
  })
})

describe('collectAsync(): resolvers that answer at once run within the call', () => {
  it('runs the resolvers up to the first promise before it returns, and the rest after that promise settles', async () => {
    const calls = []
    let settle
    const { packaged } = registries([
      { name: 'a', variables: { DSH_A: { description: 'a' } }, resolve: () => (calls.push('a'), { DSH_A: 'a' }) },
      { name: 'b', variables: { DSH_B: { description: 'b' } }, resolve: () => (calls.push('b'), new Promise((resolve) => (settle = resolve))) },
      { name: 'c', variables: { DSH_C: { description: 'c' } }, resolve: () => (calls.push('c'), { DSH_C: 'c' }) },
    ])
    const collected = packaged.collectAsync({})
    expect(calls).toEqual(['a', 'b'])
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(calls).toEqual(['a', 'b'])
    settle({ DSH_B: 'b' })
    expect(await collected).toEqual({ DSH_A: 'a', DSH_B: 'b', DSH_C: 'c', DSH_HOME: HOME, DSH_SHELL: '1' })
    expect(calls).toEqual(['a', 'b', 'c'])
  })

  it('a resolver that aborts the signal is the last to run', async () => {
    const calls = []
    const controller = new AbortController()
    const { packaged } = registries([
      { name: 'a', variables: {}, resolve: () => (calls.push('a'), controller.abort(), {}) },
      { name: 'b', variables: {}, resolve: () => (calls.push('b'), {}) },
    ])
    let error
    try {
      await packaged.collectAsync({}, { signal: controller.signal })
    } catch (caught) {
      error = caught
    }
    expectCode(error, 'ERR_SHELL_ENV_ABORTED')
    expect(calls).toEqual(['a'])
  })

  it('an invalid answer given at once rejects the promise, it does not throw', async () => {
    const { packaged } = registries([{ name: 'a', variables: {}, resolve: () => ({ DSH_UNDECLARED: 'x' }) }])
    const collected = packaged.collectAsync({})
    let error
    try {
      await collected
    } catch (caught) {
      error = caught
    }
    expectCode(error, 'ERR_SHELL_ENV_UNDECLARED_KEY')
  })
})
