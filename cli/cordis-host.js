'use strict'
// A real Cordis context for `--plugin` files that are Cordis plugins. `cordis`
// is an optional peer dependency: it is looked up in node_modules folders from
// the plugin file's directory upwards, then from this package's, and loaded
// through the entry an `import` would pick (so an ES module plugin and the
// context share one copy). `@deepseek-ai/cordis` (the harness's own) is
// preferred to `cordis` in each folder; works with both 4.0 lines and 3.18.

const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

const { PluginError } = require('./errors.js')

const PACKAGE_ROOT = path.resolve(__dirname, '..')
const CONDITIONS = new Set(['import', 'node', 'default'])

/** The target of a package's `exports` for `.` under import conditions. */
function exportTarget(value) {
  if (typeof value === 'string') return value
  if (Array.isArray(value)) {
    for (const entry of value) {
      const target = exportTarget(entry)
      if (target) return target
    }
    return undefined
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value)
    if (keys.some((key) => key.startsWith('.'))) return '.' in value ? exportTarget(value['.']) : undefined
    for (const key of keys) {
      if (!CONDITIONS.has(key)) continue
      const target = exportTarget(value[key])
      if (target) return target
    }
  }
  return undefined
}

/** The Cordis packages, in the order they are looked for in each folder. */
const CORDIS_PACKAGES = ['@deepseek-ai/cordis', 'cordis']

/**
 * `{ entry, name, version }` of the first Cordis package in the
 * `node_modules` folders above any of `dirs`, or undefined.
 */
function findCordis(dirs) {
  for (const start of dirs) {
    for (let dir = start; ; dir = path.dirname(dir)) {
      for (const name of CORDIS_PACKAGES) {
        const manifestPath = path.join(dir, 'node_modules', name, 'package.json')
        if (!fs.existsSync(manifestPath)) continue
        const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'))
        const target = exportTarget(manifest.exports) ?? manifest.module ?? manifest.main ?? 'index.js'
        return { entry: path.resolve(path.dirname(manifestPath), target), name, version: manifest.version }
      }
      if (path.dirname(dir) === dir) break
    }
  }
  return undefined
}

/** The services a plugin injects, whatever form `inject` takes. */
function injectedNames(plugin) {
  const inject = plugin.inject
  if (Array.isArray(inject)) return inject
  if (inject !== null && typeof inject === 'object') {
    return Array.isArray(inject.required) ? inject.required : Object.keys(inject)
  }
  return []
}

/**
 * Plugs `plugin` and waits until Cordis settled it: resolves to the error it
 * failed with, `'pending'` when it never started, or undefined.
 */
async function plug(root, cordis, plugin, config) {
  let error
  const off = typeof root.on === 'function' ? root.on('internal/error', (reason) => (error ??= reason)) : undefined
  const fork = root.plugin(plugin, config)
  // cordis 4: the fork settles once loaded and rejects on failure.
  if (typeof fork.then === 'function') {
    try {
      await fork
    } catch (reason) {
      error = reason
    }
  }
  // cordis 3: apply runs in tasks; flush waits for them, failures are on the runtime.
  if (root.events && typeof root.events.flush === 'function') await root.events.flush()
  if (typeof off === 'function') off()
  error = fork.runtime?.error ?? error
  if (error !== undefined) return error
  // cordis 4: the fiber's state; cordis 3: the runtime's status.
  const status = typeof fork.state === 'number' ? fork.state : fork.runtime?.status
  const pending = cordis.ScopeStatus?.PENDING ?? cordis.FiberState?.PENDING ?? 0
  return status === pending ? 'pending' : undefined
}

/** Contributor names the service knows, to tell which plugin registered which. */
function contributorNames(service) {
  const catalog = service.catalog()
  return new Set([
    ...catalog.variables.filter((entry) => entry.owner !== 'built-in').map((entry) => entry.owner),
    ...catalog.commandDirectories.map((entry) => entry.contributor),
  ])
}

/**
 * A Cordis root with this package's plugin (configured with `config`), then
 * every loaded plugin file in order: Cordis plugins are plugged, plain
 * contributors registered on the root. Resolves to the root's `ctx.shellEnv`
 * and a map from contributor name to the file that brought it.
 */
async function openCordis(loaded, config) {
  const first = loaded.find((item) => item.kind === 'cordis')
  const found = findCordis([path.dirname(first.absolute), PACKAGE_ROOT])
  if (!found) {
    throw new PluginError(
      first.file,
      new Error('is a Cordis plugin, but no Cordis package is installed (npm install @deepseek-ai/cordis)'),
    )
  }
  const cordis = await import(pathToFileURL(found.entry).href)
  if (typeof cordis.Context !== 'function') {
    throw new PluginError(first.file, new Error(`${found.name} ${found.version} at ${found.entry} exports no Context`))
  }
  // cordis 3 also prints plugin errors through its logger; the command reports them itself.
  if (cordis.Logger && Array.isArray(cordis.Logger.targets)) cordis.Logger.targets.splice(0, Infinity)

  const root = new cordis.Context()
  const pkg = require('..')
  const failure = await plug(root, cordis, pkg, config)
  if (failure === 'pending') throw new Error('the shell-env Cordis plugin did not start')
  if (failure !== undefined) throw failure
  const service = root.shellEnv

  const owners = new Map()
  for (const item of loaded) {
    const before = contributorNames(service)
    if (item.kind === 'cordis') {
      const outcome = await plug(root, cordis, item.plugin)
      if (outcome === 'pending') {
        const missing = injectedNames(item.plugin).filter((name) => name !== 'shellEnv')
        throw new PluginError(
          item.file,
          new Error(`the Cordis plugin did not start: nothing provides ${missing.length ? missing.join(', ') : 'what it injects'}`),
        )
      }
      if (outcome !== undefined) throw new PluginError(item.file, outcome)
    } else {
      for (const contributor of item.contributors) {
        try {
          service.register(contributor)
        } catch (error) {
          throw new PluginError(item.file, error)
        }
      }
    }
    for (const name of contributorNames(service)) if (!before.has(name)) owners.set(name, item.file)
  }
  return { service, owners, cordisVersion: found.version }
}

module.exports = { openCordis, findCordis, exportTarget }
