'use strict'

// Where spill files may go and how long they live (docs/process.md): an
// unusable spillDir is refused at the call, like a workdir; a host's spill
// directory is judged alive by the lock its host holds, not by its pid, so a
// host in another pid namespace keeps its files through another host's sweep.

const { execFileSync, spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES, rejected, expectCode } = require('./helpers.cjs')
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
    // Its lock is released with it: a new host's sweep removes the directory.
    execFileSync(process.execPath, ['-e', `require(${JSON.stringify(ROOT)}).execute(${JSON.stringify(spilling(base))}).then((e) => e.result())`])
    expect(fs.existsSync(path.dirname(report.spillPath))).toBe(false)
  }, 60_000)
})
