'use strict'

// The registry of managed DSH_* variables on its own, without Cordis
// (cordis-*.spec.cjs have it as the service): the package's exports (the
// constants, the registry class and the home helpers), how resolveDshHome()
// and reconcileDshHome() resolve the DSH home, the ShellEnvRegistry
// constructor's options, and importing the package from ES modules.
//
// Real calls into the addon, no mocks. Runs unchanged under `vitest run`
// (globals: true) and `jest`. Assertions on shapes the issue leaves open are
// marked `// shape chosen by the implementation`. Shared values (the home,
// built-ins, both collection modes) are in registry-helpers.cjs.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES, thrown, expectCode, contributor, runNode, lastJsonLine } = require('./helpers.cjs')
const { HOME, registry } = require('./registry-helpers.cjs')

const { DSH_ENV_PREFIX, RESERVED_KEYS, ShellEnvRegistry, resolveDshHome, reconcileDshHome } = require('..')

describe('exports', () => {
  it('DSH_ENV_PREFIX is "DSH_"', () => {
    expect(DSH_ENV_PREFIX).toBe('DSH_')
  })

  it('RESERVED_KEYS is the frozen list of built-ins', () => {
    expect(Array.isArray(RESERVED_KEYS)).toBe(true)
    expect([...RESERVED_KEYS]).toEqual(['DSH_HOME', 'DSH_SHELL', 'DSH_SESSION_ID', 'DSH_PROFILE', 'DSH_PROFILE_DIR'])
    expect(Object.isFrozen(RESERVED_KEYS)).toBe(true)
    expect(() => RESERVED_KEYS.push('DSH_EXTRA')).toThrow()
    expect(RESERVED_KEYS).toHaveLength(5)
  })

  it('exports the registry class and the home helpers', () => {
    expect(typeof ShellEnvRegistry).toBe('function')
    expect(typeof resolveDshHome).toBe('function')
    expect(typeof reconcileDshHome).toBe('function')
  })
})

describe('resolveDshHome', () => {
  const userHome = os.homedir()

  it.each([
    ['a configured path wins over env.DSH_HOME', '/opt/dsh', { DSH_HOME: '/env/dsh' }, path.resolve('/opt/dsh')],
    ['env.DSH_HOME when nothing is configured', undefined, { DSH_HOME: '/env/dsh' }, path.resolve('/env/dsh')],
    ['an empty configured string counts as not configured', '', { DSH_HOME: '/env/dsh' }, path.resolve('/env/dsh')],
    ['~/.dsh when env.DSH_HOME is absent', undefined, {}, path.join(userHome, '.dsh')],
    ['~/.dsh when env.DSH_HOME is empty', undefined, { DSH_HOME: '' }, path.join(userHome, '.dsh')],
    ['~/.dsh when env.DSH_HOME is blank', '', { DSH_HOME: ' \t\n' }, path.join(userHome, '.dsh')],
    ['~ alone is the home directory', '~', {}, userHome],
    ['~/x expands under the home directory', '~/harness', {}, path.join(userHome, 'harness')],
    ['~ expands in env.DSH_HOME too', undefined, { DSH_HOME: '~/from-env' }, path.join(userHome, 'from-env')],
    ['a trailing slash is removed', '/opt/dsh/', {}, path.resolve('/opt/dsh')],
    ['. and .. segments and doubled slashes are resolved', '/opt/./a/../dsh//', {}, path.resolve('/opt/dsh')],
    ['.. in a ~ path is resolved', '~/a/../b/', {}, path.join(userHome, 'b')],
    ['a relative path becomes absolute against the cwd', 'rel/dsh', {}, path.resolve('rel/dsh')],
    // shape chosen by the implementation: only `~` and `~/…` expand, `~user` is a relative name
    ['~user is not expanded', '~someone/x', {}, path.resolve('~someone/x')],
  ])('%s', (_title, configured, env, expected) => {
    expect(resolveDshHome(configured, env)).toBe(expected)
  })

  it('defaults env to process.env', () => {
    const fromEnv = process.env.DSH_HOME
    const expected =
      fromEnv !== undefined && fromEnv.trim() !== '' ? path.resolve(fromEnv) : path.join(userHome, '.dsh')
    expect(resolveDshHome()).toBe(expected)
    expect(resolveDshHome(undefined)).toBe(expected)
    expect(resolveDshHome('/configured')).toBe(path.resolve('/configured'))
  })

  it('reads the live process.env and a registry resolves its home once (child process)', () => {
    const envHome = path.resolve('/tmp/dsh-home-from-env')
    const child = runNode([path.join(FIXTURES, 'home-env.cjs')], { env: { DSH_HOME: envHome } })
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    const { before, after } = lastJsonLine(child.stdout)
    expect(before).toEqual({ resolved: envHome, reconciled: envHome, dshHome: envHome, collected: envHome })
    const changed = path.resolve('/tmp/dsh-home-changed')
    expect(after).toEqual({ resolved: changed, dshHome: envHome, collected: envHome, fresh: changed })
  })
})

describe('reconcileDshHome', () => {
  it.each([
    ['neither given: the resolved default', undefined, undefined, () => resolveDshHome()],
    ['only the top-level home', '/opt/top', undefined, () => path.resolve('/opt/top')],
    ['only skills.local', undefined, '/opt/skills', () => path.resolve('/opt/skills')],
    ['both, spelled differently but the same directory', '/opt/dsh', '/opt/x/../dsh/', () => path.resolve('/opt/dsh')],
    ['both, ~ and its expansion', '~/dsh', path.join(os.homedir(), 'dsh'), () => path.join(os.homedir(), 'dsh')],
    ['an empty top-level home counts as not given', '', '/opt/skills', () => path.resolve('/opt/skills')],
  ])('%s', (_title, top, skillsLocal, expected) => {
    expect(reconcileDshHome(top, skillsLocal)).toBe(expected())
  })

  it('throws ERR_SHELL_ENV_HOME_CONFLICT when both resolve differently', () => {
    const error = thrown(() => reconcileDshHome('/opt/top-home', '/opt/skills-home'))
    expectCode(error, 'ERR_SHELL_ENV_HOME_CONFLICT', '/opt/top-home', '/opt/skills-home')
  })
})

describe('new ShellEnvRegistry', () => {
  it('resolves dshHome once, with the resolveDshHome rules', () => {
    expect(registry().dshHome).toBe(HOME)
    expect(new ShellEnvRegistry({ dshHome: '/opt/./x/../dsh/' }).dshHome).toBe(path.resolve('/opt/dsh'))
    expect(new ShellEnvRegistry({ dshHome: '~/dsh' }).dshHome).toBe(path.join(os.homedir(), 'dsh'))
    expect(new ShellEnvRegistry({ dshHome: '' }).dshHome).toBe(resolveDshHome())
    expect(new ShellEnvRegistry({}).dshHome).toBe(resolveDshHome())
    // shape chosen by the implementation: the options object itself is optional
    expect(new ShellEnvRegistry().dshHome).toBe(resolveDshHome())
  })

  it('without a Cordis context it is a registry of its own: no ctx, and registrations last until disposed', () => {
    const reg = registry()
    expect(reg.ctx).toBeUndefined()
    const dispose = reg.register(contributor('standalone', ['DSH_STANDALONE']))
    expect(reg.list().map((entry) => entry.key)).toEqual(['DSH_STANDALONE'])
    dispose()
    expect(reg.list()).toEqual([])
  })

  it.each([
    ['a misspelt field', { dshhome: HOME }, 'dshhome'],
    ['a field of the original that the seed removed', { sessionJsonl: true }, 'sessionJsonl'],
    ['an undefined unknown field', { extra: undefined }, 'extra'],
    ['a symbol-keyed field', { [Symbol('meta')]: 1 }, 'Symbol(meta)'],
  ])('refuses a config with %s: ERR_SHELL_ENV_INVALID_OPTION naming it', (_title, config, field) => {
    expectCode(thrown(() => new ShellEnvRegistry(config)), 'ERR_SHELL_ENV_INVALID_OPTION', field, 'unknown field', 'dshHome, profile')
  })

  it('refuses a profile with a field other than name and dir: ERR_SHELL_ENV_INVALID_PROFILE naming it', () => {
    const profile = { name: 'work', dir: '/profiles/work', path: '/elsewhere' }
    expectCode(thrown(() => registry({ profile })), 'ERR_SHELL_ENV_INVALID_PROFILE', 'profile.path')
  })

  it.each([
    ['a config object', { dshHome: HOME }],
    ['null', null],
    ['a look-alike context', { effect() {}, provide() {}, set() {} }],
  ])('with two arguments the first must be a Cordis context, not %s: ERR_SHELL_ENV_INVALID_OPTION', (_title, first) => {
    expectCode(thrown(() => new ShellEnvRegistry(first, { dshHome: HOME })), 'ERR_SHELL_ENV_INVALID_OPTION', 'Cordis context', 'new ShellEnvRegistry(config)')
  })

  it.each([
    ['an empty name', { name: '', dir: '/profiles/work' }],
    ['a blank name', { name: ' \t', dir: '/profiles/work' }],
    ['a relative dir', { name: 'work', dir: 'profiles/work' }],
    ['an empty dir', { name: 'work', dir: '' }],
  ])('rejects a profile with %s: ERR_SHELL_ENV_INVALID_PROFILE', (_title, profile) => {
    expectCode(thrown(() => registry({ profile })), 'ERR_SHELL_ENV_INVALID_PROFILE')
  })
})

describe('ESM', () => {
  it('`import` of the package by name works in plain Node (child process)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-shell-env-esm-'))
    try {
      const scope = path.join(dir, 'node_modules', '@deepseek-ai')
      fs.mkdirSync(scope, { recursive: true })
      fs.symlinkSync(ROOT, path.join(scope, 'dsh-shell-env'), 'junction')
      const script = path.join(dir, 'check.mjs')
      fs.writeFileSync(
        script,
        [
          "import { createRequire } from 'node:module'",
          "import { DSH_ENV_PREFIX, RESERVED_KEYS, ShellEnvRegistry, resolveDshHome, reconcileDshHome } from '@deepseek-ai/dsh-shell-env'",
          "import pkg from '@deepseek-ai/dsh-shell-env'",
          "const cjs = createRequire(import.meta.url)('@deepseek-ai/dsh-shell-env')",
          // shape chosen by the implementation: index.mjs re-exports the CommonJS entry (one set of objects)
          'const same = ShellEnvRegistry === cjs.ShellEnvRegistry && RESERVED_KEYS === cjs.RESERVED_KEYS && pkg.ShellEnvRegistry === ShellEnvRegistry',
          "const registry = new ShellEnvRegistry({ dshHome: '/tmp/dsh-esm' })",
          "registry.register({ name: 'esm', variables: { DSH_ESM: { description: 'from ESM' } }, resolve: () => ({ DSH_ESM: 'yes' }) })",
          'const snapshot = registry.collect({})',
          'const fromAsync = await registry.collectAsync({})',
          'console.log(JSON.stringify({ prefix: DSH_ENV_PREFIX, reserved: RESERVED_KEYS.length, same, snapshot, fromAsync, home: typeof resolveDshHome(), reconciled: typeof reconcileDshHome() }))',
        ].join('\n'),
      )
      const child = runNode([script], { cwd: dir })
      expect(child.stderr).toBe('')
      expect(child.status).toBe(0)
      const expected = { DSH_ESM: 'yes', DSH_HOME: path.resolve('/tmp/dsh-esm'), DSH_SHELL: '1' }
      expect(lastJsonLine(child.stdout)).toEqual({
        prefix: 'DSH_',
        reserved: 5,
        same: true,
        snapshot: expected,
        fromAsync: expected,
        home: 'string',
        reconciled: 'string',
      })
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
