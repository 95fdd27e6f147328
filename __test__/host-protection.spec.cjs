'use strict'

// A command cannot walk around the scrub through /proc: once a host starts a
// command it is non-dumpable (Linux), so another process of its user, its
// commands included, cannot read /proc/<host>/environ, where the host's
// initial environment keeps every credential the scrub removed, even after
// process.env deleted it. DSH_SHELL_ENV_DUMPABLE=1 opts out. Root's
// CAP_SYS_PTRACE reads any process, so when the suite runs as root the host
// runs as uid 65534 (setpriv), from a copy of the addon that uid can read.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES, lastJsonLine } = require('./helpers.cjs')
const { processes } = require('./process-helpers.cjs')
const { gate, LINUX } = require('./platform.cjs')
const { execute } = require('..')

const ROOT_USER = process.getuid?.() === 0
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((file) => fs.existsSync(file))
const ADDON = fs.readdirSync(ROOT).find((name) => name.endsWith('.node'))
const NOBODY = 65534

const protectedHost = gate(
  LINUX && ADDON !== undefined && (!ROOT_USER || SETPRIV !== undefined),
  'Linux, the built addon, and setpriv when the suite runs as root',
)

/** The binding, the addon and the supervisor copied to a directory every uid can read. */
function readableCopy() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-host-protection-'))
  fs.chmodSync(dir, 0o755)
  for (const name of ['binding.js', ADDON, 'dsh-shell-env-supervisor', 'environ-reader.cjs']) {
    const from = name === 'environ-reader.cjs' ? path.join(FIXTURES, name) : path.join(ROOT, name)
    if (!fs.existsSync(from)) continue
    fs.copyFileSync(from, path.join(dir, name))
    fs.chmodSync(path.join(dir, name), 0o755)
  }
  return dir
}

/** Runs the environ-reader host as an unprivileged uid; its report. */
function readHostEnviron(dir, env = {}) {
  const host = [process.execPath, path.join(dir, 'environ-reader.cjs'), path.join(dir, 'binding.js')]
  const argv = ROOT_USER ? [SETPRIV, `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...host] : host
  const result = spawnSync(argv[0], argv.slice(1), {
    cwd: dir,
    env: { PATH: process.env.PATH, SPEC_HOST_API_TOKEN: 'sk-host-credential-0123456789abcdef', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  })
  expect(result.stderr).toBe('')
  expect(result.status).toBe(0)
  return lastJsonLine(result.stdout)
}

protectedHost.describe('the host after its first command', () => {
  let dir
  beforeAll(() => {
    dir = readableCopy()
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it('cannot be read through /proc/<host>/environ by its command, running as an unprivileged uid', () => {
    const report = readHostEnviron(dir)
    expect(report.uid).not.toBe(0)
    expect(report).toEqual(expect.objectContaining({ leaked: false, readable: false }))
    expect(report.exitCode).not.toBe(0)
    expect(report.stderr).toMatch(/Permission denied/)
  })

  it('DSH_SHELL_ENV_DUMPABLE=1 keeps it dumpable: the same command then reads the credential', () => {
    const report = readHostEnviron(dir, { DSH_SHELL_ENV_DUMPABLE: '1' })
    expect(report).toEqual(expect.objectContaining({ leaked: true, readable: true, exitCode: 0 }))
  })
})

protectedHost.describe('the supervisor', () => {
  it('starts with an empty environment', async () => {
    await (await execute({ command: ['/bin/true'] })).result()
    // Its comm, in /proc/<pid>/stat: `exe` is out of reach of a non-root host too.
    const comm = (pid) => fs.readFileSync(`/proc/${pid}/stat`, 'utf8').match(/\((.*)\)/)?.[1]
    const supervisor = processes().find((entry) => entry.ppid === process.pid && comm(entry.pid) === 'dsh-shell-env-s')
    expect(supervisor).toBeDefined()
    // Non-dumpable too: only root reads it.
    if (ROOT_USER) expect(fs.readFileSync(`/proc/${supervisor.pid}/environ`, 'utf8')).toBe('')
    else expect(() => fs.readFileSync(`/proc/${supervisor.pid}/environ`)).toThrow(expect.objectContaining({ code: 'EACCES' }))
  })
})
