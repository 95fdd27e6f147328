'use strict'

// The bad-input matrix, its ACCEPTED rows (run by bad-input-accepted.spec.cjs,
// counted by bad-input-matrix.spec.cjs). The helpers are in
// bad-input-helpers.cjs.

const os = require('node:os')
const path = require('node:path')
const vm = require('node:vm')

const { contributor } = require('./helpers.cjs')
const { posix, argMax } = require('./platform.cjs')
const {
  HOME,
  ARG_MAX,
  MiB,
  LONE_HIGH,
  LONE_LOW,
  followRegistry,
  ownProto,
  Thing,
  shapeRegistry,
  pastArgMax,
  ENOUGH_KEYS,
  manyKeys,
} = require('./bad-input-helpers.cjs')

const { ShellEnvRegistry, execute, buildEnvironment, resolveDshHome } = require('..')

/**
 * R of bad-input-helpers.cjs, the registry every case checks for leftovers
 * (made fresh for each case), followed here for the rows that call it.
 */
let R
followRegistry((registry) => {
  R = registry
})

// ---------------------------------------------------------------------------
// Odd but valid inputs, each with its exact behaviour. A row's fourth
// element, when there is one, is what it needs of the platform (a gate of
// platform.cjs).

const ACCEPTED = [
  ['register', 'a frozen contributor with frozen declarations', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const frozen = Object.freeze({
      name: 'frozen',
      variables: Object.freeze({ DSH_FROZEN: Object.freeze({ description: 'frozen' }) }),
      commandDirectories: Object.freeze([path.resolve('/opt/frozen/bin')]),
      resolve: () => Object.freeze({ DSH_FROZEN: 'yes' }),
    })
    registry.register(frozen)
    const PATH = [path.resolve('/opt/frozen/bin'), '/bin'].join(path.delimiter)
    expect(registry.collect({}, { inheritedPath: '/bin' })).toMatchObject({ DSH_FROZEN: 'yes', PATH })
  }],
  ['register', 'null-prototype objects, a Proxy and a class instance with prototype getters', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const bare = Object.assign(Object.create(null), { name: 'bare', resolve: () => ({}) })
    bare.variables = Object.assign(Object.create(null), { DSH_BARE: Object.assign(Object.create(null), { description: 'bare' }) })
    registry.register(bare)
    registry.register(new Proxy(contributor('proxied', ['DSH_PROXIED']), {}))
    class Plugin {
      get name() { return 'classy' }
      get variables() { return { DSH_CLASSY: { description: 'from a getter' } } }
      resolve() { return { DSH_CLASSY: 'yes' } }
    }
    registry.register(new Plugin())
    expect(registry.list().map((entry) => entry.contributor)).toEqual(['bare', 'classy', 'proxied'])
    expect(registry.collect({}).DSH_CLASSY).toBe('yes')
  }],
  ['register', 'contributors named __proto__ and constructor are ordinary names', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const dispose = registry.register(contributor('__proto__', ['DSH_PROTO'], { resolve: () => ({ DSH_PROTO: 'p' }) }))
    registry.register(contributor('constructor', ['DSH_CTOR'], { resolve: () => ({ DSH_CTOR: 'c' }) }))
    expect(registry.list()).toEqual([
      { contributor: 'constructor', description: 'DSH_CTOR from constructor', key: 'DSH_CTOR' },
      { contributor: '__proto__', description: 'DSH_PROTO from __proto__', key: 'DSH_PROTO' },
    ])
    expect(registry.catalog().variables.find((entry) => entry.key === 'DSH_PROTO').owner).toBe('__proto__')
    expect(registry.collect({})).toMatchObject({ DSH_CTOR: 'c', DSH_PROTO: 'p' })
    dispose()
    expect(registry.list().map((entry) => entry.contributor)).toEqual(['constructor'])
  }],
  ['register', 'a 1 MiB description, a 1 MiB contributor name and a 1 MiB valid key', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const longKey = `DSH_${'K'.repeat(MiB)}`
    registry.register(contributor('n'.repeat(MiB), [], { variables: { [longKey]: { description: 'd'.repeat(MiB) } } }))
    const [entry] = registry.list()
    expect([entry.contributor.length, entry.description.length, entry.key.length]).toEqual([MiB, MiB, MiB + 4])
  }],
  ['register', '10,000 declared keys, all resolved', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const variables = manyKeys()
    registry.register(contributor('many', [], { variables, resolve: () => Object.fromEntries(Object.keys(variables).map((key) => [key, 'v'])) }))
    expect(registry.list()).toHaveLength(ENOUGH_KEYS)
    expect(Object.keys(registry.collect({}))).toHaveLength(ENOUGH_KEYS + 2)
  }],
  ['disposer', 'called with arguments, on a foreign receiver, twice: removes only its own registration', () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    const dispose = registry.register(contributor('once', ['DSH_ONCE']))
    registry.register(contributor('other', ['DSH_OTHER']))
    expect(dispose.call({ not: 'a registry' }, 'junk', 5, null)).toBe(undefined)
    expect(dispose(Symbol('again'))).toBe(undefined)
    expect(registry.list().map((entry) => entry.key)).toEqual(['DSH_OTHER'])
    registry.register(contributor('once', ['DSH_ONCE']))
    dispose()
    expect(registry.list().map((entry) => entry.key)).toEqual(['DSH_ONCE', 'DSH_OTHER'])
  }],
  ['list/catalog', 'extra arguments are ignored', () => {
    expect(R.list(5, 'x', null)).toEqual(R.list())
    expect(R.catalog({ junk: true })).toEqual(R.catalog())
  }],
  ['collect', 'a resolver returning frozen, null-prototype, Proxy and other-realm plain objects', async () => {
    for (const value of [
      Object.freeze({ DSH_V: 'x' }),
      Object.assign(Object.create(null), { DSH_V: 'x' }),
      new Proxy({ DSH_V: 'x' }, {}),
      vm.runInNewContext('({ DSH_V: "x" })'),
      Object.defineProperty({ DSH_V: 'x' }, 'hidden', { value: 5, enumerable: false }),
    ]) {
      const registry = shapeRegistry(value)
      expect(registry.collect({}).DSH_V).toBe('x')
      expect((await registry.collectAsync({})).DSH_V).toBe('x')
    }
  }],
  ['collect', 'any object is an execution, passed to resolvers unchanged; null options mean defaults', () => {
    for (const execution of [[], new Map(), () => {}, new Thing({ agent: undefined }), Object.freeze({})]) {
      let seen
      const registry = shapeRegistry(undefined, { resolve: (value) => ((seen = value), {}) })
      expect(registry.collect(execution, null)).toEqual({ DSH_HOME: HOME, DSH_SHELL: '1' })
      expect(seen).toBe(execution)
    }
    expect(new ShellEnvRegistry(null).dshHome).toBe(resolveDshHome())
  }],
  ['resolveDshHome', 'an env.DSH_HOME that could not be a real environment value counts as unset', () => {
    for (const DSH_HOME of [`/opt/${LONE_HIGH}`, '/opt\0/x', 5]) {
      expect(resolveDshHome(undefined, { DSH_HOME })).toBe(path.join(os.homedir(), '.dsh'))
    }
  }],
  ['execute', '__proto__ and constructor as variable names reach the child, and buildEnvironment() reports them', async () => {
    const env = { ...ownProto('proto-value'), constructor: 'ctor-value' }
    const spec = { env, scrub: { inherit: 'none' }, terminalEnv: false }
    const built = buildEnvironment(spec, {})
    expect(Object.keys(built.env)).toEqual(['__proto__', 'constructor'])
    expect(built.env.__proto__).toBe('proto-value') // an own property, not the prototype
    expect(Object.getPrototypeOf(built.env)).toBe(Object.getPrototypeOf(R.list()[0]))
    expect(built.sources).toEqual({ ...ownProto('explicit'), constructor: 'explicit' })
    const run = await execute({ ...spec, command: ['/usr/bin/env'] })
    const { stdout } = await run.result()
    expect(stdout.text.split('\n').filter(Boolean).sort()).toEqual(['__proto__=proto-value', 'constructor=ctor-value'])
  }, posix],
  ['buildEnvironment', 'a parent environment with __proto__, non-string, NUL and lone-surrogate entries', () => {
    const parent = {
      ...ownProto('inherited'),
      KEPT: 'yes',
      NUMBER: 5,
      WITH_NUL: 'a\0b',
      [`KEY${LONE_HIGH}`]: 'x',
      LONE: `x${LONE_LOW}`,
      [Symbol('SYM')]: 'x',
    }
    const built = buildEnvironment({ terminalEnv: false }, parent)
    expect(built.env).toEqual({ ...ownProto('inherited'), KEPT: 'yes' })
    // Each entry that holds no text is reported; a name with a lone surrogate shows U+FFFD.
    const unrepresentable = ['KEY\ufffd', 'LONE', 'NUMBER', 'WITH_NUL'].map((key) => ({ key, reason: 'unrepresentable' }))
    expect(built.removed).toEqual(unrepresentable)
  }],
  ['buildEnvironment', 'an environment past ARG_MAX is built (nothing is executed)', () => {
    const env = pastArgMax()
    const built = buildEnvironment({ env, scrub: { inherit: 'none' }, terminalEnv: false }, {})
    const bytes = Object.entries(built.env).reduce((sum, [key, value]) => sum + key.length + value.length + 2, 0)
    expect(bytes).toBeGreaterThan(ARG_MAX)
  }, argMax],
  ['execute', 'frozen, Proxy and class-instance specs, process.env and class instances as env', async () => {
    class Spec {
      constructor() {
        this.command = ['/usr/bin/env']
        this.scrub = { inherit: 'none' }
      }
      get terminalEnv() {
        return false
      }
    }
    const specs = [
      Object.freeze({ command: ['/usr/bin/env'], scrub: Object.freeze({ inherit: 'none' }), terminalEnv: false, env: Object.freeze({ A: '1' }) }),
      new Proxy({ command: ['/usr/bin/env'], scrub: { inherit: 'none' }, terminalEnv: false, env: new Thing({ A: '1' }) }, {}),
      Object.assign(new Spec(), { env: { A: '1' } }),
    ]
    for (const spec of specs) {
      const { stdout, exitCode } = await (await execute(spec)).result()
      expect(exitCode).toBe(0)
      expect(stdout.text).toBe('A=1\n')
    }
    const { stdout } = await (await execute({ command: 'printf %s "$HOME"', env: process.env })).result()
    expect(stdout.text).toBe(process.env.HOME ?? '')
  }, posix],
  ['execute', '10,000 variables, 120 KiB values and 1 MiB of stdin reach the child', async () => {
    const env = {}
    for (let i = 0; i < ENOUGH_KEYS; i++) env[`MANY_${i}`] = String(i)
    env.LARGE = 'L'.repeat(120 * 1024)
    const run = await execute({
      command: 'env | grep -c "^MANY_"; printf "%s\\n" "${#LARGE}"; wc -c',
      env,
      stdin: 's'.repeat(MiB),
    })
    const { stdout, exitCode } = await run.result()
    expect(exitCode).toBe(0)
    expect(stdout.text.split('\n').map((line) => line.trim())).toEqual([String(ENOUGH_KEYS), String(120 * 1024), String(MiB), ''])
  }, posix],
  ['execute', 'an empty script runs and exits 0; kill() and readOutput() ignore extra arguments', async () => {
    const run = await execute({ command: '' })
    expect((await run.result()).exitCode).toBe(0)
    expect(run.kill('SIGKILL', 5)).toBe(false)
    expect(run.readOutput({ all: true })).toEqual({ stdout: '', stderr: '', lossy: false })
  }, posix],
]

module.exports = { ACCEPTED }
