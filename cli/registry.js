'use strict'
// The registry a command works with, built from the options: the Harness home,
// the profile and the `--plugin` files. Without Cordis plugins it is a plain
// ShellEnvRegistry; with one, a real Cordis context's `ctx.shellEnv`. Either
// way the commands see the same small surface, and errors a contributor causes
// while collecting name the plugin file it came from.

const { ShellEnvRegistry, execute } = require('..')
const { openCordis } = require('./cordis-host.js')
const { PluginError } = require('./errors.js')
const { loadPluginFiles } = require('./plugins.js')

/** The tool execution for `--session`: an agent call, or none. */
function executionFor(options) {
  return options.session === undefined ? {} : { agent: { session: { header: { id: options.session } } } }
}

/** The contributor a registry error message starts with (`bash env contributor "name" …`). */
function contributorOf(error) {
  const message = error !== null && typeof error === 'object' ? String(error.message) : ''
  const match = /^bash env contributor ("(?:[^"\\]|\\.)*")/.exec(message)
  if (!match) return undefined
  try {
    return JSON.parse(match[1])
  } catch {
    return undefined
  }
}

/**
 * `{ dshHome, catalog(), collect(execution), execute(spec, execution) }` for
 * the options `--home`, `--profile` and `--plugin`.
 */
async function openRegistry(options, cwd = process.cwd()) {
  const config = {}
  if (options.home !== undefined) config.dshHome = options.home
  if (options.profile !== undefined) config.profile = options.profile

  const loaded = await loadPluginFiles(options.plugins ?? [], cwd)
  let target
  let owners
  let run
  if (loaded.some((item) => item.kind === 'cordis')) {
    const opened = await openCordis(loaded, config)
    target = opened.service
    owners = opened.owners
    run = (spec, execution) => target.execute(spec, execution)
  } else {
    target = new ShellEnvRegistry(config)
    owners = new Map()
    for (const item of loaded) {
      for (const contributor of item.contributors) {
        try {
          target.register(contributor)
        } catch (error) {
          throw new PluginError(item.file, error)
        }
        if (contributor && typeof contributor.name === 'string') owners.set(contributor.name, item.file)
      }
    }
    run = (spec, execution) => execute({ ...spec, registry: target, execution })
  }

  /** The error, as a PluginError when a contributor from a plugin file caused it. */
  const attribute = (error) => {
    const file = owners.get(contributorOf(error))
    return file === undefined ? error : new PluginError(file, error)
  }

  return {
    dshHome: target.dshHome,
    catalog: () => target.catalog(),
    untrustedDirectories: () => target.untrustedDirectories(),
    async collect(execution) {
      try {
        return await target.collectAsync(execution, { inheritedPath: inheritedPath(process.env, target.catalog()) })
      } catch (error) {
        throw attribute(error)
      }
    },
    async execute(spec, execution) {
      try {
        return await run(spec, execution)
      } catch (error) {
        throw attribute(error)
      }
    },
  }
}

/** Whether a package manager (npm, npx, pnpm, yarn) launched this command: it sets these for what it runs. */
function launchedByPackageManager(env) {
  return env.npm_lifecycle_event !== undefined || env.npm_command !== undefined || env.npm_execpath !== undefined
}

/**
 * The PATH a snapshot's command directories go in front of: this process's,
 * without those directories (so that sourcing `env --format export` twice
 * does not repeat them) and, when a package manager launched the command,
 * without the directories it put in front for what it runs
 * (`node_modules/.bin`, its `node-gyp-bin`), which a harness call would not
 * have.
 */
function inheritedPath(env, catalog) {
  const separator = process.platform === 'win32' ? ';' : ':'
  const commandDirectories = new Set(catalog.commandDirectories.flatMap((entry) => entry.directories))
  const launcher = launchedByPackageManager(env)
  const fromLauncher = (entry) => launcher && /[\\/]node_modules[\\/]\.bin$|[\\/]node-gyp-bin$/.test(entry)
  const path = env.PATH ?? env.Path ?? ''
  return path
    .split(separator)
    .filter((entry) => !commandDirectories.has(entry) && !fromLauncher(entry))
    .join(separator)
}

/** Owner of a snapshot key: the catalog's owner; PATH belongs to the command-directory contributors. */
function ownerLookup(catalog) {
  const owners = new Map(catalog.variables.map((entry) => [entry.key, entry.owner]))
  const pathOwners = catalog.commandDirectories.map((entry) => entry.contributor).join(', ')
  return (key) => (key === 'PATH' ? pathOwners || null : owners.get(key) ?? null)
}

module.exports = { openRegistry, executionFor, ownerLookup, contributorOf, inheritedPath }
