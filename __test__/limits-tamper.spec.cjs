'use strict'

// A command that rewrites its own cgroup limits, on a host whose user owns
// its cgroup subtree (a systemd user session, a container with a delegated
// tree): the leaves the supervisor makes belong to the command's own user,
// which no mode bit keeps out. The package cannot stop the write; it must
// not be silent about it: the result names the limit in limitsTampered, and
// limitMechanisms() says so (tampering: 'reported').
//
// Made here as root: a subtree in each hierarchy the supervisor uses (the
// cgroup2 tree, and the v1 memory and pids hierarchies of the hybrid
// layout), owned by a uid no account and no other run uses (from this
// process's pid: the suite may run under several Node versions at once);
// the host (fixtures/limits-tamper-host.cjs) is moved into it and runs as
// that uid (setpriv). Skipped, saying why, without root, setpriv, perl, the
// supervisor, or the hybrid layout's v1 memory and pids hierarchies beside
// a cgroup2 tree. The cgroup v2 controllers' side of the same watch is
// checked by the core's unit tests over plain files (supervisor::cgroup).

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES } = require('./helpers.cjs')
const { gate, LINUX } = require('./platform.cjs')

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((file) => fs.existsSync(file))
const PERL = ['/usr/bin/perl', '/bin/perl'].find((file) => fs.existsSync(file))
const ADDON = fs.readdirSync(ROOT).find((name) => name.endsWith('.node'))
/** A uid of this run's own. */
const UID = 1_100_000 + process.pid
const NAME = `dsh-delegated-${UID}`
const MIB = 1024 * 1024

/** This process's directory in the hierarchy `mount` of `controller` (`''` for cgroup2), from /proc/self/cgroup. */
function ownDirectory(mount, controller) {
  const lines = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n')
  const line = lines.find((entry) => {
    const [, controllers] = entry.split(':')
    return controller === '' ? entry.startsWith('0::') : controllers?.split(',').includes(controller)
  })
  return line === undefined ? undefined : path.join(mount, line.split(':').slice(2).join(':'))
}

/** The mount point of the v1 hierarchy of `controller`, or of cgroup2 for `''`. */
function mountOf(controller) {
  if (!LINUX) return undefined
  for (const line of fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [before, after] = line.split(' - ')
    if (after === undefined) continue
    const [type, , options] = after.split(' ')
    const point = before.split(' ')[4]
    if (controller === '' && type === 'cgroup2') return point
    if (controller !== '' && type === 'cgroup' && options.split(',').includes(controller)) return point
  }
  return undefined
}

const MOUNTS = { unified: mountOf(''), memory: mountOf('memory'), pids: mountOf('pids') }
const hybrid = Object.values(MOUNTS).every((mount) => mount !== undefined)

const delegated = gate(
  LINUX &&
    process.getuid?.() === 0 &&
    SETPRIV !== undefined &&
    PERL !== undefined &&
    ADDON !== undefined &&
    hybrid &&
    fs.existsSync(path.join(ROOT, 'dsh-shell-env-supervisor')),
  'Linux as root, setpriv, perl, the supervisor, and the hybrid layout (v1 memory and pids hierarchies beside a cgroup2 tree), where a subtree is delegated to a uid of its own',
)

/** Every process of `uid`, from /proc/<pid>/status. */
function processesOf(uid) {
  const pids = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1]) === uid) pids.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

/** Removes a cgroup directory and what the supervisor left in it, deepest first. */
function removeCgroup(directory) {
  if (!fs.existsSync(directory)) return
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    if (entry.isDirectory()) removeCgroup(path.join(directory, entry.name))
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      fs.rmdirSync(directory)
      return
    } catch {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20)
    }
  }
}

delegated.describe('a command that rewrites its own cgroup limits, its user owning its cgroup subtree', () => {
  let dir
  let subtrees
  let report

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-limits-tamper-'))
    fs.chmodSync(dir, 0o755)
    for (const [name, from] of [
      ['binding.js', ROOT],
      [ADDON, ROOT],
      ['dsh-shell-env-supervisor', ROOT],
      ['limits-tamper-host.cjs', FIXTURES],
    ]) {
      fs.copyFileSync(path.join(from, name), path.join(dir, name))
      fs.chmodSync(path.join(dir, name), 0o755)
    }
    // Delegated as systemd delegates: the directory and the files that move
    // processes belong to the user, whose own subdirectories are all theirs.
    subtrees = Object.entries(MOUNTS).map(([controller, mount]) => path.join(ownDirectory(mount, controller === 'unified' ? '' : controller), NAME))
    for (const subtree of subtrees) {
      fs.mkdirSync(subtree)
      for (const file of ['', 'cgroup.procs', 'tasks', 'cgroup.threads', 'cgroup.subtree_control']) {
        if (fs.existsSync(path.join(subtree, file))) fs.chownSync(path.join(subtree, file), UID, UID)
      }
    }
    // The host's shell joins each subtree as root, then becomes the user.
    const join = 'for procs; do echo $$ > "$procs" || exit 1; done; exec "$SETPRIV" --reuid="$DSH_UID" --regid="$DSH_UID" --clear-groups "$NODE" "$HOST" "$BINDING" "$MEMORY" "$PIDS"'
    const child = spawn('/bin/sh', ['-c', join, 'join', ...subtrees.map((subtree) => path.join(subtree, 'cgroup.procs'))], {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        SETPRIV,
        DSH_UID: String(UID),
        NODE: process.execPath,
        HOST: path.join(dir, 'limits-tamper-host.cjs'),
        BINDING: path.join(dir, 'binding.js'),
        MEMORY: MOUNTS.memory,
        PIDS: MOUNTS.pids,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk) => (out += chunk))
    child.stderr.on('data', (chunk) => (err += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000)
    const code = await new Promise((resolve) => child.once('close', resolve))
    clearTimeout(timer)
    if (code !== 0) throw new Error(`the host failed (${code}): ${err}`)
    report = JSON.parse(out)
  }, 180_000)

  afterAll(() => {
    for (const pid of processesOf(UID)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
    for (const subtree of subtrees ?? []) removeCgroup(subtree)
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('the host runs as the uid, in the cgroup tier on the v1 leaves, and limitMechanisms() says a rewrite is reported', () => {
    expect(report.uid).toBe(UID)
    expect(report.mechanisms).toEqual([
      { limit: 'memory', mechanism: 'cgroup v1 memory.limit_in_bytes (whole command)', tampering: 'reported' },
      { limit: 'processes', mechanism: 'cgroup v1 pids.max (whole command)', tampering: 'reported' },
    ])
  })

  it('the leaves the supervisor makes belong to the command\'s own user', () => {
    expect(report.cases.owner.stdout).toBe(`${UID}\n${UID}\n`)
  })

  it('a command that only reads its limits, and ones held by them, report nothing tampered', () => {
    const { readsItsLimits, memoryLeftAlone, processesLeftAlone } = report.cases
    expect(readsItsLimits).toMatchObject({ exitCode: 0, stdout: `${64 * MIB}\n9\n`, limitsTampered: [] })
    expect(memoryLeftAlone).toMatchObject({ limit: 'memory', stdout: '', limitsTampered: [] })
    expect(processesLeftAlone).toMatchObject({ limitsHit: ['processes'], limitsTampered: [] })
    // The reaper and the shell's 8 at most.
    expect(Number(processesLeftAlone.stdout)).toBeLessThanOrEqual(9)
  })

  it('memory lifted to no limit: 300 MiB under 64 MiB succeeds, and the result names memory as tampered with', () => {
    expect(report.cases.memoryLifted).toEqual({
      exitCode: 0,
      signal: null,
      timedOut: false,
      limit: null,
      limitsHit: [],
      limitsTampered: ['memory'],
      stdout: `${300 * MIB}\n`,
    })
  })

  it('pids.max lifted: 41 processes under processes 8 run, and the result names processes as tampered with', () => {
    const lifted = report.cases.processesLifted
    expect({ exitCode: lifted.exitCode, limitsHit: lifted.limitsHit, limitsTampered: lifted.limitsTampered }).toEqual({ exitCode: 0, limitsHit: [], limitsTampered: ['processes'] })
    // The 40, the shell and the reaper, at once.
    expect(Number(lifted.stdout)).toBeGreaterThanOrEqual(42)
  })

  it('memory lifted, used and put back as it was, its peak counters reset: still reported', () => {
    expect(report.cases.memoryLiftedAndPutBack).toMatchObject({ exitCode: 0, limitsTampered: ['memory'], stdout: `${300 * MIB}\n${64 * MIB}\n` })
  })

  it('the commands after one that lifted its limits, on the same reaper, are held by their own limits and report nothing tampered', () => {
    const { processesAfterALift, memoryAfterALift } = report.cases
    expect(processesAfterALift).toMatchObject({ limitsHit: ['processes'], limitsTampered: [] })
    expect(Number(processesAfterALift.stdout)).toBeLessThanOrEqual(9)
    expect(memoryAfterALift).toMatchObject({ limit: 'memory', stdout: '', limitsTampered: [] })
  })

  it('memory lifted and used, then the reaper watching the files killed: still reported', () => {
    expect(report.cases.memoryLiftedReaperKilled).toMatchObject({ signal: 'SIGKILL', limit: null, limitsTampered: ['memory'], stdout: `${300 * MIB}\n` })
  })
})
