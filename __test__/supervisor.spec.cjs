'use strict'

// What the supervisor guarantees a host on Linux (docs/process.md): commands
// end with the host whenever and however it dies, also while they are still
// starting and when a command holds every descriptor of its host it could
// reopen; commands end, and say why, when the supervisor is killed; and no
// descriptor but stdio reaches a command. Real hosts (child node processes)
// and real commands. Runs unchanged under `vitest run` and `jest`.

const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES, runNode, lastJsonLine } = require('./helpers.cjs')
const { alive, delay, processes, waitFor } = require('./process-helpers.cjs')
const { gate, LINUX } = require('./platform.cjs')
const { execute } = require('..')

/** The supervisor runs on Linux, with its program beside the addon. */
const supervised = gate(LINUX && fs.existsSync(path.join(ROOT, 'dsh-shell-env-supervisor')), 'the supervisor (Linux)')
const UNSHARE = ['/usr/bin/unshare', '/bin/unshare'].find((file) => fs.existsSync(file))
/** A host in a pid namespace of its own takes root (CAP_SYS_ADMIN) and unshare(1). */
const otherNamespace = gate(supervised.runs && process.getuid?.() === 0 && UNSHARE !== undefined, 'the supervisor, root and unshare(1)')

/** Whether `pid` runs: it exists and is not a zombie. */
function running(pid) {
  return processes().some((p) => p.pid === pid && p.state !== 'Z')
}

function scratch(name) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `dsh-supervisor-${name}-`))
}

/** The pids the commands wrote into `dir`, one file each. */
function pidsIn(dir) {
  return fs
    .readdirSync(dir)
    .filter((name) => /^\d+$/.test(name))
    .map((name) => Number(fs.readFileSync(path.join(dir, name), 'utf8').trim()))
    .filter((pid) => pid > 0)
}

supervised.describe('the supervisor', () => {
  // A fresh host's pool is nearly empty: most of a burst's starts wait for a
  // reaper to be handed over, and another start may take that handout into
  // the pool first; the waiter must still find it there. Several hosts at
  // once, for the contention that makes the race likely.
  it('fresh hosts that each start a burst of commands at once get every one started', async () => {
    const hosts = Array.from({ length: 8 }, () => new Promise((resolve) => {
      const child = spawn(process.execPath, [path.join(FIXTURES, 'exec-interleave.cjs'), ROOT], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (chunk) => (stdout += chunk))
      child.stderr.on('data', (chunk) => (stderr += chunk))
      child.on('close', (status) => resolve({ status, stdout, stderr }))
    }))
    for (const { status, stdout, stderr } of await Promise.all(hosts)) {
      expect(stderr).toBe('')
      expect(status).toBe(0)
      expect(lastJsonLine(stdout).map((result) => result.exitCode)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 0])
    }
  }, 60_000)

  it('a command sees no descriptor but 0, 1 and 2', async () => {
    // `; true`: sh would otherwise exec ls, whose own directory handle is 3.
    const result = await (await execute({ command: 'ls /proc/$$/fd; true' })).result()
    expect(result.stdout.text.split('\n').filter(Boolean).sort()).toEqual(['0', '1', '2'])
  })

  it('killed while commands run: each ends killed with interrupted ERR_SHELL_EXEC_SUPERVISOR_LOST, escapees too, and the next command starts a new one (child process)', async () => {
    const dir = scratch('killed')
    const child = runNode([path.join(FIXTURES, 'supervisor-killed.cjs'), ROOT, dir], { timeout: 60_000 })
    expect(child.stderr).toBe('')
    const report = lastJsonLine(child.stdout)
    expect(report.statuses).toEqual(['killed', 'killed', 'killed'])
    for (const result of report.results) {
      expect(result.signal).toBe('SIGKILL')
      expect(result.interrupted).toEqual({ code: 'ERR_SHELL_EXEC_SUPERVISOR_LOST', message: expect.stringContaining('supervisor') })
    }
    // Orphaned zombies wait for init; what matters is that nothing runs.
    for (const pid of report.escapees) expect(running(pid)).toBe(false)
    expect(report.next).toEqual({ exitCode: 0, stdout: 'next\n', interrupted: null })
    expect(report.current).not.toBe(report.old)
    expect(report.current).toBeGreaterThan(0)
    fs.rmSync(dir, { recursive: true, force: true })
  }, 90_000)

  it('40 hosts that call process.exit() at a random moment during 16 registry spawns leave no command running', async () => {
    const dirs = []
    for (let host = 0; host < 40; host++) {
      const dir = scratch(`race${host}`)
      dirs.push(dir)
      const exitAfter = Math.floor(Math.random() * 6)
      const child = runNode([path.join(FIXTURES, 'host-exit-race.cjs'), ROOT, dir, String(exitAfter)], { timeout: 30_000 })
      // Nothing but the exit's line for each command it left running.
      const said = child.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('dsh-shell-env: command still running at exit, ended with the host: '))
      expect(said).toEqual([])
      expect(child.status).toBe(0)
    }
    // A command started just before its host died writes its pid a moment later.
    await delay(500)
    const started = dirs.flatMap(pidsIn)
    const survivors = await waitFor(
      () => {
        const left = dirs.flatMap(pidsIn).filter(running)
        return left.length === 0 ? [] : null
      },
      'every command of the 40 hosts to be gone',
      5_000,
    ).catch(() => dirs.flatMap(pidsIn).filter(running))
    expect({ survivors, startedSome: started.length > 0 }).toEqual({ survivors: [], startedSome: true })
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
  }, 120_000)

  it('of another protocol version (a platform package upgraded under a running host) is refused with ERR_SHELL_EXEC_SUPERVISOR_MISMATCH naming both versions, nothing started and nothing left', () => {
    const dir = scratch('version')
    const addon = fs.readdirSync(ROOT).find((name) => name.endsWith('.node'))
    for (const name of ['binding.js', addon]) fs.copyFileSync(path.join(ROOT, name), path.join(dir, name))
    // Its pid, a hello of protocol version 7 on its socket (its stdin), then it waits to be ended.
    const fake = path.join(dir, 'dsh-shell-env-supervisor')
    const pidFile = path.join(dir, 'fake-pid')
    const hello = String.raw`h\000\000\000\007\000\000\000\000\000\000\000`
    fs.writeFileSync(fake, `#!/bin/sh\necho $$ > '${pidFile}'\nprintf '${hello}' >&0\nexec sleep 30\n`, { mode: 0o755 })
    const marker = path.join(dir, 'ran')
    const host = `
      const binding = require(${JSON.stringify(path.join(dir, 'binding.js'))})
      binding.execute({ command: ['/bin/touch', ${JSON.stringify(marker)}] }, process.env).then(
        () => console.log(JSON.stringify({ started: true })),
        (error) => console.log(JSON.stringify({ code: error.code, message: error.message })),
      )`
    const child = runNode(['-e', host], { timeout: 20_000, killSignal: 'SIGKILL' })
    expect(child.stderr).toBe('')
    const report = lastJsonLine(child.stdout)
    expect(report.code).toBe('ERR_SHELL_EXEC_SUPERVISOR_MISMATCH')
    expect(report.message).toMatch(/^the supervisor program speaks protocol version 7, this addon version [1-9]\d*: /)
    expect(report.message).not.toContain('this addon version 7')
    expect(fs.existsSync(marker)).toBe(false)
    const fakePid = Number(fs.readFileSync(pidFile, 'utf8'))
    expect(running(fakePid)).toBe(false)
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('a command that reopened every descriptor of its host it could still dies with the host (SIGKILL), and so does its escapee', async () => {
    const dir = scratch('reopen')
    const host = spawn(process.execPath, [path.join(FIXTURES, 'host-fd-reopen.cjs'), ROOT, dir], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    host.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
    host.stderr.resume()
    const exited = new Promise((resolve) => host.on('exit', (code, signal) => resolve({ code, signal })))
    const report = await waitFor(() => {
      const line = stdout.split('\n').find((text) => text.startsWith('{'))
      return line && JSON.parse(line)
    }, 'the host to report its command', 20_000)
    // Pipes and files reopen; the host's sockets (to the supervisor and the
    // command's link) cannot.
    expect(report.reopened).toBeGreaterThan(0)
    for (const pid of report.pids) expect(alive(pid)).toBe(true)
    host.kill('SIGKILL')
    expect((await exited).signal).toBe('SIGKILL')
    await waitFor(() => report.pids.every((pid) => !running(pid)), 'the command and its escapee to be gone', 10_000)
    fs.rmSync(dir, { recursive: true, force: true })
  }, 60_000)
})

otherNamespace.describe('hosts in other pid namespaces', () => {
  it("one that starts its supervisor (in the same cgroup) leaves this host's running commands alone", async () => {
    const execution = await execute({ command: 'sleep 30' })
    try {
      // Its pids mean nothing here, nor ours there: neither may take the other's supervisor for dead.
      const script = `require(${JSON.stringify(ROOT)}).execute({ command: 'true' }).then((e) => e.result()).then((r) => console.log(r.exitCode))`
      const other = spawnSync(UNSHARE, ['--pid', '--fork', '--mount-proc', process.execPath, '-e', script], { encoding: 'utf8', timeout: 30_000 })
      expect(other.stderr).toBe('')
      expect(other.stdout.trim()).toBe('0')
      await delay(200)
      expect(execution.status).toBe('running')
    } finally {
      execution.kill()
    }
    expect((await execution.result()).signal).toBe('SIGTERM')
  }, 40_000)
})
