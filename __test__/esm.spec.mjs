// The package through `import` inside the test runners: Vitest runs this file
// as ESM natively, Jest with `--experimental-vm-modules` (see test:jest).

import { createRequire } from 'node:module'
import path from 'node:path'

import * as esm from '../lib/index.mjs'
import { DSH_ENV_PREFIX, RESERVED_KEYS, ShellEnvRegistry, reconcileDshHome, resolveDshHome } from '../lib/index.mjs'

const require = createRequire(import.meta.url)
const cjs = require('..')

describe('ESM entry (index.mjs)', () => {
  it('has the named exports of the CommonJS entry', () => {
    expect(DSH_ENV_PREFIX).toBe('DSH_')
    expect([...RESERVED_KEYS]).toEqual(['DSH_HOME', 'DSH_SHELL', 'DSH_SESSION_ID', 'DSH_PROFILE', 'DSH_PROFILE_DIR'])
    for (const name of ['DSH_ENV_PREFIX', 'RESERVED_KEYS', 'ShellEnvRegistry', 'resolveDshHome', 'reconcileDshHome']) {
      expect(esm[name]).toBeDefined()
    }
    expect(typeof resolveDshHome('/x')).toBe('string')
    expect(typeof reconcileDshHome()).toBe('string')
  })

  // Identity of every export with require() is checked in plain Node
  // (registry-exports.spec.cjs, "ESM"): Vitest evaluates index.js a second time through
  // its module runner, so only the native base class is shared here.
  it('exposes the same values as require()', () => {
    expect(Object.getPrototypeOf(ShellEnvRegistry)).toBe(Object.getPrototypeOf(cjs.ShellEnvRegistry))
    expect(RESERVED_KEYS).toEqual(cjs.RESERVED_KEYS)
    expect(DSH_ENV_PREFIX).toBe(cjs.DSH_ENV_PREFIX)
  })

  it('registers and collects, sync and async', async () => {
    const registry = new ShellEnvRegistry({ dshHome: '/tmp/dsh-esm-runner' })
    registry.register({
      name: 'esm',
      variables: { DSH_ESM: { description: 'set from an ES module' } },
      resolve: async () => ({ DSH_ESM: 'yes' }),
    })
    const expected = { DSH_ESM: 'yes', DSH_HOME: path.resolve('/tmp/dsh-esm-runner'), DSH_SHELL: '1' }
    expect(await registry.collectAsync({})).toEqual(expected)
    registry.register({
      name: 'sync',
      variables: { DSH_SYNC: { description: 'sync' } },
      resolve: () => ({ DSH_SYNC: 's' }),
    })
    let error
    try {
      registry.collect({})
    } catch (caught) {
      error = caught
    }
    expect(error && error.code).toBe('ERR_SHELL_ENV_ASYNC_RESOLVER')
  })
})

describe('the ES-module-only subpaths from CommonJS', () => {
  const { spawnSync } = require('node:child_process')
  const node = (script) => spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', cwd: new URL('..', import.meta.url).pathname })

  it.each(['bash-local', 'pwsh-local', 'subprocess-local'])('require(…/%s) loads it where Node can require ES modules, and says to import() it elsewhere', (subpath) => {
    const name = `@deepseek-ai/dsh-shell-env/${subpath}`
    const loaded = node(`const m = require('${name}'); process.stdout.write(typeof m.default)`)
    expect(loaded.stderr).toBe('')
    expect(loaded.stdout).toBe('function')
    const older = node(
      `Object.defineProperty(process.features, 'require_module', { value: false }); ` +
        `try { require('${name}') } catch (e) { process.stdout.write(e.code + ' ' + e.message) }`,
    )
    expect(older.stdout).toBe(
      `ERR_REQUIRE_ESM ${name} is an ES module, as the harness it plugs into is: load it with import('${name}') (require() loads it on Node 20.19, 22.12 and later)`,
    )
  })
})
