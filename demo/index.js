'use strict'
// `npm run demo`: a small real Cordis composition, then a table of what the
// shell actually received.
//
// Plugins: shell-env (this package), a contributor that adds a key and a
// command directory, and a stand-in for the bash tool that runs `env` through
// ctx.shellEnv.execute as an agent. Cordis is the harness's own,
// @deepseek-ai/cordis.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const shellEnv = require('..')
const COLUMNS = require('../cli/columns.js')
const { describeReason } = require('../cli/reasons.js')
const { colorEnabled, outputWidth } = require('../cli/style.js')
const { renderTable } = require('../cli/table.js')

const SESSION = 'demo-session-1'

/** A table in the format the `dsh-shell-env` command prints (cli/table.js). */
function table(columns, rows) {
  return renderTable(columns, rows, { width: outputWidth(process.stdout), color: colorEnabled(process.stdout) })
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
  const { Context } = await import('@deepseek-ai/cordis')

  // What an outer harness might have left behind: both must not reach the shell.
  process.env.DSH_SESSION_ID = 'stale-session-from-an-outer-harness'
  process.env.DEMO_API_TOKEN = 'not-for-the-shell'

  // A command directory must be somewhere no other user can write: not /tmp
  // (see docs/environment.md, "Command directories"), so the demo works in a
  // private directory under the home directory and removes it afterwards.
  const tmp = fs.mkdtempSync(path.join(os.homedir(), '.dsh-shell-env-demo-'))
  try {
    const home = path.join(tmp, 'home')
    const bin = path.join(tmp, 'region-bin')
    fs.mkdirSync(bin)
    fs.writeFileSync(path.join(bin, 'hello-region'), '#!/bin/sh\necho "hello from $DSH_DEPLOYMENT_REGION"\n', { mode: 0o755 })

    const root = new Context()
    await root.plugin(shellEnv.ShellEnvRegistry, { dshHome: home, profile: { name: 'demo', dir: path.join(tmp, 'profile') } })

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
    console.log(table(COLUMNS.snapshot, dshRows))
    console.log('\nCommand directories, ahead of the inherited PATH\n')
    console.log(table([...COLUMNS.directories, { title: 'PATH ENTRY' }], directories))
    console.log(`\n  \`hello-region\` run by bare name printed: ${scriptOutput}`)
    console.log('\nRemoved from the inherited environment\n')
    console.log(table(COLUMNS.removed, removed.map(({ key, reason }) => [key, describeReason(reason)])))
    console.log(`\nAlso set for a non-interactive shell: ${terminal.map((key) => `${key}=${received[key]}`).join(' ')}`)
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
