'use strict'

// `dsh-shell-env env` and `get`: the managed snapshot of a call (--json and
// the table, values, owners, masking, command directories, plugins side by
// side), and the snapshot for other tools: --format export, dotenv and json,
// and get printing one value.
//
// Every case runs `node bin/dsh-shell-env.js …` as a real child process;
// nothing is mocked. Runs unchanged under `vitest run` (globals: true) and
// `jest`. JSON shapes are the ones docs/cli.md documents; human tables are
// checked for width and escapes, not byte by byte. Shared helpers (the command
// runner, the home, the fixtures' command directories) are in cli-helpers.cjs.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT } = require('./helpers.cjs')
const { posix } = require('./platform.cjs')
const {
  BIN,
  fixture,
  HOME,
  REGION_BIN,
  PAIR_BIN,
  literal,
  baseEnv,
  cli,
  cliJson,
  byKey,
  expectPlainTable,
} = require('./cli-helpers.cjs')

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
    // DSH_QUOTES holds ', `, " and \: no .env quoting holds them together.
    const { DSH_QUOTES, ...holdable } = TRICKY
    expect(parsed).toEqual({ ...holdable, DSH_TRICKY_TOKEN: 'tricky-credential', DSH_HOME: HOME, DSH_SHELL: '1' })
    expect(result.stdout).toContain("# DSH_QUOTES holds ', `, \" and \\, which no .env quoting can hold together (--format export can)\n")
    const masked = cli(['env', '--format', 'dotenv', ...trickyArgs])
    expect(masked.stdout).toContain('# DSH_TRICKY_TOKEN is masked (--show-secrets writes it)\n')
    expect(require('dotenv').parse(masked.stdout).DSH_TRICKY_TOKEN).toBeUndefined()
  })

  it('--format dotenv names exactly what of a value no quoting can hold: no backslash when it has none', () => {
    const { formatLines } = require('../cli/formats.js')
    const dotenv = (value) => formatLines([{ key: 'DSH_X', value, masked: false }], 'dotenv')
    const comment = (held) => `# DSH_X holds ${held}, which no .env quoting can hold together (--format export can)\n`
    expect(dotenv(`it's \`a\` "b"`)).toBe(comment('\', ` and "'))
    expect(dotenv(`it's \`a\` \\`)).toBe(comment("', ` and \\"))
    expect(dotenv(`it's \`a\` "b" \\`)).toBe(comment('\', `, " and \\'))
    expect(dotenv('a\r"b"')).toBe(comment('a carriage return and "'))
    // Without the `"`, double quotes hold it.
    expect(dotenv(`it's \`a\``)).toBe(`DSH_X="it's \`a\`"\n`)
    expect(require('dotenv').parse(dotenv(`it's \`a\``))).toEqual({ DSH_X: `it's \`a\`` })
  })

  posix.it('--format export is idempotent under a repeated eval, and leaves out the PATH entries a package manager put in front', () => {
    const script = `eval "$("$0" "$1" env --home "$2" --plugin "$3" --format export)"; eval "$("$0" "$1" env --home "$2" --plugin "$3" --format export)"; printf %s "$PATH"`
    const run = (env) =>
      spawnSync('bash', ['--norc', '--noprofile', '-c', script, process.execPath, BIN, HOME, fixture('region.cjs')], { encoding: 'utf8', env: { ...baseEnv(), ...env } })
    const twice = run({ PATH: '/usr/bin:/bin' })
    expect(twice.stderr).toBe('')
    expect(twice.stdout.split(':')).toEqual([REGION_BIN, '/usr/bin', '/bin'])
    const launched = run({ PATH: '/home/ada/project/node_modules/.bin:/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:/usr/bin:/bin', npm_command: 'exec' })
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

  it('get of a key that differs only in case from one the call gets or could get exits 1 and says keys are case-sensitive', () => {
    for (const [key, meant, args] of [
      ['dsh_home', 'DSH_HOME', ['--home', HOME]],
      ['Dsh_Home', 'DSH_HOME', ['--home', HOME]],
      ['dsh_session_id', 'DSH_SESSION_ID', ['--home', HOME]],
      ['dsh_tricky_token', 'DSH_TRICKY_TOKEN', trickyArgs],
    ]) {
      const result = cli(['get', key, ...args])
      expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({
        status: 1,
        stdout: '',
        stderr: `dsh-shell-env: no ${key}; keys are case-sensitive: did you mean ${meant}?\n`,
      })
    }
  })
})
