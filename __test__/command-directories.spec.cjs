'use strict'

// Command directories are trusted at every use, not only at register(): a
// directory that someone else can now write, or that lies inside or leads
// through such a directory, is left out of PATH at each collection, with a
// coded warning once per directory and the reason in untrustedDirectories()
// (and `dsh-shell-env explain`).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ShellEnvRegistry, execute } = require('..')
const { expectCode, thrown, trustedScratch } = require('./helpers.cjs')
const { gate, posix } = require('./platform.cjs')

const ROOT_USER = process.getuid?.() === 0
/** Making a directory another user's takes root. */
const asRoot = gate(ROOT_USER, 'root, to create a directory as another user')
const NOBODY = 65534
const HOME = path.resolve('/tmp/dsh-command-dirs-spec-home')

/** The warnings emitted while `fn` runs (and the ticks after it). */
async function warningsDuring(fn) {
  const warnings = []
  const listener = (warning) => warnings.push(warning)
  // Node's own process: under Jest a test file's `process` is a copy, and
  // process.emitWarning reports on the real one.
  const { process: nodeProcess } = require('../binding.js').hostGlobal()
  nodeProcess.on('warning', listener)
  try {
    await fn()
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    nodeProcess.off('warning', listener)
  }
  return warnings.filter((warning) => warning.code === 'DSH_SHELL_ENV_UNTRUSTED_DIRECTORY')
}

function registryWith(...directories) {
  const registry = new ShellEnvRegistry({ dshHome: HOME })
  registry.register({ name: 'tools', variables: {}, commandDirectories: directories, resolve: () => ({}) })
  return registry
}

const pathOf = (snapshot) => snapshot.PATH.split(path.delimiter)

posix.describe('command directories are trusted at every use', () => {
  let scratch
  beforeEach(() => {
    scratch = trustedScratch('dsh-command-dirs-spec-')
  })
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }))

  it('one inside a directory others can write is refused at register() and left out when it becomes so later', async () => {
    // Not made yet in a sticky directory (1777, like /tmp): whoever creates it first owns it.
    expectCode(thrown(() => registryWith('/tmp/dsh-command-dirs-spec-bin')), 'ERR_SHELL_ENV_INVALID_DIRECTORY', 'is inside /tmp, which is writable by its group or by others')

    const shared = path.join(scratch, 'shared')
    const bin = path.join(shared, 'bin')
    const good = path.join(scratch, 'good')
    const registry = registryWith(bin, good)
    expect(pathOf(registry.collect({}, { inheritedPath: '/usr/bin' }))).toEqual([bin, good, '/usr/bin'])

    fs.mkdirSync(bin, { recursive: true })
    fs.chmodSync(shared, 0o777)
    let snapshot
    const warnings = await warningsDuring(() => {
      snapshot = registry.collect({}, { inheritedPath: '/usr/bin' })
    })
    expect(pathOf(snapshot)).toEqual([good, '/usr/bin'])
    expect(warnings.map((warning) => [warning.name, warning.message])).toEqual([
      ['DshShellEnvWarning', `command directory ${bin} of contributor tools is inside ${shared}, which is writable by its group or by others, so anyone could plant a command there; it is left out of PATH`],
    ])
    expect(registry.untrustedDirectories()).toEqual([
      { contributor: 'tools', directory: bin, reason: `is inside ${shared}, which is writable by its group or by others, so anyone could plant a command there` },
    ])

    // Once per directory and reason; every collection still leaves it out.
    const again = await warningsDuring(async () => {
      snapshot = await registry.collectAsync({}, { inheritedPath: '/usr/bin' })
    })
    expect(again).toEqual([])
    expect(pathOf(snapshot)).toEqual([good, '/usr/bin'])

    // Trusted again: back on PATH.
    fs.chmodSync(shared, 0o755)
    expect(pathOf(registry.collect({}, { inheritedPath: '/usr/bin' }))).toEqual([bin, good, '/usr/bin'])
    expect(registry.untrustedDirectories()).toEqual([])
  })

  it('collectAsync() warns of one it leaves out as collect() does', async () => {
    const shared = path.join(scratch, 'shared')
    const bin = path.join(shared, 'bin')
    const registry = registryWith(bin)
    fs.mkdirSync(bin, { recursive: true })
    fs.chmodSync(shared, 0o777)
    let snapshot
    const warnings = await warningsDuring(async () => {
      snapshot = await registry.collectAsync({}, { inheritedPath: '/usr/bin' })
    })
    expect(pathOf(snapshot)).toEqual(['/usr/bin'])
    expect(warnings.map((warning) => warning.message)).toEqual([
      `command directory ${bin} of contributor tools is inside ${shared}, which is writable by its group or by others, so anyone could plant a command there; it is left out of PATH`,
    ])
  })

  it('a directory from mkdtemp in the system temporary directory is trusted: its sticky parent cannot take it away', () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'bin-'))
    try {
      const registry = registryWith(bin)
      expect(pathOf(registry.collect({}, { inheritedPath: '/usr/bin' }))).toEqual([bin, '/usr/bin'])
      expect(registry.untrustedDirectories()).toEqual([])
    } finally {
      fs.rmSync(bin, { recursive: true, force: true })
    }
  })

  it('a sticky directory others can write (1777, like /tmp) is trusted as the parent of one of ours, not as the directory itself', () => {
    const shared = path.join(scratch, 'shared')
    const bin = path.join(shared, 'bin')
    fs.mkdirSync(bin, { recursive: true })
    fs.chmodSync(shared, 0o1777)
    const registry = registryWith(bin)
    expect(pathOf(registry.collect({}, { inheritedPath: '/usr/bin' }))).toEqual([bin, '/usr/bin'])
    expectCode(thrown(() => registryWith(shared)), 'ERR_SHELL_ENV_INVALID_DIRECTORY', `command directory "${shared}": is writable by its group or by others`)
    expectCode(thrown(() => registryWith(path.join(shared, 'later'))), 'ERR_SHELL_ENV_INVALID_DIRECTORY', `is inside ${shared}, which is writable`)
  })

  it('a link to a directory others can write is judged by where it leads', async () => {
    const open = path.join(scratch, 'open')
    fs.mkdirSync(open)
    fs.chmodSync(open, 0o777)
    const link = path.join(scratch, 'bin')
    fs.symlinkSync(open, link)
    expectCode(thrown(() => registryWith(link)), 'ERR_SHELL_ENV_INVALID_DIRECTORY', `is inside ${open}, which is writable`)
  })

  asRoot.it('one in the system temporary directory that belongs to another user is refused', () => {
    const theirs = fs.mkdtempSync(path.join(os.tmpdir(), 'bin-'))
    try {
      fs.chownSync(theirs, NOBODY, NOBODY)
      expectCode(thrown(() => registryWith(theirs)), 'ERR_SHELL_ENV_INVALID_DIRECTORY', `command directory "${theirs}": is owned by another user`)
    } finally {
      fs.rmSync(theirs, { recursive: true, force: true })
    }
  })

  asRoot.it('one created after register() by another user is left out of PATH, also for execute({ registry })', async () => {
    const bin = path.join(scratch, 'bin')
    const registry = registryWith(bin)
    fs.mkdirSync(bin)
    fs.chownSync(bin, NOBODY, NOBODY)
    let result
    const warnings = await warningsDuring(async () => {
      const execution = await execute({ command: ['/bin/sh', '-c', 'printf %s "$PATH"'], registry })
      result = await execution.result()
    })
    expect(result.stdout.text.split(path.delimiter)).not.toContain(bin)
    expect(warnings.map((warning) => warning.message)).toEqual([
      `command directory ${bin} of contributor tools is owned by another user; it is left out of PATH`,
    ])
  })
})
