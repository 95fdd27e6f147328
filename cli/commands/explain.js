'use strict'
// `dsh-shell-env explain`: the whole child environment from buildEnvironment(),
// each variable's source, and what was removed and why.

const { buildEnvironment } = require('../..')
const COLUMNS = require('../columns.js')
const { openRegistry, executionFor, ownerLookup } = require('../registry.js')
const { describeReason } = require('../reasons.js')
const { shownValue } = require('../secrets.js')
const { renderTable } = require('../table.js')

const definition = {
  name: 'explain',
  summary: 'the full child environment: where each variable comes from, what was removed and why',
  usage: 'explain [options]',
  description: `Runs the environment pipeline a spawn uses on this process's environment,
without spawning: every variable the child would get with its source
(inherited, terminal, explicit or managed), and every inherited variable the
pipeline removed with the reason, what --hardening would remove on top when
it is off, and the command directories left out of PATH because someone
else could write to them. Values holding a credential are masked. Variables
that npm, npx, pnpm or yarn set for what they run (npm_*, INIT_CWD) are marked
(npm): a harness call would not inherit them. The table shows them as one
line (dozens under npx), --all one line each; --json always lists them.`,
  options: ['session', 'profile', 'home', 'plugin', 'scrub', 'hardening', 'no-hardening', 'all', 'json', 'show-secrets'],
}

const SOURCE_TONES = { managed: 'green', terminal: 'cyan', explicit: 'yellow' }

/**
 * Whether `key` was set by the tool that launched this command (npm, npx,
 * pnpm and yarn set `npm_*` and `INIT_CWD` for what they run), not by the
 * environment a harness process would have.
 */
function fromLauncher(key) {
  return key.startsWith('npm_') || key === 'INIT_CWD'
}

/** `names` joined by commas, in lines indented by two that fit `width`. */
function wrapList(names, width) {
  const lines = []
  let line = ''
  for (const [index, name] of names.entries()) {
    const item = index < names.length - 1 ? `${name},` : name
    if (line && 2 + line.length + 1 + item.length > width) {
      lines.push(`  ${line}`)
      line = item
    } else {
      line = line ? `${line} ${item}` : item
    }
  }
  if (line) lines.push(`  ${line}`)
  return lines
}

async function run(options, io) {
  const registry = await openRegistry(options, io.cwd)
  const snapshot = await registry.collect(executionFor(options))
  const ownerOf = ownerLookup(registry.catalog())
  const scrub = { inherit: options.scrub, hardening: options.hardening }
  const built = buildEnvironment({ dshEnv: snapshot, scrub }, io.env)

  const variables = Object.keys(built.env)
    .sort()
    .map((key) => {
      const source = built.sources[key]
      const { value, masked } = shownValue(key, built.env[key], options.showSecrets)
      const launcher = source === 'inherited' && fromLauncher(key) ? 'npm' : null
      return { key, value, source, owner: source === 'managed' ? ownerOf(key) : null, masked, launcher }
    })
  const launched = variables.filter((variable) => variable.launcher !== null).length
  const removed = built.removed.map(({ key, reason }) => ({ key, reason }))
  // Left out of PATH by the collection above, and why.
  const untrustedDirectories = registry.untrustedDirectories()
  // What the preset left out would remove on top: each option's effect is visible before it is chosen.
  const hardeningWouldRemove = scrub.hardening
    ? []
    : buildEnvironment({ dshEnv: snapshot, scrub: { ...scrub, hardening: true } }, io.env)
        .removed.filter(({ reason }) => reason === 'hardening')
        .map(({ key }) => key)

  if (options.json) {
    const report = {
      dshHome: registry.dshHome,
      session: options.session ?? null,
      scrub,
      variables,
      removed,
      hardeningWouldRemove,
      untrustedDirectories,
    }
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    return 0
  }
  const table = (columns, rows) => renderTable(columns, rows, { width: io.width, color: io.color })
  // A package manager's own variables (28 under npx) would fill the table and
  // squeeze its values to their minimum: one line for all of them unless --all.
  const folded = options.all ? [] : variables.filter((variable) => variable.launcher !== null)
  const kept = variables
    .filter((variable) => !folded.includes(variable))
    .map(({ key, value, source, masked, launcher }) => [
      key,
      masked ? { text: value, tone: 'dim' } : value,
      launcher ? { text: `${source} (${launcher})`, tone: 'dim' } : { text: source, tone: SOURCE_TONES[source] },
    ])
  if (folded.length > 0) {
    const names = folded.some(({ key }) => key === 'INIT_CWD') ? 'npm_*, INIT_CWD' : 'npm_*'
    kept.push([names, { text: `--all lists all ${folded.length}`, tone: 'dim' }, { text: 'inherited (npm)', tone: 'dim' }])
  }
  const dropped = removed.map(({ key, reason }) => [key, { text: describeReason(reason), tone: 'yellow' }])
  const settings = `scrub ${scrub.inherit}, hardening ${scrub.hardening ? 'on' : 'off'}`
  io.stdout.write(
    [
      `Child environment: ${variables.length} variables (${settings})`,
      '',
      table(COLUMNS.environment, kept),
      '',
      `Removed from the inherited environment: ${removed.length}`,
      ...(removed.length ? ['', table(COLUMNS.removed, dropped)] : []),
      ...(untrustedDirectories.length
        ? [
            '',
            `Command directories left out of PATH: ${untrustedDirectories.length}`,
            ...untrustedDirectories.map(({ contributor, directory, reason }) => `  ${directory} (${contributor}) ${reason}`),
          ]
        : []),
      ...(hardeningWouldRemove.length
        ? ['', `--hardening would also remove ${hardeningWouldRemove.length}:`, ...wrapList(hardeningWouldRemove, io.width ?? 80)]
        : []),
      ...(launched
        ? [
            '',
            `Marked (npm): ${launched} variable(s) the tool that launched this command set,`,
            'which a harness call would not inherit. To see what it would, run the',
            'command directly: ./node_modules/.bin/dsh-shell-env explain',
          ]
        : []),
      '',
    ].join('\n'),
  )
  return 0
}

module.exports = { ...definition, run }
