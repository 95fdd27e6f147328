'use strict'

// `dsh-shell-env --plugin FILE`: contributor files (CommonJS and ES modules)
// that fail to load, export the wrong thing or register wrongly, named with
// their file and line (--debug and DEBUG for the stack), and Cordis plugin
// files under each supported Cordis line.
//
// Every case runs `node bin/dsh-shell-env.js …` as a real child process;
// nothing is mocked. Runs unchanged under `vitest run` (globals: true) and
// `jest`. JSON shapes are the ones docs/cli.md documents; human tables are
// checked for width and escapes, not byte by byte. Shared helpers (the command
// runner, the home, the fixtures' command directories) are in cli-helpers.cjs.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT } = require('./helpers.cjs')
const { posix } = require('./platform.cjs')
const { fixture, HOME, cli, cliJson, byKey, expectFailure } = require('./cli-helpers.cjs')

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
