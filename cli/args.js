'use strict'
// The command line: `dsh-shell-env <command> [options] [-- COMMAND...]`, read
// with Node's util.parseArgs. Every mistake is a UsageError with a one-line
// message (exit code 2); values are checked and normalised here, so commands
// receive ready-to-use options.

const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')

const { UsageError, PROGRAM } = require('./errors.js')
const { FORMATS } = require('./formats.js')

/** Every option any command accepts; `value` names the argument in help texts. */
const OPTIONS = {
  session: { type: 'string', value: 'ID', help: 'an agent call of session ID (DSH_SESSION_ID); default: no agent' },
  profile: { type: 'string', value: 'NAME=DIR', help: 'the profile: DSH_PROFILE=NAME, DSH_PROFILE_DIR=DIR' },
  home: { type: 'string', value: 'DIR', help: 'the Harness home (DSH_HOME); default $DSH_HOME, then ~/.dsh' },
  plugin: {
    type: 'string',
    multiple: true,
    value: 'FILE',
    help: 'load a contributor, an array of contributors or a Cordis plugin (ES module or CommonJS); repeatable',
  },
  scrub: { type: 'string', value: 'all|core|none', help: 'which inherited variables are kept (default all)' },
  hardening: {
    type: 'boolean',
    help: 'also drop variables that make programs run chosen code (LD_*, BASH_ENV, NODE_OPTIONS, …): for shared CI runners and services',
  },
  'no-hardening': { type: 'boolean', help: 'keep those variables; the default' },
  timeout: { type: 'string', value: 'MS', help: 'stop the command after MS milliseconds (default 120000; 0: no limit)' },
  memory: { type: 'string', value: 'SIZE', help: 'limit the command to SIZE of memory (512M, 2G; bytes without a unit)' },
  processes: { type: 'string', value: 'N', help: 'limit the command to N processes at once' },
  cpu: { type: 'string', value: 'SECONDS', help: 'limit each process to SECONDS of CPU time (30, 30s, 5m)' },
  'file-size': { type: 'string', value: 'SIZE', help: 'limit the size of each file the command writes (1G)' },
  'open-files': { type: 'string', value: 'N', help: 'limit each process to N open files' },
  'no-stdin': { type: 'boolean', help: "give the command /dev/null as stdin, even when this command's stdin is a pipe or a file" },
  json: { type: 'boolean', help: 'print JSON (shapes in docs/cli.md) instead of a table' },
  format: {
    type: 'string',
    value: 'table|json|export|dotenv',
    help: 'how to print: a table (default), JSON, export lines a shell can source, or .env lines',
  },
  'show-secrets': { type: 'boolean', help: 'show secret-looking values instead of <masked>' },
  all: {
    type: 'boolean',
    help: 'list every variable: without it, those a package manager set for what it runs (npm_*, INIT_CWD) are one line',
  },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
  debug: { type: 'boolean', help: 'on an error, also print its stack and those of its causes (or DEBUG=dsh-shell-env)' },
}

const SCRUB_VALUES = ['all', 'core', 'none']

/** `~` and `~/…` expanded, then made absolute against the current directory. */
function absolutePath(dir) {
  const expanded = dir === '~' ? os.homedir() : dir.startsWith('~/') ? path.join(os.homedir(), dir.slice(2)) : dir
  return path.resolve(expanded)
}

/** Option values as commands use them. */
function normalise(values, command) {
  const fail = (message) => {
    throw new UsageError(message, `${PROGRAM} ${command.name}`)
  }
  const options = {
    session: values.session,
    home: values.home,
    profile: undefined,
    plugins: values.plugin ?? [],
    scrub: values.scrub ?? 'all',
    hardening: values.hardening === true,
    timeoutMs: undefined,
    json: values.json === true,
    format: values.format ?? (values.json === true ? 'json' : 'table'),
    showSecrets: values['show-secrets'] === true,
    all: values.all === true,
    stdin: values['no-stdin'] !== true,
  }
  if (values.hardening === true && values['no-hardening'] === true) fail('--hardening and --no-hardening contradict each other')
  // Blank values would otherwise pass as a session id or a directory named by spaces.
  if (values.session !== undefined && values.session.trim() === '') fail(`invalid --session '${values.session}': expected a session id`)
  if (values.home !== undefined && values.home.trim() === '') fail(`invalid --home '${values.home}': expected a directory`)
  if (values.profile !== undefined) {
    const at = values.profile.indexOf('=')
    const name = at > 0 ? values.profile.slice(0, at) : ''
    const dir = at > 0 ? values.profile.slice(at + 1) : ''
    if (name.trim() === '' || dir.trim() === '') fail(`invalid --profile '${values.profile}': expected NAME=DIR`)
    options.profile = { name, dir: absolutePath(dir) }
  }
  if (!FORMATS.includes(options.format)) fail(`invalid --format '${options.format}': expected ${FORMATS.join(', ')}`)
  if (values.json === true && options.format !== 'json') fail(`--json and --format ${options.format} contradict each other`)
  options.json = options.format === 'json'
  if (!SCRUB_VALUES.includes(options.scrub)) fail(`invalid --scrub '${options.scrub}': expected all, core or none`)
  if (values.timeout !== undefined) {
    if (!/^\d+$/.test(values.timeout) || !Number.isSafeInteger(Number(values.timeout))) {
      fail(`invalid --timeout '${values.timeout}': expected milliseconds, 0 for no limit`)
    }
    options.timeoutMs = Number(values.timeout)
  }
  options.limits = limitsOf(values, fail)
  return options
}

const SIZE_UNITS = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 }
const SECOND_UNITS = { '': 1, s: 1, m: 60, h: 3600 }

/**
 * `--memory`, `--processes`, `--cpu`, `--file-size` and `--open-files` as
 * `execute()`'s `limits` (whose rules the core checks), or `undefined`.
 * Sizes take K, M, G or T (powers of 1024, an optional `iB` or `B`), CPU
 * time s, m or h.
 */
function limitsOf(values, fail) {
  const limits = {}
  const parse = (option, field, pattern, units, expected) => {
    const given = values[option]
    if (given === undefined) return
    const match = pattern.exec(given)
    const unit = units === SIZE_UNITS ? (match?.[2] ?? '').toUpperCase() : (match?.[2] ?? '')
    const value = match === null ? Number.NaN : Number(match[1]) * units[unit]
    if (!Number.isSafeInteger(value) || value <= 0) fail(`invalid --${option} '${given}': expected ${expected}`)
    limits[field] = value
  }
  parse('memory', 'memoryBytes', /^(\d+)([KMGT])?(?:i?B)?$/i, SIZE_UNITS, 'a size such as 512M or 2G')
  parse('file-size', 'fileBytes', /^(\d+)([KMGT])?(?:i?B)?$/i, SIZE_UNITS, 'a size such as 100M or 1G')
  parse('cpu', 'cpuSeconds', /^(\d+)([smh])?$/, SECOND_UNITS, 'seconds such as 30, 30s or 5m')
  parse('processes', 'processes', /^(\d+)()$/, { '': 1 }, 'a number of processes')
  parse('open-files', 'openFiles', /^(\d+)()$/, { '': 1 }, 'a number of files')
  return Object.keys(limits).length > 0 ? limits : undefined
}

/**
 * The edit distance of `a` and `b`: insertions, deletions, substitutions and
 * swaps of two neighbours (`--sesion`, `--josn`) count one each.
 */
function distance(a, b) {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1)
    }
  }
  return rows[a.length][b.length]
}

/**
 * The one of `candidates` that `given` most likely misspells or shortens:
 * the only one it begins, else the nearest within a third of its length
 * (one edit at least), else undefined.
 */
function nearest(given, candidates) {
  const lower = given.toLowerCase()
  const extended = candidates.filter((candidate) => candidate.startsWith(lower))
  if (lower.length >= 2 && extended.length === 1) return extended[0]
  let best
  let bestDistance = Math.max(1, Math.floor(given.length / 3)) + 1
  for (const candidate of candidates) {
    const d = distance(lower, candidate)
    if (d < bestDistance) [best, bestDistance] = [candidate, d]
  }
  return best
}

/**
 * The message for an option `command` does not take: the nearest one it
 * takes, else the commands that take it.
 */
function unknownOption(raw, name, command, commands) {
  if (!raw.startsWith('--')) return `unknown option '${raw}'`
  const own = [...command.options, 'help', 'debug']
  const meant = nearest(name, own)
  if (meant !== undefined) return `unknown option '${raw}': did you mean '--${meant}'?`
  const others = commands.filter((other) => other.options.includes(name)).map((other) => other.name)
  if (others.length > 0) return `unknown option '${raw}' for ${command.name}: ${others.join(', ').replace(/, ([^,]+)$/, ' and $1')} take it`
  return `unknown option '${raw}'`
}

/**
 * Options and, for commands that take one, the COMMAND after `--`. Parsed
 * leniently so that each mistake gets its own short message.
 */
function parseCommandOptions(command, args, commands = []) {
  const config = Object.fromEntries(
    command.options.map((name) => {
      const { type, multiple, short } = OPTIONS[name]
      return [name, { type, ...(multiple ? { multiple } : {}), ...(short ? { short } : {}) }]
    }),
  )
  config.help = { type: 'boolean', short: 'h' }
  config.debug = { type: 'boolean' }
  const { tokens } = parseArgs({ args, options: config, strict: false, allowPositionals: true, tokens: true })
  const fail = (message) => {
    throw new UsageError(message, `${PROGRAM} ${command.name}`)
  }

  const values = {}
  const argv = []
  let terminated = false
  let help = false
  for (const token of tokens) {
    if (token.kind === 'option-terminator') {
      terminated = true
    } else if (token.kind === 'positional') {
      if (command.takesKey && !command.takesCommand) argv.push(token.value)
      else if (terminated && command.takesCommand) argv.push(token.value)
      else if (command.takesCommand) {
        // The command starts at its first word: everything from there is its own,
        // options included (`run --session s-1 grep -r x .`). Only a command
        // whose first word starts with `-` needs `--` before it.
        argv.push(...args.slice(token.index))
        break
      } else fail(`unexpected argument '${token.value}'`)
    } else {
      const spec = config[token.name]
      if (spec === undefined) fail(unknownOption(token.rawName, token.name, command, commands))
      if (token.name === 'help') {
        help = true
      } else if (token.name === 'debug') {
        // Read by main from argv: it applies to errors before options exist too.
      } else if (spec.type === 'boolean') {
        if (token.value !== undefined) fail(`option '--${token.name}' takes no value`)
        values[token.name] = true
      } else {
        // The next word is this option's value unless it is another option (a
        // negative number is a value, so that its own check can name it).
        const another = !token.inlineValue && /^-(?!\d)/.test(token.value ?? '')
        const missing = token.value === undefined || token.value === '' || another
        if (missing) fail(`option '--${token.name}' needs a value`)
        if (spec.multiple) (values[token.name] ??= []).push(token.value)
        else values[token.name] = token.value
      }
    }
  }
  if (help) return { help: true }
  const options = normalise(values, command)
  if (command.takesCommand) {
    if (argv.length === 0) fail(`missing the command to run, as in '${PROGRAM} ${command.name} bash -c "…"'`)
    options.command = argv
  }
  if (command.takesKey) {
    if (argv.length === 0) fail('missing the variable to print, as in ' + `'${PROGRAM} ${command.name} DSH_HOME'`)
    if (argv.length > 1) fail(`unexpected argument '${argv[1]}': give one variable`)
    // What no environment can hold; any other name is looked up (and may be absent).
    if (argv[0] === '' || argv[0].includes('=')) fail(`invalid variable name '${argv[0]}': expected a name without '='`)
    options.key = argv[0]
  }
  return { help: false, options }
}

/**
 * `argv` (without node and the script) as one of:
 * `{ kind: 'help', command? }`, `{ kind: 'version' }` or `{ kind: 'run', command, options }`.
 */
function parseCommandLine(argv, commands) {
  const [first, ...rest] = argv
  // A bare command is a request for help, not a mistake.
  if (first === undefined || first === '--help' || first === '-h') return { kind: 'help' }
  if (first === '--version') return { kind: 'version' }
  if (first === 'help') {
    if (rest.length === 0) return { kind: 'help' }
    const topic = commands.find((command) => command.name === rest[0])
    if (!topic || rest.length > 1) throw new UsageError(`unknown command '${rest.join(' ')}'`)
    return { kind: 'help', command: topic }
  }
  if (first.startsWith('-')) throw new UsageError(`unknown option '${first.split('=')[0]}' before the command`)
  const command = commands.find((candidate) => candidate.name === first)
  if (!command) {
    const meant = nearest(first, commands.map((candidate) => candidate.name))
    throw new UsageError(`unknown command '${first}'${meant === undefined ? '' : `: did you mean '${meant}'?`}`)
  }
  const parsed = parseCommandOptions(command, rest, commands)
  return parsed.help ? { kind: 'help', command } : { kind: 'run', command, options: parsed.options }
}

module.exports = { OPTIONS, SCRUB_VALUES, parseCommandLine, parseCommandOptions, absolutePath, nearest }
