'use strict'

// Where spill files may go and how long they live (docs/process.md): an
// unusable spillDir is refused at the call, like a workdir; a host's spill
// directory is judged alive by the lock its host holds, not by its pid, so a
// host in another pid namespace keeps its files through another host's sweep.

const { execFileSync, spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES, rejected, expectCode, runNode, lastJsonLine } = require('./helpers.cjs')
const { waitFor } = require('./process-helpers.cjs')
const { gate, posix, LINUX } = require('./platform.cjs')
const { execute } = require('..')

const UNSHARE = ['/usr/bin/unshare', '/bin/unshare'].find((file) => fs.existsSync(file))
/** A pid namespace of its own takes root (CAP_SYS_ADMIN) and unshare(1). */
const pidNamespaces = gate(LINUX && process.getuid?.() === 0 && UNSHARE !== undefined, 'root and unshare(1), for a pid namespace')

const spilling = (spillDir) => ({ command: 'head -c 5000 /dev/zero | tr "\\0" o', stdoutMaxBytes: 100, spillDir })

posix.describe('spillDir', () => {
  let base
  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-spill-spec-'))
  })
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }))

  it.each([
    ['missing', () => path.join(base, 'missing'), 'ENOENT', 'does not exist'],
    ['a file', () => fs.writeFileSync(path.join(base, 'file'), '') ?? path.join(base, 'file'), 'ENOTDIR', 'is not a directory'],
    ...(LINUX ? [['/proc, where no directory can be made', () => '/proc', 'ENOENT', 'cannot hold spill files: no directory can be made in it']] : []),
  ])('%s is refused at the call with ERR_SHELL_EXEC_INVALID_SPILL_DIR and the OS error as cause; nothing runs', async (_title, make, code, words) => {
    const dir = make()
    const marker = path.join(base, 'ran')
    const error = await rejected(() => execute({ ...spilling(dir), command: `touch ${marker}` }))
    expectCode(error, 'ERR_SHELL_EXEC_INVALID_SPILL_DIR', `spillDir '${dir}' ${words} (${code})`)
    expect(error.cause).toEqual(expect.objectContaining({ code, syscall: 'stat', path: dir }))
    expect(fs.existsSync(marker)).toBe(false)
  })

  it('a usable one holds the spill file', async () => {
    const result = await (await execute(spilling(base))).result()
    expect(path.dirname(path.dirname(result.stdout.spillPath))).toBe(base)
    expect(fs.readFileSync(result.stdout.spillPath, 'utf8')).toBe('o'.repeat(5000))
  })
})

posix.describe("the sweep of dead hosts' spill directories", () => {
  let base
  let servers = []
  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-spill-sweep-spec-'))
  })
  afterEach(async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
    servers = []
    fs.rmSync(base, { recursive: true, force: true })
  })

  /** A directory named as a host's spill directory, as a command of the same user could make one. */
  const hostDir = (n) => {
    const dir = path.join(base, `dsh-shell-env-${n}-0123456789abcde${n}`)
    fs.mkdirSync(dir, { mode: 0o700 })
    return dir
  }
  const mkfifo = (file) => execFileSync('mkfifo', [file])
  const listen = (file) => new Promise((resolve) => servers.push(net.createServer().listen(file, resolve)))

  it('opens nothing that can block: a FIFO, a socket or a symlink as a lock is skipped and named under DEBUG, a dead host\'s FIFO, socket and symlink go with its directory, and the host exits promptly', async () => {
    const fifoLock = hostDir(1)
    mkfifo(path.join(fifoLock, 'lock'))
    const socketLock = hostDir(2)
    await listen(path.join(socketLock, 'lock'))
    const linkLock = hostDir(3)
    mkfifo(path.join(base, 'elsewhere'))
    fs.symlinkSync(path.join(base, 'elsewhere'), path.join(linkLock, 'lock'))
    const dead = hostDir(4)
    fs.writeFileSync(path.join(dead, 'lock'), '')
    mkfifo(path.join(dead, '1-42.stdout'))
    fs.symlinkSync(path.join(base, 'elsewhere'), path.join(dead, '2-42.stderr'))
    const deadSocket = path.join(dead, '3-42.stdout')
    await listen(deadSocket)
    const child = runNode([path.join(FIXTURES, 'sweeping-host.cjs'), ROOT, base, JSON.stringify([dead])], {
      env: { DEBUG: 'dsh-shell-env' },
      timeout: 20_000,
      // A host stuck on a FIFO would not answer SIGTERM either.
      killSignal: 'SIGKILL',
    })
    expect(fs.existsSync(deadSocket)).toBe(false)
    expect({ status: child.status, signal: child.signal }).toEqual({ status: 0, signal: null })
    expect(lastJsonLine(child.stdout)).toEqual({ exitCode: 0, spilled: true, gone: [dead] })
    for (const [dir, kind] of [
      [fifoLock, 'not a regular file (a FIFO)'],
      [socketLock, 'cannot be opened'],
      [linkLock, 'cannot be opened'],
    ]) {
      expect(child.stderr).toContain(`dsh-shell-env: spill sweep skipped ${path.join(dir, 'lock')}: ${kind}`)
      expect(fs.existsSync(dir)).toBe(true)
    }
  }, 30_000)
})

/** A mount namespace of its own takes root (CAP_SYS_ADMIN) and unshare(1). */
const mountNamespaces = gate(LINUX && process.getuid?.() === 0 && UNSHARE !== undefined, 'root and unshare(1), for a private tmpfs')

mountNamespaces.describe('a spill that fails', () => {
  let base
  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-spill-full-spec-'))
  })
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }))

  it('on a full disk (a 1 MiB tmpfs) is named on the stream as spillError ENOSPC; the tail kept in memory is intact, onOutput saw every byte, and the bash tool\'s text says the output was lost', () => {
    // The tmpfs is mounted in a private mount namespace: nothing is mounted outside it.
    const script = `mount -t tmpfs -o size=1m tmpfs "$1" && exec "$0" "$2" "$1"`
    const child = spawnSync(UNSHARE, ['-m', '--propagation', 'private', 'sh', '-c', script, process.execPath, base, path.join(FIXTURES, 'spill-full-disk.mjs')], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      killSignal: 'SIGKILL',
    })
    expect({ status: child.status, stderr: child.stderr }).toEqual({ status: 0, stderr: '' })
    const report = lastJsonLine(child.stdout)
    expect(report).toEqual({
      exitCode: 0,
      truncated: true,
      spillPath: null,
      spillError: { code: 'ENOSPC', message: expect.stringContaining('the spill file could not be written (ENOSPC') },
      tailLength: 64_000,
      tailIntact: true,
      onOutputSawEveryByte: true,
      toolTextEnd: '\n[output lost: the spill file could not be written (ENOSPC); only the tail above was kept]\n\n[output truncated; full output: (unavailable)]',
    })
    expect(fs.readdirSync(base)).toEqual([])
  }, 90_000)
})

pidNamespaces.describe('spill directories of live hosts', () => {
  let base
  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-spill-ns-spec-'))
  })
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }))

  /** A host in a pid namespace of its own, whose pid there (300001) is nobody's here; its report. */
  async function hostInItsOwnNamespace() {
    const script = `echo 300000 > /proc/sys/kernel/ns_last_pid; "$0" "$@"`
    const child = spawn(UNSHARE, ['--pid', '--fork', '--mount-proc', 'sh', '-c', script, process.execPath, path.join(FIXTURES, 'spill-host.cjs'), ROOT, base], {
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
    })
    await waitFor(() => out.includes('\n'), 'the namespaced host to report its spill file', 20_000)
    return { child, report: JSON.parse(out.split('\n')[0]) }
  }

  it("a host's in another pid namespace survives another host's sweep, and goes at the next sweep once that host ended", async () => {
    const { child, report } = await hostInItsOwnNamespace()
    try {
      expect(report.pid).toBe(300001)
      expect(fs.existsSync(`/proc/${report.pid}`) && fs.readFileSync(`/proc/${report.pid}/cmdline`, 'utf8').includes('spill-host')).toBe(false)
      // This host's first spill into the same base sweeps it.
      await (await execute(spilling(base))).result()
      expect(fs.readFileSync(report.spillPath, 'utf8')).toBe('o'.repeat(5000))
    } finally {
      child.stdin.end()
      await new Promise((resolve) => child.once('exit', resolve))
    }
    // Its lock is released with it: a new host's sweep (in the background) removes the directory.
    const next = runNode([path.join(FIXTURES, 'sweeping-host.cjs'), ROOT, base, JSON.stringify([path.dirname(report.spillPath)])])
    expect(lastJsonLine(next.stdout)).toEqual({ exitCode: 0, spilled: true, gone: [path.dirname(report.spillPath)] })
  }, 60_000)
})
