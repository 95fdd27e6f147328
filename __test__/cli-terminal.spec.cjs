'use strict'

// `dsh-shell-env` tables on a terminal: colour (a terminal, NO_COLOR,
// FORCE_COLOR, --json), the width (COLUMNS, the terminal's columns, names never
// cut), and the same on a real pseudo-terminal (util-linux `script`).
//
// Every case runs `node bin/dsh-shell-env.js …` as a real child process;
// nothing is mocked. Runs unchanged under `vitest run` (globals: true) and
// `jest`. JSON shapes are the ones docs/cli.md documents; human tables are
// checked for width and escapes, not byte by byte. Shared helpers (the command
// runner, the home, the fixtures' command directories) are in cli-helpers.cjs.

const { spawnSync } = require('node:child_process')

const { ROOT } = require('./helpers.cjs')
const { BIN, fixture, HOME, ESC, baseEnv, cli, codePoints, expectPlainTable } = require('./cli-helpers.cjs')

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
