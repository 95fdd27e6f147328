'use strict'

// What memoryBytes covers, tier by tier, with real processes: 128 MiB of
// four kinds of memory under a 64 MiB limit (private memory, a MAP_SHARED
// anonymous mapping, a memfd, a file in /dev/shm), each in a host of its
// own (fixtures/memory-kinds-host.cjs).
// - The rlimit tier (RLIMIT_DATA; a host whose supervisor keeps out of
//   cgroups): private memory only, as limitMechanisms() and the docs say. The
//   private allocation fails (Python's MemoryError), and the result does not
//   name memory: nothing tells the package that the limit refused it. The
//   other three fill their 128 MiB.
// - The cgroup tier, where the memory controller reaches commands: all four
//   are held, and the result names memory.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES } = require('./helpers.cjs')
const { gate, LINUX } = require('./platform.cjs')

const INDEX = path.join(ROOT, 'lib', 'index.js')
/** A python3 that has memfd_create (3.8 and later), by its own path (a version manager's shim would fork). */
const PYTHON = (() => {
  if (!LINUX) return undefined
  const found = spawnSync('python3', ['-c', 'import os, sys; os.memfd_create; print(sys.executable)'], { encoding: 'utf8' })
  return found.status === 0 ? found.stdout.trim() : undefined
})()
const SHM = fs.existsSync('/dev/shm')

const ready = LINUX && PYTHON !== undefined && SHM && fs.existsSync(path.join(ROOT, 'dsh-shell-env-supervisor'))
const kinds = gate(ready, 'Linux with the supervisor, /dev/shm and a python3 with os.memfd_create')
/** The memory controller reaches this host's commands (as in limits.spec.cjs). */
const memoryCgroup = gate(
  ready && /^cgroup/.test(require(INDEX).limitMechanisms().find((entry) => entry.limit === 'memory')?.mechanism ?? ''),
  'a cgroup with the memory controller for commands',
)

/** Runs the host with `env` added; its report. */
function host(env) {
  const shmFile = path.join('/dev/shm', `dsh-limits-coverage-${process.pid}-${Object.keys(env).length}`)
  try {
    const child = spawnSync(process.execPath, [path.join(FIXTURES, 'memory-kinds-host.cjs'), INDEX, PYTHON, shmFile], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 120_000,
    })
    expect(child.stderr).toBe('')
    return JSON.parse(child.stdout)
  } finally {
    // The cgroup tier may kill the shell before it removes its file.
    fs.rmSync(shmFile, { force: true })
  }
}

const T = 150_000

kinds.describe('memoryBytes over four kinds of memory', () => {
  it('the rlimit tier holds private memory only: the private allocation fails unnamed, shared, memfd and /dev/shm memory fill 128 MiB under 64 MiB', () => {
    const { mechanism, covers, results } = host({ DSH_SHELL_ENV_NO_CGROUPS: '1' })
    expect(mechanism).toBe('RLIMIT_DATA (per process, private memory only)')
    expect(covers).toMatch(/^private memory only, .*not MAP_SHARED anonymous memory, memfds .*\/dev\/shm/)
    expect(results.private).toEqual({ exitCode: 1, signal: null, limit: null, limitsHit: [], limitsTampered: [], stdout: '', error: 'MemoryError' })
    for (const kind of ['sharedAnonymous', 'memfd', 'devShm']) {
      expect({ kind, ...results[kind] }).toEqual({ kind, exitCode: 0, signal: null, limit: null, limitsHit: [], limitsTampered: [], stdout: 'filled\n', error: '' })
    }
  }, T)

  memoryCgroup.it('the cgroup tier holds all four, and each result names memory', () => {
    const { mechanism, results } = host({})
    expect(mechanism).toMatch(/^cgroup v[12] memory\.(max|limit_in_bytes) \(whole command\)$/)
    for (const [kind, result] of Object.entries(results)) {
      const named = result.limit === 'memory' || result.limitsHit.includes('memory')
      expect({ kind, filled: result.stdout.includes('filled'), named, limitsTampered: result.limitsTampered }).toEqual({ kind, filled: false, named: true, limitsTampered: [] })
    }
  }, T)
})
