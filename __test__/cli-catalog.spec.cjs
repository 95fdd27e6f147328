'use strict'

// The listing commands of `dsh-shell-env`: `limits` (each limit option and
// its mechanism on this host) and `catalog` (built-in and declared variables
// with descriptions, owners and when they are set; command directories).
//
// Every case runs `node bin/dsh-shell-env.js …` as a real child process;
// nothing is mocked. Runs unchanged under `vitest run` (globals: true) and
// `jest`. JSON shapes are the ones docs/cli.md documents; human tables are
// checked for width and escapes, not byte by byte. Shared helpers (the command
// runner, the home, the fixtures' command directories) are in cli-helpers.cjs.

const { posix } = require('./platform.cjs')
const { fixture, HOME, REGION_BIN, PAIR_BIN, literal, cli, cliJson, byKey, expectPlainTable } = require('./cli-helpers.cjs')

describe('limits', () => {
  posix.it('lists each limit option with its mechanism here, as limitMechanisms() says, and --json the same', () => {
    const { limitMechanisms } = require('../lib/index.js')
    const expected = limitMechanisms()
    const json = cliJson(['limits', '--json'])
    expect(json).toEqual(expected.map(({ limit, field, mechanism, covers, tampering, tamperingNote, refused }) => ({ limit, field, mechanism, covers, tampering, tamperingNote, refused })))
    const table = cli(['limits'])
    expect(table.status).toBe(0)
    expectPlainTable(table.stdout)
    const rows = table.stdout.split('\n').slice(2).filter(Boolean)
    expect(rows.map((row) => row.trim().split(/\s{3,}/)[0])).toEqual(['--memory', '--processes', '--cpu', '--file-size', '--open-files'])
    expect(table.stdout).toContain('RLIMIT_CPU (per process)')
    expect(rows.map((row) => row.trim().split(/\s{3,}/).pop())).toEqual(expected.map((entry) => entry.tampering ?? expect.any(String)))
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
