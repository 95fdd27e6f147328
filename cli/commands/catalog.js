'use strict'
// `dsh-shell-env catalog`: every variable a call can receive, built-ins
// included, with descriptions and owners, and the command directories.

const COLUMNS = require('../columns.js')
const { openRegistry } = require('../registry.js')
const { renderTable } = require('../table.js')

const definition = {
  name: 'catalog',
  summary: 'every variable a call can receive, with descriptions, owners and command directories',
  usage: 'catalog [options]',
  description: `Lists every variable a shell call can receive: the built-ins and what each
contributor declares, with its owner, when it is set (always, agent: agent
calls only, profile: with a profile, resolver: when the contributor's resolver
returns it) and its description; then the command directories put on PATH.
No resolver runs.`,
  options: ['profile', 'home', 'plugin', 'json'],
}

async function run(options, io) {
  const registry = await openRegistry(options, io.cwd)
  const catalog = registry.catalog()

  if (options.json) {
    const report = {
      dshHome: registry.dshHome,
      variables: catalog.variables.map(({ key, description, owner, when }) => ({ key, description, owner, when })),
      commandDirectories: catalog.commandDirectories.map(({ contributor, directories }) => ({ contributor, directories })),
    }
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    return 0
  }
  const table = (columns, rows) => renderTable(columns, rows, { width: io.width, color: io.color })
  const variables = catalog.variables.map(({ key, description, owner, when }) => [
    key,
    { text: owner, tone: owner === 'built-in' ? 'dim' : 'cyan' },
    when,
    description,
  ])
  const directories = catalog.commandDirectories.flatMap(({ contributor, directories: dirs }) =>
    dirs.map((dir) => [dir, { text: contributor, tone: 'cyan' }]),
  )
  io.stdout.write(
    [
      table(COLUMNS.catalog, variables),
      '',
      directories.length
        ? `Command directories, ahead of the inherited PATH\n\n${table(COLUMNS.directories, directories)}`
        : 'Command directories: none',
      '',
    ].join('\n'),
  )
  return 0
}

module.exports = { ...definition, run }
