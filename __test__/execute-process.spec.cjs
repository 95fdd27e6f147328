'use strict'

// execute(): process behaviour. stdin, exit codes and signals, argv and
// shells, PATH lookup and workdir, timeouts, aborts, kill() and the grace
// before SIGKILL, the process group (grandchildren included), reaping and
// descriptors; the group ended when the JS environment is torn down, and
// waiting without SIGCHLD. Real child processes, no mocks. Runs unchanged
// under `vitest run` (globals: true) and `jest`.
//
// Conventions (see helpers.cjs): errors are checked with
// `util.types.isNativeError` (Jest runs this file in its own realm), never
// `instanceof`. Timing is only asserted for grace bounds, with wide margins.

const fs = require('node:fs')
const path = require('node:path')

const { ROOT, FIXTURES, rejected, expectCode, runNode, lastJsonLine, trustedScratch } = require('./helpers.cjs')
const { run, untilOutput, groupGone, groupLeft, isHelper, childrenOf } = require('./process-helpers.cjs')
const { WINDOWS, posix, signals, proc, straceInjection, powershell } = require('./platform.cjs')
const { T, script } = require('./execute-helpers.cjs')

const { execute } = require('..')

/** Slack over a grace period for `result()` to settle (2-core CI). */
const SLACK_MS = 5_000
/** An exit with `code` through the platform's own shell (bash; `cmd` on Windows). */
const exitWith = (code) => (WINDOWS ? { command: `exit /b ${code}`, shell: 'cmd' } : { command: `exit ${code}` })

let TMP
beforeAll(() => {
  // Command directories live here too: somewhere no other user can write.
  TMP = trustedScratch('dsh-exec-spec-')
})
afterAll(() => {
  fs.rmSync(TMP, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------

describe('process behaviour', () => {
  posix.it('stdin as a string and as a Uint8Array is written, then closed', async () => {
    const text = 'héllo\nwörld 😀\n'
    const fromString = await run({ command: ['cat'], stdin: text })
    expect(fromString.result.stdout.text).toBe(text)
    const bytes = new Uint8Array([0x61, 0xc3, 0xa9, 0x0a, 0xf0, 0x9f, 0x98, 0x80])
    const fromBytes = await run({ command: ['cat'], stdin: bytes })
    expect(fromBytes.result.stdout.text).toBe('aé\n😀')
    const fromBuffer = await run({ command: ['cat'], stdin: Buffer.from('buffer') })
    expect(fromBuffer.result.stdout.text).toBe('buffer')
    const empty = await run({ command: ['cat'], stdin: '' })
    expect(empty.result.stdout.text).toBe('')
    expect(empty.result.exitCode).toBe(0)
  }, T)

  posix.it('large stdin is written completely; a child that never reads it still finishes', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024)
    const counted = await run({ command: 'wc -c', stdin: big })
    expect(counted.result.stdout.text.trim()).toBe(String(big.length))
    const ignored = await run({ command: 'exit 3', stdin: big })
    expect(ignored.result.exitCode).toBe(3)
  }, T)

  proc.it('without stdin the child reads /dev/null', async () => {
    const { result } = await run({ command: 'readlink /proc/$$/fd/0; cat; echo "eof:$?"' })
    expect(result.stdout.text).toBe('/dev/null\neof:0\n')
  }, T)

  powershell.it.each(['powershell', 'pwsh'])('%s runs a script with the variables of the spec and reports its exit code', async (shell) => {
    const { result } = await run({ command: 'Write-Output "value:$env:EXEC_SPEC_VALUE"; exit 3', shell, env: { EXEC_SPEC_VALUE: 'from-env' } })
    expect(result.exitCode).toBe(3)
    expect(result.stdout.text.trim()).toBe('value:from-env')
  }, T)

  powershell.it('a PowerShell script that outlives its timeout is ended with its job', async () => {
    const { execution, result } = await run({ command: 'Start-Sleep -Seconds 60', shell: 'powershell', timeoutMs: 1_000, graceMs: 500 })
    // Ended by CTRL_BREAK where it shares the host's console, else by TerminateJobObject.
    expect(result.timedOut).toBe(true)
    expect(execution.status).toBe('killed')
  }, T)

  it.each([0, 1, 7, 255])('exit code %i', async (code) => {
    const { execution, result } = await run(exitWith(code))
    expect(result.exitCode).toBe(code)
    expect(result.signal).toBe(null)
    expect(result.timedOut).toBe(false)
    expect(result.aborted).toBe(false)
    expect(execution.exitCode).toBe(code)
    expect(execution.signal).toBe(null)
    expect(execution.status).toBe('completed')
  }, T)

  posix.it('an argv command runs directly, without a shell', async () => {
    const { result } = await run({ command: ['printf', '%s|', 'a b', '$HOME', '*', '"q"'] })
    expect(result.stdout.text).toBe('a b|$HOME|*|"q"|')
    expect((await run({ command: ['false'] })).result.exitCode).toBe(1)
  }, T)

  posix.it("shell: 'bash' by default, 'sh', or an absolute path", async () => {
    const bash = await run({ command: 'echo "${BASH_VERSION:+bash}"' })
    expect(bash.result.stdout.text).toBe('bash\n')
    const sh = await run({ command: 'echo "$0"', shell: 'sh' })
    expect(path.basename(sh.result.stdout.text.trim())).toBe('sh')
    const absolute = await run({ command: 'echo "$0"', shell: '/bin/bash' })
    expect(absolute.result.stdout.text).toBe('/bin/bash\n')
  }, T)

  posix.it('shell: any other shell by its name, looked up on the trusted PATH only (absolute entries, as bash is), given -c', async () => {
    const shells = path.join(TMP, 'named-shells')
    script(shells, 'exec-spec-shell', 'printf "%s|%s\\n" "$1" "$2"')
    const found = await run({ command: 'echo hi', shell: 'exec-spec-shell', env: { PATH: `${shells}:${process.env.PATH}` } })
    expect(found.result.stdout.text).toBe('-c|echo hi\n')
    // A relative entry names the workdir, where a command could plant a shell for the next.
    const error = await rejected(() => execute({ command: 'echo hi', shell: 'exec-spec-shell', workdir: TMP, env: { PATH: `named-shells:${process.env.PATH}` } }))
    expectCode(error, 'ERR_SHELL_EXEC_SPAWN_FAILED')
    expect(error.cause.code).toBe('ENOENT')
  }, T)

  posix.it('the program is looked up on the child’s final PATH', async () => {
    const tools = path.join(TMP, 'explicit-bin')
    script(tools, 'exec-spec-explicit-tool', 'echo explicit-tool')
    const { result } = await run({ command: ['exec-spec-explicit-tool'], env: { PATH: `${tools}:${process.env.PATH}` } })
    expect(result.stdout.text).toBe('explicit-tool\n')
    const error = await rejected(() => execute({ command: ['exec-spec-explicit-tool'] }))
    expectCode(error, 'ERR_SHELL_EXEC_SPAWN_FAILED')
    expect(error.cause.code).toBe('ENOENT')
  }, T)

  posix.it('workdir defaults to process.cwd() and can be set', async () => {
    const here = await run({ command: ['pwd'] })
    expect(here.result.stdout.text).toBe(`${process.cwd()}\n`)
    const there = await run({ command: ['pwd'], workdir: TMP })
    expect(there.result.stdout.text).toBe(`${TMP}\n`)
  }, T)

  signals.it("death by a signal: signal 'SIGTERM', exitCode null, status 'completed' (we did not kill it)", async () => {
    const { execution, result } = await run({ command: 'kill -TERM $$' })
    expect(result.signal).toBe('SIGTERM')
    expect(result.exitCode).toBe(null)
    expect(result.timedOut).toBe(false)
    expect(result.aborted).toBe(false)
    expect(execution.status).toBe('completed')
    expect(execution.signal).toBe('SIGTERM')
    expect(execution.exitCode).toBe(null)
    const killed = await run({ command: 'kill -KILL $$' })
    expect(killed.result.signal).toBe('SIGKILL')
    expect(killed.execution.status).toBe('completed')
  }, T)

  signals.it("timeout: timedOut true, aborted false, status 'killed'", async () => {
    const { execution, result } = await run({ command: 'sleep 30', timeoutMs: 300 })
    expect(result.timedOut).toBe(true)
    expect(result.aborted).toBe(false)
    expect(result.timeoutMs).toBe(300)
    expect(result.signal).toBe('SIGTERM')
    expect(result.exitCode).toBe(null)
    expect(execution.status).toBe('killed')
    expect(result.durationMs).toBeLessThan(20_000)
  }, T)

  signals.it('a timeout ends and reaps the child while the JS thread is blocked', async () => {
    const execution = await execute({ command: ['sleep', '30'], timeoutMs: 200, graceMs: 200 })
    // Busy past the timeout: neither the kill nor the reap may wait for this
    // thread. A zombie still counts; under the supervisor the group's leader
    // is a reaper, which lives on.
    const until = Date.now() + 3_000
    let reaped = false
    while (!reaped && Date.now() < until) reaped = !groupLeft(execution.pid)
    expect(reaped).toBe(true)
    const result = await execution.result()
    expect(result.timedOut).toBe(true)
    expect(result.signal).toBe('SIGTERM')
  }, T)

  it('the default timeout is reported as 120000', async () => {
    const { result } = await run(exitWith(0))
    expect(result.timeoutMs).toBe(120_000)
    expect(result.timedOut).toBe(false)
    expect(typeof result.durationMs).toBe('number')
    expect(result.durationMs).toBeGreaterThanOrEqual(0)
  }, T)

  signals.it("a child that exits on SIGTERM with its own code is still status 'killed' after a timeout", async () => {
    const { execution, result } = await run({
      command: 'trap "exit 3" TERM; echo ready; while :; do sleep 0.05; done',
      timeoutMs: 300,
    })
    expect(result.exitCode).toBe(3)
    expect(result.signal).toBe(null)
    expect(result.timedOut).toBe(true)
    expect(execution.status).toBe('killed')
  }, T)

  signals.it("abort mid-run: aborted true, timedOut false, status 'killed'", async () => {
    const controller = new AbortController()
    const execution = await execute({ command: 'echo ready; sleep 30', signal: controller.signal })
    await untilOutput(execution, 'ready')
    expect(execution.status).toBe('running')
    controller.abort()
    const result = await execution.result()
    expect(result.aborted).toBe(true)
    expect(result.timedOut).toBe(false)
    expect(result.signal).toBe('SIGTERM')
    expect(execution.status).toBe('killed')
    expect(execution.kill()).toBe(false)
  }, T)

  posix.it('an already-aborted signal stops the child at once: aborted true, timedOut false', async () => {
    const controller = new AbortController()
    controller.abort()
    const marker = path.join(TMP, 'already-aborted-marker')
    const execution = await execute({ command: `sleep 2; touch ${marker}; sleep 30`, signal: controller.signal })
    const result = await execution.result()
    expect(result.aborted).toBe(true)
    expect(result.timedOut).toBe(false)
    expect(execution.status).toBe('killed')
    expect(result.durationMs).toBeLessThan(20_000)
    expect(fs.existsSync(marker)).toBe(false)
  }, T)

  signals.it('timedOut and aborted are never both true: an abort during the timeout’s grace stays a timeout', async () => {
    const controller = new AbortController()
    const execution = await execute({
      command: 'trap "echo term" TERM; echo ready; while :; do sleep 0.05; done',
      timeoutMs: 200,
      graceMs: 1_500,
      signal: controller.signal,
    })
    await untilOutput(execution, 'term') // the timeout's SIGTERM arrived; SIGKILL follows after the grace
    controller.abort()
    const result = await execution.result()
    expect(result.timedOut).toBe(true)
    expect(result.aborted).toBe(false)
    expect(result.signal).toBe('SIGKILL')
  }, T)

  signals.it('timedOut and aborted are never both true: a timeout during the abort’s grace stays an abort', async () => {
    const controller = new AbortController()
    const execution = await execute({
      command: 'trap "echo term" TERM; echo ready; while :; do sleep 0.05; done',
      timeoutMs: 3_000,
      graceMs: 5_000,
      signal: controller.signal,
    })
    await untilOutput(execution, 'ready')
    controller.abort()
    const result = await execution.result()
    expect(result.aborted).toBe(true)
    expect(result.timedOut).toBe(false)
    expect(result.signal).toBe('SIGKILL')
  }, T)

  signals.it('kill() is true once while running, then false; after the end it is false', async () => {
    const execution = await execute({ command: 'echo ready; sleep 30' })
    await untilOutput(execution, 'ready')
    expect(execution.kill()).toBe(true)
    expect(execution.kill()).toBe(false)
    const result = await execution.result()
    expect(execution.kill()).toBe(false)
    expect(result.signal).toBe('SIGTERM')
    expect(result.timedOut).toBe(false)
    expect(result.aborted).toBe(false)
    expect(execution.status).toBe('killed')
    const finished = await run({ command: 'true' })
    expect(finished.execution.kill()).toBe(false)
    expect(finished.execution.status).toBe('completed')
  }, T)

  signals.it('a TERM-ignoring command is killed with SIGKILL after graceMs', async () => {
    const graceMs = 1_000
    const execution = await execute({ command: 'trap "" TERM; echo ready; sleep 30', graceMs })
    await untilOutput(execution, 'ready')
    expect(execution.kill()).toBe(true)
    const result = await execution.result()
    expect(result.signal).toBe('SIGKILL')
    expect(result.exitCode).toBe(null)
    expect(execution.status).toBe('killed')
    expect(result.durationMs).toBeGreaterThanOrEqual(graceMs)
    expect(result.durationMs).toBeLessThan(15_000)
    await groupGone(execution.pid)
  }, T)

  signals.it('a TERM-ignoring command that times out is killed after timeoutMs + graceMs', async () => {
    const timeoutMs = 300
    const graceMs = 1_000
    const { execution, result } = await run({ command: 'trap "" TERM; sleep 30', timeoutMs, graceMs })
    expect(result.timedOut).toBe(true)
    expect(result.signal).toBe('SIGKILL')
    expect(result.durationMs).toBeGreaterThanOrEqual(timeoutMs + graceMs)
    expect(result.durationMs).toBeLessThan(15_000)
    expect(execution.status).toBe('killed')
  }, T)

  signals.it('graceMs 0 sends SIGKILL at once', async () => {
    const execution = await execute({ command: 'trap "" TERM; echo ready; sleep 30', graceMs: 0 })
    await untilOutput(execution, 'ready')
    execution.kill()
    const result = await execution.result()
    expect(result.signal).toBe('SIGKILL')
    expect(result.durationMs).toBeLessThan(15_000)
  }, T)

  proc.it('a grandchild keeping stdout open cannot hold result() once the leader exits; the group is gone', async () => {
    const graceMs = 1_000
    const execution = await execute({ command: 'sleep 60 & echo "$!"; exit 0', graceMs })
    const result = await execution.result()
    expect(result.exitCode).toBe(0)
    expect(execution.status).toBe('completed')
    expect(result.durationMs).toBeLessThan(graceMs + SLACK_MS)
    const grandchild = Number(result.stdout.text.trim())
    expect(grandchild).toBeGreaterThan(0)
    await groupGone(execution.pid)
  }, T)

  proc.it('a TERM-ignoring grandchild keeping stdout open is SIGKILLed after the grace; result() settles within grace + slack', async () => {
    const graceMs = 1_000
    const flag = path.join(TMP, 'grandchild-trap-flag')
    const started = Date.now()
    const execution = await execute({
      command: '(trap "" TERM; touch "$EXEC_SPEC_FLAG"; exec sleep 60) & while [ ! -e "$EXEC_SPEC_FLAG" ]; do sleep 0.02; done; exit 0',
      env: { EXEC_SPEC_FLAG: flag },
      graceMs,
    })
    const result = await execution.result()
    const waited = Date.now() - started
    expect(result.exitCode).toBe(0)
    expect(result.durationMs).toBeLessThan(graceMs + SLACK_MS)
    expect(waited).toBeLessThan(graceMs + SLACK_MS)
    await groupGone(execution.pid)
  }, T)

  proc.it('kill() ends the whole group, grandchildren included', async () => {
    const execution = await execute({ command: 'sleep 60 & echo "ready $!"; wait' })
    await untilOutput(execution, 'ready')
    expect(execution.kill()).toBe(true)
    await execution.result()
    await groupGone(execution.pid)
  }, T)

  proc.it('kill() ends the whole group: a TERM-ignoring grandchild that closed its pipes gets SIGKILL after the grace', async () => {
    const graceMs = 500
    const flag = path.join(TMP, 'detached-grandchild-flag')
    const execution = await execute({
      command: '(trap "" TERM; touch "$EXEC_SPEC_FLAG"; exec sleep 60) >/dev/null 2>&1 & while [ ! -e "$EXEC_SPEC_FLAG" ]; do sleep 0.02; done; echo ready; wait',
      env: { EXEC_SPEC_FLAG: flag },
      graceMs,
    })
    await untilOutput(execution, 'ready')
    expect(execution.kill()).toBe(true)
    const result = await execution.result()
    expect(result.durationMs).toBeLessThan(graceMs + SLACK_MS)
    await groupGone(execution.pid)
  }, T)

  proc.it('after the leader exits, a TERM-ignoring background job without pipes is SIGKILLed after the grace', async () => {
    // docs/process.md: when the leader exits, whatever is left of its group gets the same treatment.
    const graceMs = 500
    const flag = path.join(TMP, 'background-no-pipes-flag')
    const execution = await execute({
      command: '(trap "" TERM; touch "$EXEC_SPEC_FLAG"; exec sleep 60) >/dev/null 2>&1 & while [ ! -e "$EXEC_SPEC_FLAG" ]; do sleep 0.02; done; exit 0',
      env: { EXEC_SPEC_FLAG: flag },
      graceMs,
    })
    await execution.result()
    await groupGone(execution.pid)
  }, T)

  proc.it('the leader is reaped by the time result() settles (no zombie): the command itself, or under the supervisor every child of its reaper', async () => {
    const executions = await Promise.all(Array.from({ length: 10 }, (_, i) => execute({ command: `exit ${i}` })))
    await Promise.all(executions.map((execution) => execution.result()))
    for (const { pid } of executions) {
      // A reaper outlives its command and serves the next; a zombie is still its child.
      if (isHelper(pid)) expect(childrenOf(pid)).toEqual([])
      else expect(fs.existsSync(`/proc/${pid}`)).toBe(false)
    }
  }, T)

  proc.it('no file descriptors leak (pipes, pidfds, spill files)', async () => {
    const fds = () => {
      const counts = { pipe: 0, pidfd: 0, spill: 0, lock: 0 }
      for (const fd of fs.readdirSync('/proc/self/fd')) {
        let target
        try {
          target = fs.readlinkSync(`/proc/self/fd/${fd}`)
        } catch {
          continue
        }
        if (target.startsWith('pipe:')) counts.pipe++
        else if (target.includes('pidfd')) counts.pidfd++
        else if (target.includes('dsh-shell-env-')) {
          // A private directory's lock is held for the host's life, also after
          // another suite of the same process removed the directory (" (deleted)").
          if (path.basename(target).replace(/ \(deleted\)$/, '') === 'lock') counts.lock++
          else counts.spill++
        }
      }
      return counts
    }
    const batch = async () => {
      const runs = []
      for (let i = 0; i < 10; i++) {
        runs.push(run({ command: ['cat'], stdin: 'x'.repeat(5_000), stdoutMaxBytes: 100 }))
        runs.push(run({ command: 'exit 2' }))
        runs.push(run({ command: 'sleep 30', timeoutMs: 100 }))
      }
      await Promise.all(runs)
    }
    await batch() // warm up whatever the runtime allocates once
    const before = fds()
    await batch()
    await batch()
    const after = fds()
    expect(after.pidfd).toBe(before.pidfd)
    expect(after.spill).toBe(0)
    expect(after.lock).toBeLessThanOrEqual(before.lock)
    expect(after.pipe).toBeLessThanOrEqual(before.pipe)
  }, 60_000)
})

proc.describe('teardown of the JS environment ends the group (child process)', () => {
  // The fixture starts a TERM-ignoring leader with a grandchild and a grace of a
  // minute, reports the group, then ends the way the mode says. Teardown kills
  // without a grace, so nothing of the group may outlive the fixture for long.
  it.each([
    ['process.exit()', 'exit'],
    ['an uncaught exception', 'throw'],
    ['worker.terminate()', 'worker'],
  ])('%s', async (_title, mode) => {
    const child = runNode([path.join(FIXTURES, 'exec-teardown.cjs'), mode, ROOT], { timeout: 30_000 })
    expect(child.signal).toBe(null)
    const pid = JSON.parse(child.stdout.split('\n')[0]).pid
    expect(pid).toBeGreaterThan(0)
    await groupGone(pid)
  }, T)
})

posix.describe('waiting does not depend on SIGCHLD (child process)', () => {
  const strace = ['/usr/bin/strace', '/bin/strace'].find((file) => fs.existsSync(file))
  const expected = [
    'first\n',
    'node-1\n',
    'after-node\n',
    'native-slow\n',
    'node-fast\n',
    'native-fast\n',
    'node-slow\n',
    ...Array(8).fill(''),
    'last\n',
  ]

  function check(child) {
    expect(child.signal).toBe(null)
    expect(child.status).toBe(0)
    const results = lastJsonLine(child.stdout)
    expect(results.map((r) => r.stdout)).toEqual(expected)
    expect(results.slice(7, 15).map((r) => r.exitCode)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    for (const result of results) expect(result.timedOut ?? false).toBe(false)
  }

  it('native executions interleaved with Node child_process children all finish', () => {
    check(runNode([path.join(FIXTURES, 'exec-interleave.cjs'), ROOT], { timeout: 60_000 }))
  }, 90_000)

  straceInjection.it('…also with pidfd_open failing (strace fault injection: the waiter-thread fallback)', () => {
    // Skipped only off CI: there a missing strace must fail, not pass quietly.
    if (!strace) throw new Error('strace is required in CI (.ci/run installs it)')
    const { spawnSync } = require('node:child_process')
    const child = spawnSync(
      strace,
      ['-f', '-qq', '-o', '/dev/null', '-e', 'trace=pidfd_open', '-e', 'inject=pidfd_open:error=ENOSYS', process.execPath, path.join(FIXTURES, 'exec-interleave.cjs'), ROOT],
      { encoding: 'utf8', timeout: 60_000, cwd: ROOT },
    )
    if (child.error) throw child.error
    if (/ptrace|Operation not permitted/i.test(child.stderr) && child.status !== 0) {
      // No ptrace in this sandbox: nothing to learn here.
      return
    }
    check({ status: child.status, signal: child.signal, stdout: child.stdout })
  }, 90_000)
})
