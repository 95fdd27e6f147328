'use strict'

// `dsh-shell-env explain`: the child's whole environment with each
// variable's source and owner and each removal's reason (--json and the
// table, --scrub, --hardening, masking), its width in a pipe (80 columns or
// COLUMNS), and the variables a package manager that launched it set.
//
// Every case runs `node bin/dsh-shell-env.js …` as a real child process;
// nothing is mocked. Runs unchanged under `vitest run` (globals: true) and
// `jest`. JSON shapes are the ones docs/cli.md documents; human tables are
// checked for width and escapes, not byte by byte. Shared helpers (the command
// runner, the home, the fixtures' command directories) are in cli-helpers.cjs.

const os = require('node:os')
const path = require('node:path')

const { fixture, HOME, REGION_BIN, baseEnv, cli, cliJson, byKey, expectPlainTable } = require('./cli-helpers.cjs')

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

  it('masks exactly what the scrub keeps from a child: a random-looking value under a plain name is shown and inherited, under a credential name removed', () => {
    const alphabet = 'aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI0kL2oP4rS6uW8yZ+/'
    const random = (length) => Array.from({ length }, (_, i) => alphabet[(i * 7) % alphabet.length]).join('')
    const values = Object.fromEntries([32, 40, 42, 79].map((length) => [`CLI_SPEC_RANDOM_${length}`, random(length)]))
    const report = cliJson(['explain', '--home', HOME], { env: { ...values, SOMEVAL: 'aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI', CLI_SPEC_SECRET_KEY: random(40) } })
    const variables = byKey(report.variables)
    for (const [key, value] of Object.entries({ ...values, SOMEVAL: 'aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI' })) {
      expect(variables[key]).toEqual({ key, value, source: 'inherited', owner: null, masked: false, launcher: null })
    }
    expect(variables.CLI_SPEC_SECRET_KEY).toBeUndefined()
    expect(byKey(report.removed).CLI_SPEC_SECRET_KEY).toEqual({ key: 'CLI_SPEC_SECRET_KEY', reason: 'credential' })
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
  const launched = { npm_command: 'exec', npm_config_cache: '/tmp/npm-cache', INIT_CWD: '/home/ada/project', npm_lifecycle_event: 'npx' }

  it('marks the variables npm, npx, pnpm or yarn set, and says how to see a harness call\'s environment', () => {
    // HOME, which no launcher sets, is given on Windows too (where it is not a variable of its own).
    const env = { ...launched, HOME: process.env.HOME ?? os.homedir() }
    const result = cli(['explain', '--home', HOME, '--all'], { env })
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
    const crowded = cli(['explain', '--home', HOME, '--all'], { env: { ...env, CLI_SPEC_A_VARIABLE_WITH_A_VERY_LONG_NAME_INDEED: 'x' } })
    for (const key of Object.keys(launched)) expect(crowded.stdout).toMatch(new RegExp(`^  ${key} .* inherited \\(npm\\)$`, 'm'))
  })

  it('folds them into one line of the table unless --all, so their long names do not squeeze the values; --json lists each', () => {
    const long = Object.fromEntries(Array.from({ length: 28 }, (_, i) => [`npm_package_devDependencies_some_long_dependency_name_${i}`, '^1.0.0']))
    // Only short names besides theirs, whatever the runner's environment holds.
    const keep = /^(PATH|Path|PATHEXT|NODE_PATH|HOME|SystemRoot|SYSTEMROOT|SystemDrive|windir|ComSpec|COMSPEC|TEMP|TMP|USERPROFILE|APPDATA|LOCALAPPDATA|ProgramData|WINE\w*)$/
    const clean = Object.fromEntries(Object.keys(baseEnv()).filter((key) => !keep.test(key)).map((key) => [key, undefined]))
    const env = { ...clean, ...launched, ...long, CLI_SPEC_PLAIN: '/a/value/of/forty/characters/abcdefghij' }
    const result = cli(['explain', '--home', HOME], { env })
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' })
    expect(result.stdout).not.toMatch(/^  (npm_[a-z]|INIT_CWD )/m)
    expect(result.stdout).toMatch(/^  npm_\*, INIT_CWD +--all lists all 32 +inherited \(npm\)$/m)
    expect(result.stdout).toMatch(/^  CLI_SPEC_PLAIN +\/a\/value\/of\/forty\/characters\/abcdefghij +inherited$/m)
    expect(result.stdout).toContain('Marked (npm): 32 variable(s)')
    expect(result.stdout.match(/^Child environment: (\d+) variables/m)[1]).toBe(String(cliJson(['explain', '--home', HOME], { env }).variables.length))
    expectPlainTable(result.stdout)
    expect(cliJson(['explain', '--home', HOME], { env }).variables.filter(({ launcher }) => launcher === 'npm')).toHaveLength(32)
    const all = cli(['explain', '--home', HOME, '--all'], { env })
    for (const key of Object.keys(long)) expect(all.stdout).toMatch(new RegExp(`^  ${key} .* inherited \\(npm\\)$`, 'm'))
    expect(all.stdout).toMatch(/^  CLI_SPEC_PLAIN +\/a\/value.*….* +inherited$/m)
    // Without INIT_CWD, the line names npm_* alone.
    expect(cli(['explain', '--home', HOME], { env: { npm_command: 'exec' } }).stdout).toMatch(/^  npm_\* +--all lists all 1 +inherited \(npm\)$/m)
  })

  it('says nothing of a launcher when none set anything', () => {
    const result = cli(['explain', '--home', HOME])
    expect(result.stdout).not.toContain('(npm)')
  })
})
