'use strict'
// `dsh-shell-env limits`: how this host enforces each resource limit of
// `run`/execute(), from limitMechanisms().

const { limitMechanisms } = require('../..')
const COLUMNS = require('../columns.js')
const { renderTable } = require('../table.js')

const definition = {
  name: 'limits',
  summary: 'how this host enforces each resource limit (--memory, --processes, …)',
  usage: 'limits [options]',
  description: `Shows, for each limit execute() and 'run' take, the mechanism this host
enforces it with: a cgroup controller for the whole command, or a resource
limit (RLIMIT_*) of each of its processes; and what a command can do
against it (TAMPERING): held (it cannot raise it), reported (it can change
it, and the result names the limit in limitsTampered) or unreported. A
limit this host cannot enforce is listed with the reason, and refused when
asked for. --json adds what each mechanism covers, in words.`,
  options: ['json'],
}

/** The option that sets each limit on the command line. */
const OPTIONS = { memory: '--memory', processes: '--processes', cpu: '--cpu', fileSize: '--file-size', openFiles: '--open-files' }

async function run(options, io) {
  const mechanisms = limitMechanisms()
  if (options.json) {
    const report = mechanisms.map(({ limit, field, mechanism, covers, tampering, tamperingNote, refused }) => ({ limit, field, mechanism, covers, tampering, tamperingNote, refused }))
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    return 0
  }
  const rows = mechanisms.map(({ limit, mechanism, tampering, refused }) => [
    OPTIONS[limit],
    mechanism ?? { text: `refused: it ${refused}`, tone: 'yellow' },
    tampering === 'unreported' ? { text: tampering, tone: 'yellow' } : (tampering ?? ''),
  ])
  io.stdout.write(`${renderTable(COLUMNS.limits, rows, { width: io.width, color: io.color })}\n`)
  return 0
}

module.exports = { ...definition, run }
