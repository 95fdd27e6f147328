'use strict'

// The published harness (0.1.0-rc.8) with this package as its `ctx.shellEnv`:
// the model's bash tool (@deepseek-ai/dsh-tool-bash) over the local executor
// (@deepseek-ai/dsh-bash-local on @deepseek-ai/dsh-subprocess-local), in a
// real @deepseek-ai/cordis composition, called the way the harness calls a
// tool (`ctx.tools.execute`). Then the registry's messages against those of
// the TypeScript original (@deepseek-ai/dsh-shell-env@0.1.0-rc.8, installed
// as `dsh-shell-env-original`): every message of the original must still
// match ours, so that tests and log matchers written against it keep working.
// Nothing is mocked. Runs unchanged under `vitest run` and `jest`.

const os = require('node:os')
const path = require('node:path')

const { expectCode } = require('./helpers.cjs')
const { posix } = require('./platform.cjs')

const pkg = require('..')

const HOME = path.resolve(os.tmpdir(), 'dsh-harness-spec-home')
const STALE = { DSH_SESSION_ID: 'stale-session', DSH_HOME: '/stale/dsh-home', DSH_STALE_SENTINEL: 'stale' }

/** The harness packages (harness-helpers.mjs), and the reference executor with its subprocess service. */
async function harness() {
  const { loadHarness } = await import('./harness-helpers.mjs')
  const parts = await loadHarness()
  const bashLocal = await import('@deepseek-ai/dsh-bash-local')
  const subprocessLocal = await import('@deepseek-ai/dsh-subprocess-local')
  return { ...parts, LocalBashExecutor: bashLocal.default, LocalSubprocessRuntime: subprocessLocal.default }
}

/** How a composition loads this package: every form the harness's compositions use. */
const FORMS = [
  ['the ES module namespace', (root) => import('@deepseek-ai/dsh-shell-env').then((esm) => root.plugin(esm, { dshHome: HOME }))],
  ['the CommonJS module', (root) => root.plugin(pkg, { dshHome: HOME })],
  ['the class as a plugin', (root) => root.plugin(pkg.ShellEnvRegistry, { dshHome: HOME })],
  [
    'new ShellEnvRegistry(ctx, config) in a composition plugin',
    (root) => root.plugin({ name: 'composition', apply: (ctx) => void new pkg.ShellEnvRegistry(ctx, { dshHome: HOME }) }),
  ],
]

/** A plugin contributing one fact through its own `ctx.shellEnv`. */
const regionPlugin = {
  name: 'deployment-region',
  inject: ['shellEnv'],
  apply(ctx) {
    ctx.shellEnv.register({
      name: 'deployment-region',
      variables: { DSH_DEPLOYMENT_REGION: { description: 'Current deployment region.' } },
      resolve: (execution) => (execution.agent === undefined ? {} : { DSH_DEPLOYMENT_REGION: 'cn-north' }),
    })
  },
}

/** What the child prints: every DSH_* variable it got, one per line. */
const REPORT = "env | grep '^DSH_' | sort"

function variables(text) {
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  )
}

// The bash tool runs its commands with bash (@deepseek-ai/dsh-bash-local).
posix.describe('the published harness with this package as ctx.shellEnv', () => {
  let parts
  let saved
  const roots = []

  beforeAll(async () => {
    parts = await harness()
  })

  beforeEach(() => {
    saved = Object.fromEntries(Object.keys(STALE).map((key) => [key, process.env[key]]))
    Object.assign(process.env, STALE)
  })

  afterEach(async () => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key]
      else process.env[key] = value
    }
    for (const root of roots.splice(0)) await root.registry.delete?.(parts.toolBash)
  })

  /** A composition with the bash tool, its executor and this package, loaded as `load` does. */
  async function compose(load) {
    const root = new parts.Context()
    roots.push(root)
    await root.plugin(parts.SystemPrompt)
    await root.plugin(parts.ToolRuntime)
    await root.plugin(parts.LocalSubprocessRuntime)
    await root.plugin(parts.LocalBashExecutor, { cwd: os.tmpdir() })
    await load(root)
    await root.plugin(regionPlugin)
    await root.plugin(parts.toolBash)
    return root
  }

  /** One bash tool call, as the harness's agent loop makes it. */
  function bash(root, command, agent) {
    return root.tools.execute({
      callId: `call-${Math.random().toString(36).slice(2)}`,
      name: 'bash',
      arguments: { command, description: 'Report the managed environment' },
      ...(agent === undefined ? {} : { agent }),
      signal: new AbortController().signal,
    })
  }

  const agent = (id) => ({ session: { header: { id, cwd: os.tmpdir() } } })

  describe.each(FORMS)('loaded as %s', (_form, load) => {
    it('ctx.shellEnv is this package’s registry, and the bash tool started on it', async () => {
      const root = await compose(load)
      expect(root.shellEnv).toBeInstanceOf(pkg.ShellEnvRegistry)
      expect(root.shellEnv.dshHome).toBe(HOME)
      expect(root.tools.get('bash')).toBeDefined()
    })

    it('an agent call’s child gets DSH_HOME, DSH_SHELL, the agent’s session, the contributed key, and no stale DSH_*', async () => {
      const root = await compose(load)
      const result = await bash(root, REPORT, agent('session-parent'))
      expect(result.isError).toBe(false)
      expect(result.value.exitCode).toBe(0)
      expect(variables(result.value.stdout.text)).toEqual({
        DSH_DEPLOYMENT_REGION: 'cn-north',
        DSH_HOME: HOME,
        DSH_SESSION_ID: 'session-parent',
        DSH_SHELL: '1',
      })
    })

    it('parent and child agents at once each see their own session; a call without an agent has none', async () => {
      const root = await compose(load)
      const [parent, child, none] = await Promise.all([
        bash(root, `sleep 0.1; ${REPORT}`, agent('session-parent')),
        bash(root, REPORT, agent('session-child')),
        bash(root, REPORT),
      ])
      expect(variables(parent.value.stdout.text).DSH_SESSION_ID).toBe('session-parent')
      expect(variables(child.value.stdout.text).DSH_SESSION_ID).toBe('session-child')
      expect(variables(none.value.stdout.text)).toEqual({ DSH_HOME: HOME, DSH_SHELL: '1' })
    })
  })

  it('disposing the contributing plugin removes its key from the next call', async () => {
    const root = await compose(FORMS[1][1])
    await root.registry.delete(regionPlugin)
    const result = await bash(root, REPORT, agent('session-parent'))
    expect(variables(result.value.stdout.text)).toEqual({ DSH_HOME: HOME, DSH_SESSION_ID: 'session-parent', DSH_SHELL: '1' })
  })
})

describe('the version replaces the TypeScript original', () => {
  const semver = require('semver')
  const manifest = (name) => require(`${name}/package.json`)

  it('sorts above the published original', () => {
    expect(semver.gt(manifest('..').version, manifest('dsh-shell-env-original').version)).toBe(true)
  })

  it('satisfies the peer range the bash tool asks of it', () => {
    const range = manifest('@deepseek-ai/dsh-tool-bash').peerDependencies['@deepseek-ai/dsh-shell-env']
    expect(semver.satisfies(manifest('..').version, range)).toBe(true)
  })
})

describe('the registry’s messages still match those of the TypeScript original', () => {
  let ours
  let original

  beforeAll(async () => {
    const { Context } = await import('@deepseek-ai/cordis')
    const originalPackage = await import('dsh-shell-env-original')
    const ourRoot = new Context()
    await ourRoot.plugin(pkg, { dshHome: HOME })
    ours = ourRoot.shellEnv
    const originalRoot = new Context()
    await originalRoot.plugin(originalPackage, { dshHome: HOME })
    original = originalRoot.shellEnv
    expect(original).not.toBeInstanceOf(pkg.ShellEnvRegistry)
  })

  const declared = (name, variables, resolve = () => ({})) => ({ name, variables, resolve })
  const key = (description = 'A fact.') => ({ description })

  /** The error `act(registry)` throws. */
  function failure(registry, act) {
    try {
      act(registry)
    } catch (error) {
      return error
    }
    throw new Error('expected a failure')
  }

  // [case, what to do with a registry, our code]; each case starts from a
  // registry holding only the registrations it makes itself, disposed after.
  const CASES = [
    ['a blank name', (r) => r.register(declared('  ', { DSH_BLANK: key() })), 'ERR_SHELL_ENV_INVALID_NAME'],
    ['an empty name', (r) => r.register(declared('', { DSH_EMPTY: key() })), 'ERR_SHELL_ENV_INVALID_NAME'],
    [
      'a name already registered',
      (r) => {
        r.register(declared('twice', { DSH_TWICE_A: key() }))
        r.register(declared('twice', { DSH_TWICE_B: key() }))
      },
      'ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR',
    ],
    ['a lower-case key', (r) => r.register(declared('lower', { DSH_lower: key() })), 'ERR_SHELL_ENV_INVALID_KEY'],
    ['a key outside the namespace', (r) => r.register(declared('outside', { REGION: key() })), 'ERR_SHELL_ENV_INVALID_KEY'],
    ['the reserved DSH_HOME', (r) => r.register(declared('home', { DSH_HOME: key() })), 'ERR_SHELL_ENV_RESERVED_KEY'],
    ['the reserved DSH_SHELL', (r) => r.register(declared('shell', { DSH_SHELL: key() })), 'ERR_SHELL_ENV_RESERVED_KEY'],
    ['the reserved DSH_SESSION_ID', (r) => r.register(declared('session', { DSH_SESSION_ID: key() })), 'ERR_SHELL_ENV_RESERVED_KEY'],
    ['a blank description', (r) => r.register(declared('vague', { DSH_VAGUE: key(' ') })), 'ERR_SHELL_ENV_MISSING_DESCRIPTION'],
    [
      'a key another contributor owns',
      (r) => {
        r.register(declared('first-owner', { DSH_SHARED: key() }))
        r.register(declared('second-owner', { DSH_SHARED: key() }))
      },
      'ERR_SHELL_ENV_DUPLICATE_KEY',
    ],
    [
      'a resolver returning an undeclared key',
      (r) => {
        r.register(declared('stray', { DSH_OWN: key() }, () => ({ DSH_STRAY: 'x' })))
        r.collect({})
      },
      'ERR_SHELL_ENV_UNDECLARED_KEY',
    ],
    [
      'a resolver returning a non-string value',
      (r) => {
        r.register(declared('numeric', { DSH_NUMERIC: key() }, () => ({ DSH_NUMERIC: 42 })))
        r.collect({})
      },
      'ERR_SHELL_ENV_NON_STRING_VALUE',
    ],
  ]

  it.each(CASES)('%s', (_title, act, code) => {
    const disposers = []
    const tracking = (registry) => ({
      register: (contributor) => disposers.push(registry.register(contributor)),
      collect: (execution) => registry.collect(execution),
    })
    try {
      const theirs = failure(tracking(original), act)
      for (const dispose of disposers.splice(0)) dispose()
      const mine = failure(tracking(ours), act)
      expectCode(mine, code)
      expect(mine.message).toContain(theirs.message)
    } finally {
      for (const dispose of disposers.splice(0)) dispose()
    }
  })
})
