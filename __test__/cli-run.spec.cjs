'use strict'

// `dsh-shell-env run`: a command run in the managed environment of a call:
// its arguments, exit codes and signals, the limit options, --scrub and
// --hardening, --timeout, stdin, spawn failures, and output streamed live.
//
// Every case runs `node bin/dsh-shell-env.js …` as a real child process;
// nothing is mocked. Runs unchanged under `vitest run` (globals: true) and
// `jest`. JSON shapes are the ones docs/cli.md documents; human tables are
// checked for width and escapes, not byte by byte. Shared helpers (the command
// runner, the home, the fixtures' command directories) are in cli-helpers.cjs.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT } = require('./helpers.cjs')
const { posix, signals } = require('./platform.cjs')
const { BIN, fixture, HOME, baseEnv, cli, expectFailure } = require('./cli-helpers.cjs')
const { leafFile } = require('./process-helpers.cjs')

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

  // The supervisor counts what a command leaves running (Linux).
  ;(process.platform === 'linux' ? it : it.skip)('says on stderr how many processes the command left running, which were ended with it', () => {
    const result = cli(['run', '--home', HOME, '--', 'sh', '-c', 'sleep 30 & echo started'])
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({
      status: 0,
      stdout: 'started\n',
      stderr: 'dsh-shell-env: ended 1 process the command left running when it exited\n',
    })
  })

  posix.it('--file-size, --cpu and --open-files limit the command, and stderr says which limit ended it, in the option’s words and with its value', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-cli-limits-'))
    try {
      const file = cli(['run', '--home', HOME, '--file-size', '1m', '--', 'sh', '-c', 'head -c 5M /dev/zero > big'], { cwd: dir })
      expect({ status: file.status, stderr: file.stderr.split('\n').filter(Boolean).pop() }).toEqual({ status: 153, stderr: 'dsh-shell-env: ended by its file size limit (1 MiB)' })
      expect(fs.statSync(path.join(dir, 'big')).size).toBe(1024 * 1024)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
    const cpu = cli(['run', '--home', HOME, '--cpu', '1s', '--', 'sh', '-c', 'while :; do :; done'])
    expect({ status: cpu.status, stderr: cpu.stderr }).toEqual({ status: 128 + 24, stderr: 'dsh-shell-env: ended by its CPU limit (1 s)\n' })
    const files = cli(['run', '--home', HOME, '--open-files', '20', '--memory', '1G', '--', 'sh', '-c', 'ulimit -n'])
    expect({ status: files.status, stdout: files.stdout, stderr: files.stderr }).toEqual({ status: 0, stdout: '20\n', stderr: '' })
  })

  // Where a cgroup holds processes, its leaf's files are the command's own user's (Linux).
  const pidsMax = process.platform === 'linux' ? leafFile(require('../lib/index.js').limitMechanisms()[1].mechanism, 'pids', 'pids.max') : undefined
  ;(pidsMax === undefined ? it.skip : it)('says on stderr that the command interfered with a limit it lifted in its cgroup', () => {
    const result = cli(['run', '--home', HOME, '--processes', '16', '--', 'sh', '-c', `echo max > ${pidsMax} && echo lifted`])
    expect({ status: result.status, stdout: result.stdout, stderr: result.stderr }).toEqual({
      status: 0,
      stdout: 'lifted\n',
      stderr: 'dsh-shell-env: the command interfered with its process limit (16), which may not have held\n',
    })
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
