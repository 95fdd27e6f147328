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
limit (RLIMIT_*) of each of its processes. A limit this host cannot enforce
is listed with the reason, and refused when asked for.`,
  options: ['json'],
}

/** The option that sets each limit on the command line. */
const OPTIONS = { memory: '--memory', processes: '--processes', cpu: '--cpu', fileSize: '--file-size', openFiles: '--open-files' }

async function run(options, io) {
  const mechanisms = limitMechanisms()
  if (options.json) {
    const report = mechanisms.map(({ limit, field, mechanism, refused }) => ({ limit, field, mechanism, refused }))
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`)
    return 0
  }
  const rows = mechanisms.map(({ limit, mechanism, refused }) => [
    OPTIONS[limit],
    mechanism ?? { text: `refused: it ${refused}`, tone: 'yellow' },
  ])
  io.stdout.write(`${renderTable(COLUMNS.limits, rows, { width: io.width, color: io.color })}\n`)
  return 0
}

module.exports = { ...definition, run }
