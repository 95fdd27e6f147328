'use strict'

// The `dsh-shell-env` command. Every case runs `node bin/dsh-shell-env.js …`
// as a real child process; nothing is mocked. Runs unchanged under
// `vitest run` (globals: true) and `jest`. JSON shapes are the ones docs/cli.md
// documents; human tables are checked for width and escapes, not byte by byte.

const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES } = require('./helpers.cjs')
const { posix, signals } = require('./platform.cjs')

const BIN = path.join(ROOT, 'bin', 'dsh-shell-env.js')
const CLI_FIXTURES = path.join(FIXTURES, 'cli')
const fixture = (name) => path.join(CLI_FIXTURES, name)
const HOME = path.resolve(os.tmpdir(), 'dsh-cli-spec-home')
// The fixtures' command directories (fixtures/cli/region.cjs, pair.mjs).
const REGION_BIN = path.resolve('/opt/dsh-cli-spec/region/bin')
const PAIR_BIN = path.resolve('/opt/dsh-cli-spec/pair/bin')
/** `text` matched literally in a RegExp. */
const literal = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const ESC = '\u001b'

/** The runner's environment without anything that would change the command's output. */
function baseEnv() {
  const env = { ...process.env }
  for (const key of Object.keys(env)) {
    if (key.toUpperCase().startsWith('DSH_') || ['NO_COLOR', 'FORCE_COLOR', 'COLUMNS'].includes(key)) delete env[key]
    // What `npm test` itself sets: the cases that need a launcher's variables set their own.
    if (key.startsWith('npm_') || key === 'INIT_CWD' || key === 'DEBUG') delete env[key]
  }
  return env
}

/** Runs the command; `env` entries override (undefined removes), `node` are extra node flags. */
function cli(args, { env = {}, node = [], cwd = ROOT, timeout = 20_000, input } = {}) {
  const merged = { ...baseEnv(), ...env }
  for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key]
  const result = spawnSync(process.execPath, [...node, BIN, ...args], { cwd, env: merged, encoding: 'utf8', timeout, input })
  if (result.error) throw result.error
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr }
}

/** Runs the command with `--json` and returns the parsed output (the run must succeed). */
function cliJson(args, options) {
  const result = cli([...args, '--json'], options)
  if (result.status !== 0) throw new Error(`exit ${result.status}: ${result.stderr}`)
  expect(result.stderr).toBe('')
  return JSON.parse(result.stdout)
}

const byKey = (entries) => Object.fromEntries(entries.map((entry) => [entry.key, entry]))
const codePoints = (line) => Array.from(line).length

/** Every line fits `width` columns and no escape sequence is written. */
function expectPlainTable(text, width = 80) {
  expect(text).not.toContain(ESC)
  for (const line of text.split('\n')) expect(codePoints(line)).toBeLessThanOrEqual(width)
}

/** A usage error: exit 2, nothing on stdout, exactly one line on stderr. */
function expectUsageError(result, ...mentions) {
  expect(result.status).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr.endsWith('\n')).toBe(true)
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
  expect(result.stderr.startsWith('dsh-shell-env: ')).toBe(true)
  for (const mention of mentions) expect(result.stderr).toContain(mention)
}

/** A failure the command reports: exit 1, one line on stderr. */
function expectFailure(result, ...mentions) {
  expect(result.status).toBe(1)
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
  expect(result.stderr.startsWith('dsh-shell-env: ')).toBe(true)
  for (const mention of mentions) expect(result.stderr).toContain(mention)
}

posix.describe('the bin entry', () => {
  it('is wired in package.json, shipped in files, executable and starts with a node shebang', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
    expect(manifest.bin).toEqual({ 'dsh-shell-env': 'bin/dsh-shell-env.js' })
    expect(manifest.files).toEqual(expect.arrayContaining(['bin', 'cli']))
    expect(fs.statSync(BIN).mode & 0o111).not.toBe(0)
    expect(fs.readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
  })

  it('runs directly through its shebang', () => {
    const result = spawnSync(BIN, ['--version'], { cwd: ROOT, env: baseEnv(), encoding: 'utf8' })
    expect(result.status).toBe(0)
    expect(result.stdout.trim()).toBe(require('../package.json').version)
  })
})

describe('--help', () => {
  it('the top level lists every command and the exit codes', () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const result = cli(args)
      expect(result.status).toBe(0)
      expect(result.stderr).toBe('')
      expect(result.stdout.startsWith('Usage: dsh-shell-env <command> [options]\n')).toBe(true)
      for (const command of ['env', 'get', 'explain', 'run', 'catalog', 'limits']) expect(result.stdout).toMatch(new RegExp(`^  ${command} `, 'm'))
      expect(result.stdout).toContain('2 usage error')
      expectPlainTable(result.stdout)
    }
  })

  it.each([
    ['env', ['--session ID', '--profile NAME=DIR', '--home DIR', '--plugin FILE', '--json', '--format table|json|export|dotenv', '--show-secrets']],
    ['get', ['KEY', '--session ID', '--profile NAME=DIR', '--home DIR', '--plugin FILE']],
    ['explain', ['--session ID', '--scrub all|core|none', '--hardening', '--json', '--show-secrets', '--plugin FILE']],
    ['run', ['--session ID', '--timeout MS', '--scrub all|core|none', '--hardening', '--plugin FILE', '[--] COMMAND', '--memory SIZE', '--processes N', '--cpu SECONDS', '--file-size SIZE', '--open-files N']],
    ['limits', ['--json', 'cgroup', 'RLIMIT_*']],
    ['catalog', ['--plugin FILE', '--profile NAME=DIR', '--json']],
  ])('%s --help documents its options and fits 80 columns', (command, mentions) => {
    for (const args of [[command, '--help'], [command, '-h'], ['help', command], [command, '--json', '--help']]) {
      if ((command === 'run' || command === 'get') && args.includes('--json')) continue
      const result = cli(args)
      expect(result.status).toBe(0)
      expect(result.stdout.startsWith(`Usage: dsh-shell-env ${command} `)).toBe(true)
      for (const mention of mentions) expect(result.stdout).toContain(mention)
      expectPlainTable(result.stdout)
    }
  })
})

describe('usage errors exit 2 with a one-line message', () => {
  it.each([
    [['env', '--bogus'], "unknown option '--bogus' (see dsh-shell-env env --help)"],
    [['explain', '-x'], "unknown option '-x'"],
    [['catalog', '--session', 's-1'], "unknown option '--session' (see dsh-shell-env catalog --help)"],
    [['run', '--json', '--', 'true'], "unknown option '--json'"],
    [['env', '--session'], "option '--session' needs a value"],
    [['env', '--session', '--json'], "option '--session' needs a value"],
    [['env', '--json=yes'], "option '--json' takes no value"],
    [['env', '--session', ' '], "invalid --session ' ': expected a session id"],
    [['run', '--home', '  ', 'true'], "invalid --home '  ': expected a directory"],
    [['env', '--profile', 'work= '], "invalid --profile 'work= ': expected NAME=DIR"],
    [['env', '--profile', 'work'], "invalid --profile 'work': expected NAME=DIR"],
    [['env', '--profile', '=/profiles/work'], 'expected NAME=DIR'],
    [['explain', '--scrub', 'most'], "invalid --scrub 'most': expected all, core or none"],
    [['run', '--timeout', 'soon', '--', 'true'], "invalid --timeout 'soon'"],
    [['run', '--timeout', '-5', '--', 'true'], "invalid --timeout '-5': expected milliseconds, 0 for no limit"],
    [['run', '--session', '--timeout', '5', 'true'], "option '--session' needs a value"],
    [['run', '--memory', '512X', 'true'], "invalid --memory '512X': expected a size such as 512M or 2G"],
    [['run', '--memory', '0', 'true'], "invalid --memory '0'"],
    [['run', '--file-size', '1.5G', 'true'], "invalid --file-size '1.5G': expected a size such as 100M or 1G"],
    [['run', '--cpu', '30x', 'true'], "invalid --cpu '30x': expected seconds such as 30, 30s or 5m"],
    [['run', '--processes', 'many', 'true'], "invalid --processes 'many': expected a number of processes"],
    [['run', '--open-files', '-1', 'true'], "invalid --open-files '-1'"],
    [['limits', 'stray'], "unexpected argument 'stray'"],
    [['run'], "missing the command to run, as in 'dsh-shell-env run bash -c"],
    [['run', '--'], "missing the command to run, as in 'dsh-shell-env run bash -c"],
    [['env', 'stray'], "unexpected argument 'stray'"],
    [['env', '--format', 'yaml'], "invalid --format 'yaml': expected table, json, export, dotenv"],
    [['env', '--format', 'export', '--json'], '--json and --format export contradict each other'],
    [['get'], "missing the variable to print, as in 'dsh-shell-env get DSH_HOME'"],
    [['get', 'DSH_HOME', 'DSH_SHELL'], "unexpected argument 'DSH_SHELL': give one variable"],
    [['get', ''], "invalid variable name '': expected a name without '='"],
    [['get', 'DSH_HOME=/x'], "invalid variable name 'DSH_HOME=/x': expected a name without '='"],
    [['catalog', '--', 'stray'], "unexpected argument 'stray'"],
    [['frobnicate'], "unknown command 'frobnicate' (see dsh-shell-env --help)"],
    [['--session', 's-1', 'env'], "unknown option '--session' before the command"],
  ])('%j', (args, message) => {
    expectUsageError(cli(args), message)
  })
})

describe('the bare command', () => {
  it('prints the help, as --help does', () => {
    const bare = cli([])
    expect(bare.status).toBe(0)
    expect(bare.stderr).toBe('')
    expect(bare.stdout).toBe(cli(['--help']).stdout)
  })
})

describe('env', () => {
  it('--json: the managed snapshot of an agent call with a profile, values and owners', () => {
    const profileDir = path.join(HOME, 'profiles', 'work')
    const report = cliJson([
      'env',
      '--session',
      'session-42',
      '--home',
      HOME,
      '--profile',
      `work=${profileDir}`,
      '--plugin',
      fixture('region.cjs'),
    ])
    expect(Object.keys(report)).toEqual(['dshHome', 'session', 'variables', 'commandDirectories'])
    expect(report.dshHome).toBe(HOME)
    expect(report.session).toBe('session-42')
    const keys = report.variables.map((entry) => entry.key)
    expect(keys).toEqual([
      'DSH_HOME',
      'DSH_PROFILE',
      'DSH_PROFILE_DIR',
      'DSH_REGION',
      'DSH_REGION_BUILD',
      'DSH_REGION_MIRROR',
      'DSH_REGION_TOKEN',
      'DSH_SESSION_ID',
      'DSH_SHELL',
      'PATH',
    ])
    const variables = byKey(report.variables)
    for (const entry of report.variables) expect(Object.keys(entry)).toEqual(['key', 'value', 'owner', 'masked'])
    expect(variables.DSH_HOME).toEqual({ key: 'DSH_HOME', value: HOME, owner: 'built-in', masked: false })
    expect(variables.DSH_SHELL).toEqual({ key: 'DSH_SHELL', value: '1', owner: 'built-in', masked: false })
    expect(variables.DSH_SESSION_ID).toEqual({ key: 'DSH_SESSION_ID', value: 'session-42', owner: 'built-in', masked: false })
    expect(variables.DSH_PROFILE).toEqual({ key: 'DSH_PROFILE', value: 'work', owner: 'built-in', masked: false })
    expect(variables.DSH_PROFILE_DIR.value).toBe(profileDir)
    expect(variables.DSH_REGION).toEqual({ key: 'DSH_REGION', value: 'cn-north', owner: 'deployment-region', masked: false })
    // Masked by name (*TOKEN*) and by value (a GitHub token).
    expect(variables.DSH_REGION_TOKEN).toEqual({ key: 'DSH_REGION_TOKEN', value: '<masked>', owner: 'deployment-region', masked: true })
    expect(variables.DSH_REGION_BUILD).toEqual({ key: 'DSH_REGION_BUILD', value: '<masked>', owner: 'deployment-region', masked: true })
    // A URL whose password was all of the credential: only the password is masked.
    expect(variables.DSH_REGION_MIRROR).toEqual({
      key: 'DSH_REGION_MIRROR',
      value: 'https://ada:****@mirror.example/simple',
      owner: 'deployment-region',
      masked: true,
    })
    // PATH: the command directory first, owned by the contributor that declared it.
    expect(variables.PATH.owner).toBe('deployment-region')
    expect(variables.PATH.value.split(path.delimiter)[0]).toBe(REGION_BIN)
    expect(report.commandDirectories).toEqual([{ contributor: 'deployment-region', directories: [REGION_BIN] }])
  })

  it('--show-secrets shows masked values; no --session means no agent', () => {
    const report = cliJson(['env', '--home', HOME, '--plugin', fixture('region.cjs'), '--show-secrets'])
    const variables = byKey(report.variables)
    expect(report.session).toBeNull()
    expect(variables.DSH_SESSION_ID).toBeUndefined()
    expect(variables.DSH_REGION.value).toBe('none')
    expect(variables.DSH_REGION_TOKEN).toEqual({
      key: 'DSH_REGION_TOKEN',
      value: 'region-credential-value',
      owner: 'deployment-region',
      masked: false,
    })
    expect(variables.DSH_REGION_BUILD.value).toBe('ghp_0123456789abcdefghijklmnopqrstuvwxyz')
    expect(variables.DSH_REGION_MIRROR.value).toBe('https://ada:s3cret@mirror.example/simple')
  })

  it('the home defaults to $DSH_HOME; inherited DSH_* values never show', () => {
    const report = cliJson(['env'], { env: { DSH_HOME: HOME, DSH_SESSION_ID: 'stale', DSH_EXTRA: 'stale' } })
    expect(report.variables).toEqual([
      { key: 'DSH_HOME', value: HOME, owner: 'built-in', masked: false },
      { key: 'DSH_SHELL', value: '1', owner: 'built-in', masked: false },
    ])
    expect(report.commandDirectories).toEqual([])
  })

  it('an ES module exporting an array of contributors, next to a CommonJS one: PATH owned by both', () => {
    const report = cliJson([
      'env',
      '--home',
      HOME,
      '--session',
      's-pair',
      '--plugin',
      fixture('region.cjs'),
      '--plugin',
      path.relative(ROOT, fixture('pair.mjs')),
    ])
    const variables = byKey(report.variables)
    expect(variables.DSH_PAIR_ASYNC).toEqual({ key: 'DSH_PAIR_ASYNC', value: 'agent', owner: 'pair-async', masked: false })
    expect(variables.DSH_PAIR_TOOLS).toEqual({ key: 'DSH_PAIR_TOOLS', value: 'on', owner: 'pair-tools', masked: false })
    expect(variables.DSH_REGION.value).toBe('cn-north')
    // Contributor-name order: deployment-region, then pair-tools.
    expect(variables.PATH.owner).toBe('deployment-region, pair-tools')
    expect(variables.PATH.value.split(path.delimiter).slice(0, 2)).toEqual([REGION_BIN, PAIR_BIN])
    expect(report.commandDirectories).toEqual([
      { contributor: 'deployment-region', directories: [REGION_BIN] },
      { contributor: 'pair-tools', directories: [PAIR_BIN] },
    ])
  })

  it('a table: aligned, within 80 columns, long values elided in the middle, no escapes when not a TTY', () => {
    const longHome = path.join(HOME, ...Array.from({ length: 8 }, (_, index) => `a-rather-long-directory-${index}`), 'end')
    const result = cli(['env', '--home', longHome, '--session', 'session-table', '--plugin', fixture('region.cjs')])
    expect(result.status).toBe(0)
    expect(result.stderr).toBe('')
    expectPlainTable(result.stdout)
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^ {2}VARIABLE +VALUE +OWNER$/)
    expect(lines[1]).toMatch(/^ {2}-+ {3}-+ {3}-+$/)
    // Columns line up: every value starts where the VALUE header does.
    const valueColumn = lines[0].indexOf('VALUE')
    const home = lines.find((line) => line.startsWith('  DSH_HOME '))
    expect(home.charAt(valueColumn - 1)).toBe(' ')
    expect(home.slice(valueColumn)).toMatch(new RegExp(`^${literal(HOME.slice(0, 10))}.*….*${literal(path.sep)}end +built-in$`))
    expect(lines.find((line) => line.startsWith('  DSH_SESSION_ID '))).toMatch(/session-table +built-in$/)
    expect(lines.find((line) => line.startsWith('  DSH_REGION_TOKEN '))).toMatch(/<masked> +deployment-region$/)
  })
})

describe('env --format and get: the snapshot for other tools', () => {
  const TRICKY = {
    DSH_QUOTES: `it's "quoted" $HOME \`date\` \\ back\\slash '' end'`,
    DSH_LINES: 'one\ntwo\r\n\nthree\n',
    DSH_TEXT: 'é € 😀 中文',
    DSH_EMPTY: '',
  }
  const trickyArgs = ['--home', HOME, '--plugin', fixture('tricky.cjs')]

  /** Sources `script` in bash and returns each of `keys` as bash then has it (`null`: unset). */
  function sourcedInBash(script, keys) {
    const file = path.join(os.tmpdir(), `dsh-cli-export-${process.pid}.sh`)
    fs.writeFileSync(file, script)
    try {
      const report = keys.map((key) => `if [ -n "\${${key}+set}" ]; then printf '%s=%s\\0' ${key} "$${key}"; fi`).join('\n')
      const result = spawnSync('bash', ['--norc', '--noprofile', '-c', `set -eu\n. "$1"\n${report}`, 'bash', file], { encoding: 'utf8' })
      expect(result.stderr).toBe('')
      expect(result.status).toBe(0)
      const seen = Object.fromEntries(keys.map((key) => [key, null]))
      for (const entry of result.stdout.split('\0').filter((text) => text !== '')) {
        const at = entry.indexOf('=')
        seen[entry.slice(0, at)] = entry.slice(at + 1)
      }
      return seen
    } finally {
      fs.rmSync(file, { force: true })
    }
  }

  posix.it('--format export round-trips every value through bash, quotes, newlines and non-ASCII included', () => {
    const result = cli(['env', '--format', 'export', '--show-secrets', ...trickyArgs])
    expect(result.status).toBe(0)
    expect(result.stderr).toBe('')
    const keys = [...Object.keys(TRICKY), 'DSH_TRICKY_TOKEN', 'DSH_HOME', 'DSH_SHELL']
    expect(sourcedInBash(result.stdout, keys)).toEqual({ ...TRICKY, DSH_TRICKY_TOKEN: 'tricky-credential', DSH_HOME: HOME, DSH_SHELL: '1' })
  })

  posix.it('--format export without --show-secrets writes a masked value as a comment, never as <masked>', () => {
    const result = cli(['env', '--format', 'export', ...trickyArgs])
    expect(result.status).toBe(0)
    expect(result.stdout).toContain('# DSH_TRICKY_TOKEN is masked (--show-secrets writes it)\n')
    expect(result.stdout).not.toContain('<masked>')
    expect(sourcedInBash(result.stdout, ['DSH_TRICKY_TOKEN', 'DSH_TEXT'])).toEqual({ DSH_TRICKY_TOKEN: null, DSH_TEXT: TRICKY.DSH_TEXT })
  })

  it('--format dotenv round-trips every value it can hold through the dotenv package, and names what it cannot', () => {
    const result = cli(['env', '--format', 'dotenv', '--show-secrets', ...trickyArgs])
    expect(result.status).toBe(0)
    const parsed = require('dotenv').parse(result.stdout)
    // DSH_QUOTES holds ', `, " and \ at once: no .env quoting holds that.
    const { DSH_QUOTES, ...holdable } = TRICKY
    expect(parsed).toEqual({ ...holdable, DSH_TRICKY_TOKEN: 'tricky-credential', DSH_HOME: HOME, DSH_SHELL: '1' })
    expect(result.stdout).toContain("# DSH_QUOTES holds ', `, \" and \\ at once, which no .env quoting can hold (--format export can)\n")
    const masked = cli(['env', '--format', 'dotenv', ...trickyArgs])
    expect(masked.stdout).toContain('# DSH_TRICKY_TOKEN is masked (--show-secrets writes it)\n')
    expect(require('dotenv').parse(masked.stdout).DSH_TRICKY_TOKEN).toBeUndefined()
  })

  posix.it('--format export is idempotent under a repeated eval, and leaves out the PATH entries a package manager put in front', () => {
    const script = `eval "$("$0" "$1" env --home "$2" --plugin "$3" --format export)"; eval "$("$0" "$1" env --home "$2" --plugin "$3" --format export)"; printf %s "$PATH"`
    const run = (env) =>
      spawnSync('bash', ['--norc', '--noprofile', '-c', script, process.execPath, BIN, HOME, fixture('region.cjs')], { encoding: 'utf8', env: { ...baseEnv(), ...env } })
    const twice = run({ PATH: '/usr/bin:/bin' })
    expect(twice.stderr).toBe('')
    expect(twice.stdout.split(':')).toEqual([REGION_BIN, '/usr/bin', '/bin'])
    const launched = run({ PATH: '/work/project/node_modules/.bin:/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:/usr/bin:/bin', npm_command: 'exec' })
    expect(launched.stdout.split(':')).toEqual([REGION_BIN, '/usr/bin', '/bin'])
  })

  it('--format json is --json', () => {
    const byFlag = cliJson(['env', ...trickyArgs])
    const byFormat = JSON.parse(cli(['env', '--format', 'json', ...trickyArgs]).stdout)
    expect(byFormat).toEqual(byFlag)
  })

  it('get prints one value as it is, unmasked, and exits 1 when the call would not get it', () => {
    for (const [key, value] of Object.entries({ ...TRICKY, DSH_TRICKY_TOKEN: 'tricky-credential', DSH_HOME: HOME })) {
      const result = cli(['get', key, ...trickyArgs])
      expect(result.status).toBe(0)
      expect(result.stderr).toBe('')
      expect(result.stdout).toBe(`${value}\n`)
    }
    const session = cli(['get', 'DSH_SESSION_ID', '--session', 'session-42', '--home', HOME])
    expect(session.stdout).toBe('session-42\n')
    for (const args of [['get', 'DSH_SESSION_ID', '--home', HOME], ['get', 'DSH_NOT_THERE', ...trickyArgs], ['get', 'HOME', '--home', HOME]]) {
      const absent = cli(args)
      expect(absent.status).toBe(1)
      expect(absent.stdout).toBe('')
      expect(absent.stderr).toBe('')
    }
  })
})

describe('explain', () => {
  const PARENT = {
    CLI_SPEC_PLAIN: 'hello',
    CLI_SPEC_API_TOKEN: 'token-in-the-parent',
    CLI_SPEC_GH: 'ghp_0123456789abcdefghijklmnopqrstuvwxyz',
    CLI_SPEC_DB_URL: 'postgres://ada:hunter2@db.internal/app',
    PYTHONSTARTUP: '/nonexistent/startup.py',
    DSH_STALE_SENTINEL: 'stale',
  }

  it('--json: every variable with its source and owner, every removal with its reason, secrets masked', () => {
    const report = cliJson(['explain', '--home', HOME, '--session', 's-explain', '--plugin', fixture('region.cjs')], {
      env: PARENT,
    })
    expect(Object.keys(report)).toEqual(['dshHome', 'session', 'scrub', 'variables', 'removed', 'hardeningWouldRemove', 'untrustedDirectories'])
    expect(report.untrustedDirectories).toEqual([])
    expect(report.scrub).toEqual({ inherit: 'all', hardening: false })
    expect(report.session).toBe('s-explain')
    const keys = report.variables.map((entry) => entry.key)
    expect(keys).toEqual([...keys].sort())
    for (const entry of report.variables) expect(Object.keys(entry)).toEqual(['key', 'value', 'source', 'owner', 'masked', 'launcher'])
    const variables = byKey(report.variables)

    expect(variables.CLI_SPEC_PLAIN).toEqual({ key: 'CLI_SPEC_PLAIN', value: 'hello', source: 'inherited', owner: null, masked: false, launcher: null })
    expect(variables.TERM).toEqual({ key: 'TERM', value: 'dumb', source: 'terminal', owner: null, masked: false, launcher: null })
    expect(variables.NO_COLOR.source).toBe('terminal')
    expect(variables.DSH_SESSION_ID).toEqual({ key: 'DSH_SESSION_ID', value: 's-explain', source: 'managed', owner: 'built-in', masked: false, launcher: null })
    expect(variables.DSH_REGION).toEqual({ key: 'DSH_REGION', value: 'cn-north', source: 'managed', owner: 'deployment-region', masked: false, launcher: null })
    expect(variables.DSH_REGION_TOKEN).toEqual({
      key: 'DSH_REGION_TOKEN',
      value: '<masked>',
      source: 'managed',
      owner: 'deployment-region',
      masked: true,
      launcher: null,
    })
    expect(variables.PATH.source).toBe('managed')
    expect(variables.PATH.owner).toBe('deployment-region')
    expect(variables.PATH.value.split(path.delimiter)[0]).toBe(REGION_BIN)
    // Secret by value: not inherited at all, whatever the name.
    for (const key of ['CLI_SPEC_GH', 'CLI_SPEC_DB_URL', 'DSH_STALE_SENTINEL', 'CLI_SPEC_API_TOKEN']) {
      expect(variables[key]).toBeUndefined()
    }

    const removed = byKey(report.removed)
    for (const entry of report.removed) expect(Object.keys(entry)).toEqual(['key', 'reason'])
    expect(removed.DSH_STALE_SENTINEL).toEqual({ key: 'DSH_STALE_SENTINEL', reason: 'managed-prefix' })
    expect(removed.CLI_SPEC_API_TOKEN).toEqual({ key: 'CLI_SPEC_API_TOKEN', reason: 'credential' })
    expect(removed.CLI_SPEC_GH).toEqual({ key: 'CLI_SPEC_GH', reason: 'secret-value' })
    expect(removed.CLI_SPEC_DB_URL).toEqual({ key: 'CLI_SPEC_DB_URL', reason: 'secret-value' })
    // The hardening preset is off: what it would remove is listed, and still inherited.
    expect(variables.PYTHONSTARTUP.source).toBe('inherited')
    // (Others of the host's own, such as NODE_PATH, may be listed beside it.)
    expect(report.hardeningWouldRemove).toContain('PYTHONSTARTUP')
    for (const key of report.hardeningWouldRemove) expect(variables[key].source).toBe('inherited')
    expect(JSON.stringify(report)).not.toContain('hunter2')
    expect(JSON.stringify(report)).not.toContain('region-credential-value')
    expect(JSON.stringify(report)).not.toContain('token-in-the-parent')
  })

  it('--scrub core --hardening: reasons inherit and hardening; --show-secrets shows values', () => {
    const report = cliJson(['explain', '--home', HOME, '--scrub', 'core', '--hardening', '--show-secrets', '--plugin', fixture('region.cjs')], {
      env: PARENT,
    })
    expect(report.scrub).toEqual({ inherit: 'core', hardening: true })
    expect(report.hardeningWouldRemove).toEqual([])
    const removed = byKey(report.removed)
    expect(removed.CLI_SPEC_PLAIN).toEqual({ key: 'CLI_SPEC_PLAIN', reason: 'inherit' })
    expect(removed.CLI_SPEC_GH.reason).toBe('inherit')
    expect(removed.DSH_STALE_SENTINEL.reason).toBe('managed-prefix')
    const variables = byKey(report.variables)
    expect(Object.values(variables).filter((entry) => entry.source === 'inherited').map((entry) => entry.key)).not.toContain('CLI_SPEC_PLAIN')
    expect(variables.DSH_REGION_TOKEN.value).toBe('region-credential-value')
    expect(variables.DSH_REGION_TOKEN.masked).toBe(false)
    expect(variables.DSH_SESSION_ID).toBeUndefined()

    const all = cliJson(['explain', '--home', HOME, '--no-hardening'], { env: PARENT })
    expect(all.scrub).toEqual({ inherit: 'all', hardening: false })
    expect(byKey(all.variables).PYTHONSTARTUP.source).toBe('inherited')
    expect(byKey(all.variables).CLI_SPEC_PLAIN.source).toBe('inherited')
    const both = cli(['explain', '--hardening', '--no-hardening'])
    expect(both.status).toBe(2)
    expect(both.stderr).toContain('--hardening and --no-hardening contradict each other')
  })

  it('--scrub none: only terminal and managed variables remain', () => {
    const report = cliJson(['explain', '--home', HOME, '--scrub', 'none'], { env: PARENT })
    expect(new Set(report.variables.map((entry) => entry.source))).toEqual(new Set(['terminal', 'managed']))
    expect(report.variables.map((entry) => entry.key)).toEqual(['DSH_HOME', 'DSH_SHELL', 'GIT_PAGER', 'NO_COLOR', 'PAGER', 'TERM'])
    expect(byKey(report.removed).CLI_SPEC_PLAIN.reason).toBe('inherit')
  })

  it('a table within 80 columns: sources, masked values, removals with their reasons in words', () => {
    const result = cli(['explain', '--home', HOME, '--plugin', fixture('region.cjs')], { env: PARENT })
    expect(result.status).toBe(0)
    expectPlainTable(result.stdout)
    expect(result.stdout).toMatch(/^Child environment: \d+ variables \(scrub all, hardening off\)$/m)
    expect(result.stdout).toMatch(/^ {2}CLI_SPEC_PLAIN +hello +inherited$/m)
    expect(result.stdout).toMatch(/^ {2}DSH_REGION_TOKEN +<masked> +managed$/m)
    expect(result.stdout).toMatch(/^ {2}TERM +dumb +terminal$/m)
    expect(result.stdout).toMatch(/^ {2}CLI_SPEC_API_TOKEN +credential: name says it holds/m)
    expect(result.stdout).toMatch(/^ {2}DSH_STALE_SENTINEL +managed-prefix: /m)
    expect(result.stdout).toMatch(/^--hardening would also remove \d+:\n( {2}.+\n)*? {2}(.+, )?PYTHONSTARTUP(,|$)/m)
    expect(result.stdout).not.toContain('hunter2')
    expect(result.stdout).not.toContain('token-in-the-parent')
  })
})

describe('explain in a pipe', () => {
  const value = `/opt/${'a'.repeat(30)}/${'b'.repeat(30)}/bin`

  it('uses 80 columns: a long value is elided in the middle to fill the line, not squeezed', () => {
    const result = cli(['explain', '--home', HOME], { env: { CLI_SPEC_LONG_VALUE: value } })
    expect(result.status).toBe(0)
    const row = result.stdout.split('\n').find((line) => line.startsWith('  CLI_SPEC_LONG_VALUE '))
    expect([...row].length).toBe(80)
    const shown = row.trim().split(/ {2,}/)[1]
    // The row is 80 wide with the value elided: the value has what names and sources leave, not a fixed 20.
    expect(shown.length).toBeGreaterThan(20)
    expect(shown).toMatch(/^\/opt\/a+.*….*b+\/bin$/)
  })

  it('uses COLUMNS when it is set: the whole value fits in 200', () => {
    const result = cli(['explain', '--home', HOME], { env: { CLI_SPEC_LONG_VALUE: value, COLUMNS: '200' } })
    expect(result.stdout).toMatch(new RegExp(`^  CLI_SPEC_LONG_VALUE +${value} +inherited$`, 'm'))
    expectPlainTable(result.stdout, 200)
  })
})

describe('explain, run through a package manager', () => {
  const launched = { npm_command: 'exec', npm_config_cache: '/tmp/npm-cache', INIT_CWD: '/work/project', npm_lifecycle_event: 'npx' }

  it('marks the variables npm, npx, pnpm or yarn set, and says how to see a harness call\'s environment', () => {
    // HOME, which no launcher sets, is given on Windows too (where it is not a variable of its own).
    const env = { ...launched, HOME: process.env.HOME ?? os.homedir() }
    const result = cli(['explain', '--home', HOME], { env })
    expect(result.status).toBe(0)
    for (const key of Object.keys(launched)) expect(result.stdout).toMatch(new RegExp(`^  ${key} .* inherited \\(npm\\)$`, 'm'))
    expect(result.stdout).toMatch(/^  HOME .* inherited$/m)
    expect(result.stdout).toContain('Marked (npm): 4 variable(s)')
    expect(result.stdout).toContain('./node_modules/.bin/dsh-shell-env explain')
    expectPlainTable(result.stdout)
    const json = byKey(cliJson(['explain', '--home', HOME], { env }).variables)
    for (const key of Object.keys(launched)) expect(json[key].launcher).toBe('npm')
    expect(json.HOME.launcher).toBe(null)
    // A long variable name narrows the values, never the sources.
    const crowded = cli(['explain', '--home', HOME], { env: { ...env, CLI_SPEC_A_VARIABLE_WITH_A_VERY_LONG_NAME_INDEED: 'x' } })
    for (const key of Object.keys(launched)) expect(crowded.stdout).toMatch(new RegExp(`^  ${key} .* inherited \\(npm\\)$`, 'm'))
  })

  it('says nothing of a launcher when none set anything', () => {
    const result = cli(['explain', '--home', HOME])
    expect(result.stdout).not.toContain('(npm)')
  })
})

describe('limits', () => {
  posix.it('lists each limit option with its mechanism here, as limitMechanisms() says, and --json the same', () => {
    const { limitMechanisms } = require('../index.js')
    const expected = limitMechanisms()
    const json = cliJson(['limits', '--json'])
    expect(json).toEqual(expected.map(({ limit, field, mechanism, refused }) => ({ limit, field, mechanism, refused })))
    const table = cli(['limits'])
    expect(table.status).toBe(0)
    expectPlainTable(table.stdout)
    const rows = table.stdout.split('\n').slice(2).filter(Boolean)
    expect(rows.map((row) => row.trim().split(/\s{3,}/)[0])).toEqual(['--memory', '--processes', '--cpu', '--file-size', '--open-files'])
    expect(table.stdout).toContain('RLIMIT_CPU (per process)')
    const processes = expected.find((entry) => entry.limit === 'processes')
    expect(table.stdout).toContain(processes.mechanism ?? 'refused: it needs a cgroup')
  })
})

describe('catalog', () => {
  it('--json: built-ins and declared variables with descriptions, owners and when; command directories', () => {
    const report = cliJson([
      'catalog',
      '--home',
      HOME,
      '--profile',
      'work=/profiles/work',
      '--plugin',
      fixture('region.cjs'),
      '--plugin',
      fixture('pair.mjs'),
    ])
    expect(Object.keys(report)).toEqual(['dshHome', 'variables', 'commandDirectories'])
    expect(report.dshHome).toBe(HOME)
    for (const entry of report.variables) {
      expect(Object.keys(entry)).toEqual(['key', 'description', 'owner', 'when'])
      expect(entry.description.trim()).not.toBe('')
    }
    const owners = Object.fromEntries(report.variables.map((entry) => [entry.key, [entry.owner, entry.when]]))
    expect(owners).toEqual({
      DSH_HOME: ['built-in', 'always'],
      DSH_PAIR_ASYNC: ['pair-async', 'resolver'],
      DSH_PAIR_TOOLS: ['pair-tools', 'resolver'],
      DSH_PROFILE: ['built-in', 'profile'],
      DSH_PROFILE_DIR: ['built-in', 'profile'],
      DSH_REGION: ['deployment-region', 'resolver'],
      DSH_REGION_BUILD: ['deployment-region', 'resolver'],
      DSH_REGION_MIRROR: ['deployment-region', 'resolver'],
      DSH_REGION_TOKEN: ['deployment-region', 'resolver'],
      DSH_SESSION_ID: ['built-in', 'agent'],
      DSH_SHELL: ['built-in', 'always'],
    })
    expect(byKey(report.variables).DSH_REGION.description).toBe('Current deployment region.')
    expect(report.commandDirectories).toEqual([
      { contributor: 'deployment-region', directories: [REGION_BIN] },
      { contributor: 'pair-tools', directories: [PAIR_BIN] },
    ])
  })

  it('without a profile: no DSH_PROFILE*; no resolver runs, so a failing one is still listed', () => {
    const report = cliJson(['catalog', '--home', HOME, '--plugin', fixture('failing-resolver.cjs')])
    expect(report.variables.map((entry) => entry.key)).toEqual(['DSH_FAILING', 'DSH_HOME', 'DSH_SESSION_ID', 'DSH_SHELL'])
    expect(report.commandDirectories).toEqual([])
  })

  it('a table within 80 columns, descriptions wrapped, then the command directories', () => {
    const result = cli(['catalog', '--home', HOME, '--plugin', fixture('region.cjs'), '--plugin', fixture('pair.mjs')])
    expect(result.status).toBe(0)
    expectPlainTable(result.stdout)
    expect(result.stdout).toMatch(/^ {2}VARIABLE +OWNER +WHEN +DESCRIPTION$/m)
    expect(result.stdout).toMatch(/^ {2}DSH_REGION +deployment-region +resolver +Current deployment region\.$/m)
    expect(result.stdout).toMatch(/^ {2}DSH_SESSION_ID +built-in +agent +Session id/m)
    expect(result.stdout).toMatch(new RegExp(`^ {2}${literal(REGION_BIN)} +deployment-region$`, 'm'))
    expect(result.stdout).toMatch(new RegExp(`^ {2}${literal(PAIR_BIN)} +pair-tools$`, 'm'))
  })
})

describe('colour', () => {
  const TTY = ['-r', fixture('fake-tty.cjs')]
  const args = ['env', '--home', HOME, '--plugin', fixture('region.cjs')]

  it('on a terminal the table is coloured', () => {
    const result = cli(args, { node: TTY, env: { TERM: 'xterm-256color' } })
    expect(result.status).toBe(0)
    expect(result.stdout).toContain(`${ESC}[`)
    const plain = result.stdout.replace(/\u001b\[\d+m/g, '')
    for (const line of plain.split('\n')) expect(codePoints(line)).toBeLessThanOrEqual(80)
  })

  it('never with NO_COLOR, nor when stdout is not a terminal, nor with --json', () => {
    expectPlainTable(cli(args, { node: TTY, env: { TERM: 'xterm-256color', NO_COLOR: '1' } }).stdout)
    expectPlainTable(cli(args, { env: { TERM: 'xterm-256color' } }).stdout)
    for (const command of ['env', 'explain', 'catalog']) {
      const result = cli([command, '--home', HOME, '--json'], { node: TTY, env: { TERM: 'xterm-256color' } })
      expect(result.stdout).not.toContain(ESC)
      JSON.parse(result.stdout)
    }
  })

  it('FORCE_COLOR colours a pipe, and FORCE_COLOR=0 or false keeps a terminal plain, over NO_COLOR both ways', () => {
    expect(cli(args, { env: { FORCE_COLOR: '1' } }).stdout).toContain(`${ESC}[`)
    expect(cli(args, { env: { FORCE_COLOR: '', NO_COLOR: '1' } }).stdout).toContain(`${ESC}[`)
    for (const off of ['0', 'false']) {
      expectPlainTable(cli(args, { node: TTY, env: { TERM: 'xterm-256color', FORCE_COLOR: off } }).stdout)
    }
    expect(cli([...args, '--json'], { env: { FORCE_COLOR: '1' } }).stdout).not.toContain(ESC)
  })

  it('a terminal narrower than the names cuts values, never a variable name', () => {
    const result = cli(['env', '--home', HOME, '--plugin', fixture('region.cjs'), '--show-secrets'], { env: { COLUMNS: '30' } })
    expect(result.status).toBe(0)
    for (const key of ['DSH_REGION_TOKEN', 'DSH_REGION_BUILD', 'DSH_HOME', 'DSH_SHELL']) expect(result.stdout).toMatch(new RegExp(`^  ${key} `, 'm'))
    expect(result.stdout).toContain('…')
  })

  it('COLUMNS sets the width, also in a pipe; a value that is not a positive number is ignored', () => {
    const catalog = ['catalog', '--home', HOME, '--plugin', fixture('region.cjs')]
    const narrow = cli(catalog, { env: { COLUMNS: '60' } })
    expect(narrow.status).toBe(0)
    expectPlainTable(narrow.stdout, 60)
    expect(narrow.stdout.split('\n').some((line) => codePoints(line) > 50)).toBe(true)
    const wide = cli(catalog, { env: { COLUMNS: '200' } })
    expect(wide.stdout.split('\n').some((line) => codePoints(line) > 80)).toBe(true)
    for (const ignored of ['0', '-5', 'wide']) expectPlainTable(cli(catalog, { env: { COLUMNS: ignored } }).stdout, 80)
  })

  it('a narrower terminal gets a narrower table', () => {
    const result = cli(['catalog', '--home', HOME, '--plugin', fixture('region.cjs')], {
      node: TTY,
      env: { NO_COLOR: '1', CLI_SPEC_COLUMNS: '60' },
    })
    expect(result.status).toBe(0)
    expectPlainTable(result.stdout, 60)
  })
})

// util-linux's `script`, which gives the command a pseudo-terminal of its own
// (macOS's BSD `script` takes other arguments; there the preload above stands in).
const PTY_SCRIPT = process.platform === 'linux' ? 'script' : null
const describeOnPty = PTY_SCRIPT ? describe : describe.skip

describeOnPty('on a pseudo-terminal (script -qec)', () => {
  /** The command run on a fresh pseudo-terminal of `columns` columns; what it printed there. */
  function onTerminal(args, { columns, env = {} }) {
    const quoted = [process.execPath, BIN, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ')
    const merged = { ...baseEnv(), TERM: 'xterm-256color', ...env }
    delete merged.COLUMNS
    const result = spawnSync(PTY_SCRIPT, ['-qec', `stty cols ${columns} rows 24; ${quoted}`, '/dev/null'], {
      cwd: ROOT,
      env: merged,
      encoding: 'utf8',
      timeout: 20_000,
    })
    if (result.error) throw result.error
    expect(result.status).toBe(0)
    // A terminal ends its lines with CR LF.
    return result.stdout.replace(/\r\n/g, '\n')
  }
  const args = ['env', '--home', HOME, '--session', `session-${'long-'.repeat(12)}end`]

  it('the table is coloured and fits the terminal, cutting the long value in the middle', () => {
    const text = onTerminal(args, { columns: 50 })
    expect(text).toContain(`${ESC}[`)
    const plain = text.replace(/\u001b\[\d+m/g, '')
    for (const line of plain.split('\n')) expect(codePoints(line)).toBeLessThanOrEqual(50)
    expect(plain).toMatch(/^ {2}DSH_SESSION_ID +session-lo.*….*-end +built-in$/m)
  })

  it('NO_COLOR keeps it plain, and a wider terminal shows the whole value', () => {
    const text = onTerminal(args, { columns: 200, env: { NO_COLOR: '1' } })
    expect(text).not.toContain(ESC)
    expect(text).toContain(`session-${'long-'.repeat(12)}end`)
  })
})

describe('run', () => {
  posix.it('takes the command after its options without --, the command keeping its own options', () => {
    const result = cli(['run', '--home', HOME, '--session', 'session-7', 'bash', '-c', 'printf "%s %s" "$DSH_SESSION_ID" "$0"', '--session'])
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    expect(result.stdout).toBe('session-7 --session')
    // With --, a command whose first word starts with '-' is still a command.
    const dashed = cli(['run', '--home', HOME, '--', '-no-such-program'])
    expect(dashed.status).toBe(127)
  })

  posix.it('exit code 0, the managed environment of the call, output on the right streams', () => {
    const result = cli([
      'run',
      '--home',
      HOME,
      '--session',
      'session-run',
      '--plugin',
      fixture('region.cjs'),
      '--',
      'sh',
      '-c',
      'printf "%s|%s|%s|%s\\n" "$DSH_SESSION_ID" "$DSH_REGION" "$DSH_HOME" "${DSH_STALE_SENTINEL-unset}"; echo to-stderr >&2',
    ], { env: { DSH_STALE_SENTINEL: 'stale' } })
    expect(result.status).toBe(0)
    expect(result.stdout).toBe(`session-run|cn-north|${HOME}|unset\n`)
    expect(result.stderr).toBe('to-stderr\n')
  })

  posix.it("the child's own exit code: 3", () => {
    const result = cli(['run', '--home', HOME, '--', 'sh', '-c', 'echo out; echo err >&2; exit 3'])
    expect(result.status).toBe(3)
    expect(result.signal).toBeNull()
    expect(result.stdout).toBe('out\n')
    expect(result.stderr).toBe('err\n')
  })

  posix.it('--file-size, --cpu and --open-files limit the command, and stderr says which limit ended it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-cli-limits-'))
    try {
      const file = cli(['run', '--home', HOME, '--file-size', '1m', '--', 'sh', '-c', 'head -c 5M /dev/zero > big'], { cwd: dir })
      expect({ status: file.status, stderr: file.stderr.split('\n').filter(Boolean).pop() }).toEqual({ status: 153, stderr: 'dsh-shell-env: ended by its fileSize limit' })
      expect(fs.statSync(path.join(dir, 'big')).size).toBe(1024 * 1024)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
    const cpu = cli(['run', '--home', HOME, '--cpu', '1s', '--', 'sh', '-c', 'while :; do :; done'])
    expect({ status: cpu.status, stderr: cpu.stderr }).toEqual({ status: 128 + 24, stderr: 'dsh-shell-env: ended by its cpu limit\n' })
    const files = cli(['run', '--home', HOME, '--open-files', '20', '--memory', '1G', '--', 'sh', '-c', 'ulimit -n'])
    expect({ status: files.status, stdout: files.stdout, stderr: files.stderr }).toEqual({ status: 0, stdout: '20\n', stderr: '' })
  })

  posix.it('a limit the core refuses fails with its message and code', () => {
    expectFailure(cli(['run', '--home', HOME, '--open-files', '2', '--', 'true']), 'ERR_SHELL_EXEC_INVALID_SPEC', 'limits.openFiles: must be a whole number from 3')
  })

  signals.it('a child ended by SIGTERM: 128+15', () => {
    const result = cli(['run', '--home', HOME, '--', 'sh', '-c', 'kill -TERM $$'])
    expect(result.status).toBe(128 + 15)
    expect(result.signal).toBeNull()
  })

  posix.it('--scrub and --hardening reach the child; hardening is off by default', () => {
    const script = 'printf "%s|%s|%s\\n" "${CLI_SPEC_PLAIN-unset}" "${PYTHONSTARTUP-unset}" "$TERM"'
    const env = { CLI_SPEC_PLAIN: 'hello', PYTHONSTARTUP: '/nonexistent/startup.py' }
    expect(cli(['run', '--home', HOME, '--', 'sh', '-c', script], { env }).stdout).toBe('hello|/nonexistent/startup.py|dumb\n')
    expect(cli(['run', '--home', HOME, '--hardening', '--', 'sh', '-c', script], { env }).stdout).toBe('hello|unset|dumb\n')
    expect(cli(['run', '--home', HOME, '--no-hardening', '--', 'sh', '-c', script], { env }).stdout).toBe('hello|/nonexistent/startup.py|dumb\n')
    expect(cli(['run', '--home', HOME, '--scrub', 'core', '--', 'sh', '-c', script], { env }).stdout).toBe(
      'unset|unset|dumb\n',
    )
  })

  signals.it('--timeout MS stops the command: 128+15 and a line on stderr', () => {
    const started = Date.now()
    const result = cli(['run', '--home', HOME, '--timeout', '300', '--', 'sleep', '10'])
    expect(Date.now() - started).toBeLessThan(8_000)
    expect(result.status).toBe(128 + 15)
    expect(result.stderr).toBe('dsh-shell-env: timed out after 300 ms\n')
  })

  posix.it("stdin that is a pipe reaches the command; --no-stdin gives it /dev/null", () => {
    expect(cli(['run', '--home', HOME, '--', 'cat'], { input: 'piped in\n' }).stdout).toBe('piped in\n')
    expect(cli(['run', '--home', HOME, '--no-stdin', '--', 'cat'], { input: 'piped in\n' }).stdout).toBe('')
  })

  it('a command that looks like a shell script gets a hint to run it through a shell', () => {
    const result = cli(['run', '--home', HOME, 'echo $HOME'])
    expect(result.status).toBe(127)
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain("ERR_SHELL_EXEC_SPAWN_FAILED: cannot start 'echo $HOME'")
    expect(result.stderr).toContain("(it looks like a shell script: run it as dsh-shell-env run bash -c '…')")
  })

  it('a program that does not exist: 127 and a line naming it', () => {
    const result = cli(['run', '--home', HOME, '--', 'dsh-cli-spec-no-such-program'])
    expect(result.status).toBe(127)
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain('ERR_SHELL_EXEC_SPAWN_FAILED')
    expect(result.stderr).toContain('dsh-cli-spec-no-such-program')
  })

  posix.it('streams output live, before the command ends', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'run', '--home', HOME, '--', 'sh', '-c', 'echo first; echo err-first >&2; sleep 1.5; echo second'],
      { cwd: ROOT, env: baseEnv() },
    )
    const seen = []
    const stamp = (stream) => (chunk) => seen.push({ stream, text: chunk.toString(), at: Date.now() })
    child.stdout.on('data', stamp('stdout'))
    child.stderr.on('data', stamp('stderr'))
    const [code] = await new Promise((resolve) => child.on('close', (...args) => resolve(args)))
    const ended = Date.now()
    expect(code).toBe(0)
    const first = seen.find((entry) => entry.stream === 'stdout' && entry.text.includes('first'))
    const errFirst = seen.find((entry) => entry.stream === 'stderr' && entry.text.includes('err-first'))
    expect(first).toBeDefined()
    expect(errFirst).toBeDefined()
    expect(ended - first.at).toBeGreaterThanOrEqual(1_000)
    expect(ended - errFirst.at).toBeGreaterThanOrEqual(1_000)
    expect(seen.filter((entry) => entry.stream === 'stdout').map((entry) => entry.text).join('')).toBe('first\nsecond\n')
  })
})

describe('--plugin', () => {
  it('a syntax error or a throw while a plugin loads names the file and its line', () => {
    const syntax = cli(['env', '--home', HOME, '--plugin', fixture('syntax-error.cjs')])
    expectFailure(syntax, `plugin ${fixture('syntax-error.cjs')}:5: SyntaxError`)
    const thrown = cli(['env', '--home', HOME, '--plugin', fixture('throws-at-load.cjs')])
    expectFailure(thrown, `plugin ${fixture('throws-at-load.cjs')}:4:7: refused to load`)
  })

  it('an export whose getter throws names the file (and its line), also when the thrown value is not an Error', () => {
    const file = path.join(tmp, 'throwing-getter.cjs')
    fs.writeFileSync(file, "module.exports = {\n  variables: {},\n  resolve: () => ({}),\n  get name() { throw null },\n}\n")
    expectFailure(cli(['env', '--home', HOME, '--plugin', file]), `plugin ${file}: threw null`)
    const esm = path.join(tmp, 'throwing-getter.mjs')
    fs.writeFileSync(esm, "export default {\n  variables: {},\n  get apply() { throw new Error('no apply today') },\n}\n")
    expectFailure(cli(['env', '--home', HOME, '--plugin', esm]), `plugin ${esm}:3:`, 'no apply today')
  })

  it('--debug, or DEBUG naming the command, adds the stack and its causes; without them one line', () => {
    const args = ['env', '--home', HOME, '--plugin', fixture('throws-at-load.cjs')]
    for (const run of [cli([...args, '--debug']), cli(args, { env: { DEBUG: 'dsh-shell-env' } }), cli(args, { env: { DEBUG: 'express,*' } })]) {
      expect(run.status).toBe(1)
      const lines = run.stderr.trimEnd().split('\n')
      expect(lines[0]).toContain('refused to load')
      expect(lines.some((line) => /^\s+at /.test(line))).toBe(true)
      expect(run.stderr).toContain('caused by: Error: refused to load')
      expect(run.stderr).toContain(`${fixture('throws-at-load.cjs')}:4:7`)
    }
    expectFailure(cli(args, { env: { DEBUG: 'express' } }), 'refused to load')
  })

  let tmp

  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-cli-spec-'))
  })

  afterAll(() => {
    fs.rmSync(tmp, { recursive: true, force: true })
  })

  it('a missing file: exit 1, the message names the path as given and where it was looked for', () => {
    const result = cli(['env', '--plugin', './no-such-plugin.cjs'], { cwd: tmp })
    expectFailure(result, 'plugin ./no-such-plugin.cjs:', path.join(tmp, 'no-such-plugin.cjs'))
  })

  it('a contributor declaring a reserved key: the file and ERR_SHELL_ENV_RESERVED_KEY', () => {
    const file = path.relative(ROOT, fixture('reserved.cjs'))
    for (const command of [['env'], ['explain'], ['catalog'], ['run', '--', 'true']]) {
      const result = cli([command[0], '--plugin', file, ...command.slice(1)])
      expectFailure(result, `dsh-shell-env: plugin ${file}: ERR_SHELL_ENV_RESERVED_KEY: `, 'DSH_HOME', 'reserved-home')
      expect(result.stdout).toBe('')
    }
  })

  it('a resolver failing at collection: the file that registered it and the code', () => {
    const file = fixture('failing-resolver.cjs')
    for (const command of [['env'], ['run', '--', 'true']]) {
      expectFailure(
        cli([command[0], '--plugin', file, ...command.slice(1)]),
        `plugin ${file}: ERR_SHELL_ENV_RESOLVER_FAILED: `,
        'the region service is down',
      )
    }
  })

  it('a file exporting something else, or failing to load, is named with the error', () => {
    const other = path.join(tmp, 'number.cjs')
    fs.writeFileSync(other, 'module.exports = 42\n')
    expectFailure(cli(['env', '--plugin', other]), `plugin ${other}: exports no contributor`)

    const broken = path.join(tmp, 'broken.mjs')
    fs.writeFileSync(broken, 'export const = 1\n')
    expectFailure(cli(['env', '--plugin', broken]), `plugin ${broken}:1: SyntaxError: `)

    const throwing = path.join(tmp, 'throwing.cjs')
    fs.writeFileSync(throwing, "throw Object.assign(new Error('not today'), { code: 'E_SPEC_PLUGIN' })\n")
    expectFailure(cli(['env', '--plugin', throwing]), `plugin ${throwing}:1:21: E_SPEC_PLUGIN: not today`)
  })

  /**
   * A project of its own next to the plugin files, with `line` installed as
   * `name`; the fixtures import `cordis`, so their copies import `name`.
   */
  function cordisProject(dirName, name, line) {
    const project = path.join(tmp, dirName)
    const target = path.join(project, 'node_modules', name)
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.symlinkSync(path.join(ROOT, 'node_modules', line), target, 'dir')
    for (const file of ['cordis-plugin.mjs', 'cordis-reserved.mjs']) {
      const source = fs.readFileSync(fixture(file), 'utf8').replace(/'cordis(\/package\.json)?'/g, `'${name}$1'`)
      fs.writeFileSync(path.join(project, file), source)
    }
    return project
  }

  describe.each([
    // The harness's own Cordis, looked for first.
    [
      '@deepseek-ai/cordis',
      () => cordisProject('harness-cordis', '@deepseek-ai/cordis', '@deepseek-ai/cordis'),
      require('@deepseek-ai/cordis/package.json').version,
    ],
    ['cordis 4 RC', () => cordisProject('cordis4-project', 'cordis', 'cordis4'), require('cordis4/package.json').version],
    ['cordis 3.18', () => cordisProject('cordis3-project', 'cordis', 'cordis3'), require('cordis3/package.json').version],
  ])('a Cordis plugin file with %s', (label, prepare, version) => {
    let dir

    beforeAll(() => {
      dir = prepare()
    })

    posix.it('is plugged next to the shell-env plugin; env, catalog and run see its registration', () => {
      const plugin = path.join(dir, 'cordis-plugin.mjs')
      const report = cliJson(['env', '--home', HOME, '--session', 's-cordis', '--plugin', plugin, '--plugin', fixture('region.cjs')])
      const variables = byKey(report.variables)
      expect(variables.DSH_CORDIS_LINE).toEqual({ key: 'DSH_CORDIS_LINE', value: version, owner: 'cordis-spec', masked: false })
      expect(variables.DSH_CORDIS_CALL.value).toBe('s-cordis')
      expect(variables.DSH_REGION.value).toBe('cn-north')
      expect(variables.DSH_HOME.value).toBe(HOME)

      const catalog = cliJson(['catalog', '--home', HOME, '--plugin', plugin])
      expect(byKey(catalog.variables).DSH_CORDIS_LINE.owner).toBe('cordis-spec')

      const run = cli(['run', '--home', HOME, '--plugin', plugin, '--', 'sh', '-c', 'echo "$DSH_CORDIS_LINE $DSH_CORDIS_CALL"'])
      expect(run.status).toBe(0)
      expect(run.stdout).toBe(`${version} none\n`)
    })

    it('a registration the plugin gets wrong: the file and ERR_SHELL_ENV_RESERVED_KEY, one line', () => {
      const plugin = path.join(dir, 'cordis-reserved.mjs')
      expectFailure(
        cli(['env', '--home', HOME, '--plugin', plugin]),
        `dsh-shell-env: plugin ${plugin}: ERR_SHELL_ENV_RESERVED_KEY: `,
        'DSH_SESSION_ID',
      )
    })
  })
})
