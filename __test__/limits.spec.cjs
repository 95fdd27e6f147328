'use strict'

// Resource limits through execute(), with real processes: each limit is
// enforced by the mechanism limitMechanisms() names for this host, the
// result says which limit ended a command and which were reached, and a
// limit this host cannot enforce is refused before anything runs. Where
// the machine lacks a mechanism (a cgroup with the memory or pids
// controller), its case is skipped by a gate that says so.

const { execFileSync, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { execute, limitMechanisms } = require('../lib/index.js')
const { gate, posix, LINUX, WINDOWS } = require('./platform.cjs')

/** The supervisor and its tiers (Linux). */
const linux = gate(LINUX, 'the supervisor, which runs on Linux')

const T = 60_000
const MIB = 1024 * 1024

const mechanisms = WINDOWS ? [] : limitMechanisms()
const mechanismOf = (limit) => mechanisms.find((entry) => entry.limit === limit)?.mechanism ?? null

/** The memory controller reaches commands here (a cgroup, v2 or the hybrid layout's v1). */
const memoryCgroup = gate(/^cgroup/.test(mechanismOf('memory') ?? ''), 'a cgroup with the memory controller for commands')
/** The pids controller reaches commands here. */
const pidsCgroup = gate(/^cgroup/.test(mechanismOf('processes') ?? ''), 'a cgroup with the pids controller for commands')
/** No pids controller: `processes` must be refused. */
const noPidsCgroup = gate(!WINDOWS && mechanismOf('processes') === null, 'a host without the pids controller for commands')

async function run(command, limits, extra = {}) {
  const execution = await execute({ command, limits, timeoutMs: 30_000, graceMs: 200, ...extra })
  return execution.result()
}

describe('resource limits', () => {
  posix.it('a write past fileBytes ends the command with the file size limit, leaving a file no larger', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-limits-'))
    try {
      const result = await run('head -c 100M /dev/zero > f', { fileBytes: MIB }, { workdir: dir })
      expect({ limit: result.limit, limitsHit: result.limitsHit }).toEqual({ limit: 'fileSize', limitsHit: [] })
      expect(fs.statSync(path.join(dir, 'f')).size).toBeLessThanOrEqual(MIB)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, T)

  posix.it('a busy loop under cpuSeconds: 1 ends after about one CPU second with the cpu limit', async () => {
    const result = await run('while :; do :; done', { cpuSeconds: 1 })
    expect({ signal: result.signal, limit: result.limit, timedOut: result.timedOut }).toEqual({ signal: 'SIGXCPU', limit: 'cpu', timedOut: false })
    expect(result.durationMs).toBeLessThan(10_000)
  }, T)

  posix.it('openFiles is each process\'s descriptor limit, and no core files once any limit is set', async () => {
    const result = await run('ulimit -n; ulimit -c', { openFiles: 12 })
    expect(result.stdout.text).toBe('12\n0\n')
    // Without limits, the host's own.
    const own = execFileSync('bash', ['-c', 'ulimit -n; ulimit -c'], { encoding: 'utf8' })
    expect((await run('ulimit -n; ulimit -c', undefined)).stdout.text).toBe(own)
  }, T)

  memoryCgroup.it('a program touching 2 GiB under memoryBytes: 256 MiB ends with the memory limit, and the host lives on', async () => {
    const hog = "perl -e '$x = \"a\" x (2 * 1024 ** 3); print length $x'"
    const result = await run(hog, { memoryBytes: 256 * MIB })
    expect({ limit: result.limit, stdout: result.stdout.text }).toEqual({ limit: 'memory', stdout: '' })
    const survived = await run(`${hog}; echo survived`, { memoryBytes: 256 * MIB })
    expect({ stdout: survived.stdout.text, limit: survived.limit, limitsHit: survived.limitsHit }).toEqual({ stdout: 'survived\n', limit: null, limitsHit: ['memory'] })
  }, T)

  pidsCgroup.it('a fork bomb under processes: 64 leaves the host responsive, ends at its timeout, and reports processes reached', async () => {
    const bomb = await execute({ command: 'bomb() { while :; do bomb & done; }; bomb', limits: { processes: 64 }, timeoutMs: 3000, graceMs: 200 })
    const started = Date.now()
    const alive = await run('echo alive', undefined)
    expect(alive.stdout.text).toBe('alive\n')
    // The event loop kept turning meanwhile.
    const tick = Date.now()
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(Date.now() - tick).toBeLessThan(1000)
    const result = await bomb.result()
    expect({ timedOut: result.timedOut, limitsHit: result.limitsHit }).toEqual({ timedOut: true, limitsHit: ['processes'] })
    expect(Date.now() - started).toBeLessThan(15_000)
  }, T)

  pidsCgroup.it('the classic fork bomb under processes: 50 never reads as a plain success, ten runs: processes reached, or the processes it left ended and counted', async () => {
    const outcomes = []
    for (let run = 0; run < 10; run++) {
      const result = await (await execute({ command: ':(){ :|:& };:', limits: { processes: 50 }, timeoutMs: 5000, graceMs: 200 })).result()
      outcomes.push({ limitsHit: result.limitsHit, endedAfterExit: result.endedAfterExit })
    }
    expect(outcomes.filter(({ limitsHit, endedAfterExit }) => !limitsHit.includes('processes') && endedAfterExit === 0)).toEqual([])
  }, T)

  pidsCgroup.it('processes: 1, the least there is, runs a shell and the lone command it execs', async () => {
    for (const command of ['true', 'sh -c true']) {
      const result = await run(command, { processes: 1 })
      expect({ command, exitCode: result.exitCode, limitsHit: result.limitsHit }).toEqual({ command, exitCode: 0, limitsHit: [] })
    }
  }, T)

  pidsCgroup.it('node -e under processes: 0 is refused at spawn, runs at 7, the floor docs/process.md gives, and below it ends without its output, processes reached', async () => {
    const node = `'${process.execPath}' -e 'console.log("ran")'`
    await expect(execute({ command: node, limits: { processes: 0 } })).rejects.toMatchObject({
      code: 'ERR_SHELL_EXEC_INVALID_SPEC',
      message: expect.stringMatching(/limits\.processes: must be a whole number from 1 .*; 1 because a command's shell is one process .*node 7/),
    })
    const floor = await run(node, { processes: 7 })
    expect({ exitCode: floor.exitCode, stdout: floor.stdout.text, limitsHit: floor.limitsHit }).toEqual({ exitCode: 0, stdout: 'ran\n', limitsHit: [] })
    // Node's threads do not start: it aborts, or waits for them until the timeout.
    const under = await execute({ command: node, limits: { processes: 3 }, timeoutMs: 3000, graceMs: 200 })
    const result = await under.result()
    expect({ stdout: result.stdout.text, exitCode: result.exitCode, limitsHit: result.limitsHit }).toEqual({ stdout: '', exitCode: null, limitsHit: ['processes'] })
  }, T)

  noPidsCgroup.it('processes without a pids controller is refused before anything runs, naming the limit and the reason', async () => {
    await expect(execute({ command: 'true', limits: { processes: 64 } })).rejects.toMatchObject({
      code: 'ERR_SHELL_EXEC_UNSUPPORTED',
      message: expect.stringMatching(/^limits\.processes is not supported here: it needs a cgroup with the pids controller/),
    })
  }, T)

  linux.it('a host whose supervisor keeps out of cgroups (the sweep tier) refuses processes, and holds memory per process', () => {
    const script = `
      const { execute, limitMechanisms } = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'index.js'))})
      execute({ command: 'true', limits: { processes: 64 } }).then(
        () => console.log(JSON.stringify({ refused: null })),
        (error) => console.log(JSON.stringify({ refused: error.code, message: error.message, memory: limitMechanisms()[0].mechanism })),
      )`
    const child = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, DSH_SHELL_ENV_NO_CGROUPS: '1' }, encoding: 'utf8', timeout: 30_000 })
    expect(child.stderr).toBe('')
    expect(JSON.parse(child.stdout)).toEqual({
      refused: 'ERR_SHELL_EXEC_UNSUPPORTED',
      message: expect.stringMatching(/^limits\.processes is not supported here: it needs a cgroup with the pids controller/),
      memory: 'RLIMIT_DATA (per process, private memory only)',
    })
  }, T)

  posix.it('no limits: nothing is set and nothing is named', async () => {
    const result = await run('ulimit -f; ulimit -t', undefined)
    expect(result.stdout.text).toBe('unlimited\nunlimited\n')
    expect({ limit: result.limit, limitsHit: result.limitsHit }).toEqual({ limit: null, limitsHit: [] })
  }, T)
})

describe('limitMechanisms()', () => {
  posix.it('names every limit with this host\'s mechanism or the reason it is refused, and the values given', () => {
    const entries = limitMechanisms({ cpuSeconds: 30, fileBytes: 1024 })
    expect(entries.map((entry) => [entry.limit, entry.field, entry.value])).toEqual([
      ['memory', 'memoryBytes', null],
      ['processes', 'processes', null],
      ['cpu', 'cpuSeconds', 30],
      ['fileSize', 'fileBytes', 1024],
      ['openFiles', 'openFiles', null],
    ])
    for (const entry of entries) expect((entry.mechanism === null) !== (entry.refused === null)).toBe(true)
    expect(entries.find((entry) => entry.limit === 'cpu').mechanism).toBe('RLIMIT_CPU (per process)')
    if (LINUX) expect(entries.find((entry) => entry.limit === 'memory').mechanism).toMatch(/^(cgroup v[12] memory\.\S+ \(whole command\)|RLIMIT_DATA \(per process, private memory only\))$/)
  })

  posix.it('says what each mechanism covers and what a command can do against it: an rlimit is held, a cgroup file its user owns is reported when rewritten', () => {
    for (const entry of limitMechanisms()) {
      if (entry.mechanism === null) {
        expect({ covers: entry.covers, tampering: entry.tampering, tamperingNote: entry.tamperingNote }).toEqual({ covers: null, tampering: null, tamperingNote: null })
        continue
      }
      expect(entry.covers).toEqual(expect.any(String))
      expect(entry.tamperingNote).toEqual(expect.any(String))
      if (/^cgroup/.test(entry.mechanism)) expect([entry.limit, entry.tampering, entry.tamperingNote]).toEqual([entry.limit, 'reported', expect.stringContaining('limitsTampered')])
      // A root host's commands hold CAP_SYS_RESOURCE where its bounding set has it: then they can raise an rlimit.
      if (/^RLIMIT/.test(entry.mechanism)) expect(['held', 'unreported']).toContain(entry.tampering)
    }
    const processes = limitMechanisms().find((entry) => entry.limit === 'processes')
    if (processes.mechanism !== null && LINUX) expect(processes.covers).toContain('each thread counts as one')
  })

  it.each([
    [{ memoryBytes: 1024 }, 'limits.memoryBytes', /from 1048576/],
    [{ processes: 0 }, 'limits.processes', /from 1 to 2\^53 - 1 \(got 0\); 1 because a command's shell is one process .*each thread counts/],
    [{ cpuSeconds: 1.5 }, 'limits.cpuSeconds', /whole number/],
    [{ openFiles: 2 }, 'limits.openFiles', /from 3 /],
    [{ fileBytes: '1M' }, 'limits.fileBytes', /number/],
    [{ memory: 1 }, 'limits.memory', /not a spec field/],
  ])('refuses %j as execute() does, naming %s', async (limits, field, reason) => {
    const matcher = { code: 'ERR_SHELL_EXEC_INVALID_SPEC', message: expect.stringContaining(field) }
    expect(() => limitMechanisms(limits)).toThrow(expect.objectContaining(matcher))
    expect(() => limitMechanisms(limits)).toThrow(reason)
    await expect(execute({ command: 'true', limits })).rejects.toMatchObject(matcher)
  })
})
