'use strict'

// The `dsh-shell-env` command line itself: the bin entry (package.json,
// shebang), --help for the command and each subcommand, usage errors (exit 2,
// one line), and the bare command.
//
// Every case runs `node bin/dsh-shell-env.js …` as a real child process;
// nothing is mocked. Runs unchanged under `vitest run` (globals: true) and
// `jest`. JSON shapes are the ones docs/cli.md documents; human tables are
// checked for width and escapes, not byte by byte. Shared helpers (the command
// runner, the home, the fixtures' command directories) are in cli-helpers.cjs.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const { ROOT } = require('./helpers.cjs')
const { posix } = require('./platform.cjs')
const { BIN, baseEnv, cli, expectPlainTable } = require('./cli-helpers.cjs')

/** A usage error: exit 2, nothing on stdout, exactly one line on stderr. */
function expectUsageError(result, ...mentions) {
  expect(result.status).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr.endsWith('\n')).toBe(true)
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
    [['catalog', '--session', 's-1'], "unknown option '--session' for catalog: env, get, explain and run take it (see dsh-shell-env catalog --help)"],
    [['limits', '--home', '/x'], "unknown option '--home' for limits: env, get, explain, run and catalog take it (see dsh-shell-env limits --help)"],
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
    [['explian'], "unknown command 'explian': did you mean 'explain'? (see dsh-shell-env --help)"],
    [['--session', 's-1', 'env'], "unknown option '--session' before the command"],
  ])('%j', (args, message) => {
    expectUsageError(cli(args), message)
  })
})

describe('an unknown option names the nearest one the command takes', () => {
  it.each([
    [['env', '--sesion', 's-1'], "unknown option '--sesion': did you mean '--session'? (see dsh-shell-env env --help)"],
    [['env', '--sesion=s-1'], "unknown option '--sesion': did you mean '--session'?"],
    [['explain', '--josn'], "unknown option '--josn': did you mean '--json'?"],
    [['env', '--plugins', 'x.js'], "unknown option '--plugins': did you mean '--plugin'?"],
    [['run', '--timeot', '5', 'true'], "unknown option '--timeot': did you mean '--timeout'?"],
    [['env', '--show', 'x'], "unknown option '--show': did you mean '--show-secrets'?"],
    [['explain', '--hard'], "unknown option '--hard': did you mean '--hardening'?"],
    [['limits', '--jsno'], "unknown option '--jsno': did you mean '--json'? (see dsh-shell-env limits --help)"],
  ])('%j', (args, message) => {
    expectUsageError(cli(args), message)
  })

  it('and none when nothing is near', () => {
    expectUsageError(cli(['env', '--bogus']), "dsh-shell-env: unknown option '--bogus' (see dsh-shell-env env --help)")
    expectUsageError(cli(['catalog', '--sesion', 's-1']), "dsh-shell-env: unknown option '--sesion' (see dsh-shell-env catalog --help)")
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
