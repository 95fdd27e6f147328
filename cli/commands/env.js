'use strict'
// `dsh-shell-env env`: the managed snapshot one call receives, with owners.

const COLUMNS = require('../columns.js')
const { openRegistry, executionFor, ownerLookup } = require('../registry.js')
const { formatLines } = require('../formats.js')
const { shownValue } = require('../secrets.js')
const { renderTable } = require('../table.js')

const definition = {
  name: 'env',
  summary: 'the managed snapshot for one call: key, value and owner',
  usage: 'env [options]',
  description: `Collects the managed variables one shell call receives (DSH_HOME, DSH_SHELL,
DSH_SESSION_ID for an agent call, the profile, every contributor's values, and
PATH when contributors declare command directories), as the harness does right
before a spawn, and shows who owns each. Secret-looking values are masked.
--format export prints lines a POSIX shell can source, --format dotenv the
lines of a .env file; masked values become comments there.`,
  options: ['session', 'profile', 'home', 'plugin', 'json', 'format', 'show-secrets'],
}

async function run(options, io) {
  const registry = await openRegistry(options, io.cwd)
  const snapshot = await registry.collect(executionFor(options))
  const catalog = registry.catalog()
  const ownerOf = ownerLookup(catalog)
  const variables = Object.keys(snapshot).map((key) => {
    const { value, masked } = shownValue(key, snapshot[key], options.showSecrets)
    return { key, value, owner: ownerOf(key), masked }
  })

  if (options.format === 'export' || options.format === 'dotenv') {
    io.stdout.write(formatLines(variables, options.format))
    return 0
  }
  if (options.json) {
    const report = {
      dshHome: registry.dshHome,
      session: options.session ?? null,
      variables,
      commandDirectories: catalog.commandDirectories,
    }
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    return 0
  }
  const rows = variables.map(({ key, value, owner, masked }) => [
    key,
    masked ? { text: value, tone: 'dim' } : value,
    { text: owner ?? '', tone: owner === 'built-in' ? 'dim' : 'cyan' },
  ])
  io.stdout.write(`${renderTable(COLUMNS.snapshot, rows, { width: io.width, color: io.color })}\n`)
  return 0
}

module.exports = { ...definition, run }
