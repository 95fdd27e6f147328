'use strict'
// `npm run demo`: a small real Cordis composition, then a table of what the
// shell actually received.
//
// Plugins: shell-env (this package), a contributor that adds a key and a
// command directory, and a stand-in for the bash tool that runs `env` through
// ctx.shellEnv.execute as an agent. Cordis is the 4.x line the harness runs,
// installed here as the dev alias `cordis4` (cordis@4.0.0-rc.10).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const shellEnv = require('..')

const SESSION = 'demo-session-1'

const REASONS = {
  'managed-prefix': 'inherited DSH_* value; the current one is set fresh',
  inherit: 'not kept by scrub.inherit',
  exclude: 'name looks secret (*KEY*, *PASSWORD*, *SECRET*, *TOKEN*)',
  hardening: 'could run code before the command',
  'include-only': 'not in scrub.includeOnly',
  'explicit-unset': 'unset by the caller',
}

/** Rows as aligned columns under a header. */
function table(header, rows) {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)))
  const line = (cells) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column])))
      .join('   ')
      .trimEnd()
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].map((text) => `  ${text}`).join('\n')
}

/** `env -0` output as an object. */
function parseEnv(text) {
  const env = {}
  for (const entry of text.split('\0')) {
    const at = entry.indexOf('=')
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1)
  }
  return env
}

async function main() {
  const { Context } = await import('cordis4')

  // What an outer harness might have left behind: both must not reach the shell.
  process.env.DSH_SESSION_ID = 'stale-session-from-an-outer-harness'
  process.env.DEMO_API_TOKEN = 'not-for-the-shell'

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-shell-env-demo-'))
  try {
    const home = path.join(tmp, 'home')
    const bin = path.join(tmp, 'region-bin')
    fs.mkdirSync(bin)
    fs.writeFileSync(path.join(bin, 'hello-region'), '#!/bin/sh\necho "hello from $DSH_DEPLOYMENT_REGION"\n', { mode: 0o755 })

    const root = new Context()
    await root.plugin(shellEnv, { dshHome: home, profile: { name: 'demo', dir: path.join(tmp, 'profile') } })

    await root.plugin({
      name: 'deployment-region',
      inject: ['shellEnv'],
      apply(ctx) {
        ctx.shellEnv.register({
          name: 'deployment-region',
          variables: { DSH_DEPLOYMENT_REGION: { description: 'Current deployment region.' } },
          commandDirectories: [bin],
          resolve: () => ({ DSH_DEPLOYMENT_REGION: 'cn-north' }),
        })
      },
    })

    // The bash tool's part: one ToolExecution per call, executed through the service.
    let bash
    await root.plugin({
      name: 'bash-tool',
      inject: ['shellEnv'],
      apply(ctx) {
        bash = async (command, execution) => (await ctx.shellEnv.execute({ command }, execution)).result()
      },
    })

    const execution = { toolCallId: 'call-1', agent: { session: { header: { id: SESSION } } } }
    // The script's one line, then the whole environment (NUL-separated).
    const result = await bash('hello-region && env -0', execution)
    if (result.exitCode !== 0) throw new Error(`the shell failed (exit ${result.exitCode}): ${result.stderr.text}`)
    const newline = result.stdout.text.indexOf('\n')
    const scriptOutput = result.stdout.text.slice(0, newline)
    const received = parseEnv(result.stdout.text.slice(newline + 1))
    const pathEntries = received.PATH.split(path.delimiter)

    // Owners come from the catalog; removals from the same pipeline without a spawn.
    const catalog = root.shellEnv.catalog()
    const owner = Object.fromEntries(catalog.variables.map((entry) => [entry.key, entry.owner]))
    const { removed, sources } = shellEnv.buildEnvironment({ dshEnv: root.shellEnv.collect(execution) })

    const dshRows = Object.keys(received)
      .filter((key) => key.startsWith('DSH_'))
      .sort()
      .map((key) => [key, received[key], owner[key] ?? '?'])
    const directories = catalog.commandDirectories.flatMap(({ contributor, directories: dirs }) =>
      dirs.map((dir) => [dir, contributor, `${pathEntries.indexOf(dir) + 1} of ${pathEntries.length}`]),
    )
    const terminal = Object.keys(sources).filter((key) => sources[key] === 'terminal')

    console.log(`What the shell received (agent session ${SESSION}, tool call ${execution.toolCallId})\n`)
    console.log(table(['VARIABLE', 'VALUE', 'OWNER'], dshRows))
    console.log('\nCommand directories, ahead of the inherited PATH\n')
    console.log(table(['DIRECTORY', 'CONTRIBUTOR', 'PATH ENTRY'], directories))
    console.log(`\n  \`hello-region\` run by bare name printed: ${scriptOutput}`)
    console.log('\nRemoved from the inherited environment\n')
    console.log(table(['VARIABLE', 'REASON'], removed.map(({ key, reason }) => [key, `${reason}: ${REASONS[reason] ?? ''}`])))
    console.log(`\nAlso set for a non-interactive shell: ${terminal.map((key) => `${key}=${received[key]}`).join(' ')}`)
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
