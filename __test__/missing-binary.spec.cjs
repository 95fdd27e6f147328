'use strict'

// Without a loadable native binary every entry point says so in three lines:
// the platform and libc, what it looked for, and the command that fixes it
// (an install of the platform package, or a build in a clone); the loader's
// causes and what was tried only with DEBUG=dsh-shell-env or --debug. The
// command prints the three lines alone; require() and import throw the error,
// which Node, when nothing catches it, prints inside its own report.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT } = require('./helpers.cjs')
const { gate, LINUX } = require('./platform.cjs')

/** The message names the gnu/musl platform package, which only Linux has. */
const linux = gate(LINUX, 'Linux platform packages')

/** The loader and its manifest copied to a directory without any binary; `clone` adds a Cargo.toml. */
function withoutBinary(clone) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-missing-binary-'))
  fs.mkdirSync(path.join(dir, 'lib'))
  for (const file of ['lib/native.js', 'binding.js', 'package.json']) fs.copyFileSync(path.join(ROOT, file), path.join(dir, file))
  if (clone) fs.writeFileSync(path.join(dir, 'Cargo.toml'), '')
  return dir
}

function load(dir, env = {}, args = ['-e', "require('./lib/native.js')"]) {
  return spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, ...env } })
}

/** What the package ships (package.json's files) copied to a directory, without the native binary and the supervisor. */
function installedWithoutBinary() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-missing-binary-'))
  const manifest = require('../package.json')
  for (const entry of ['package.json', ...manifest.files]) fs.cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true })
  return dir
}

/** The error's own lines, out of Node's report of an uncaught error. */
const messageLines = (stderr) => stderr.split('\n').filter((line) => line.includes('dsh-shell-env') || line.startsWith('It ') || line.startsWith('In this') || line.startsWith('To fix'))

linux.describe('no native binary', () => {
  const dirs = []
  afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })))

  it('an installed package: three lines naming the platform, the platform package and the npm install that fixes it; no misleading advice', () => {
    const dir = withoutBinary(false)
    dirs.push(dir)
    const result = load(dir)
    expect(result.status).not.toBe(0)
    const version = require('../package.json').version
    expect(result.stderr).toMatch(/@deepseek-ai\/dsh-shell-env: no native binary for linux-x64-(gnu \(glibc [\d.]+\)|musl \(musl\)) \(ERR_SHELL_ENV_NATIVE_BINARY_MISSING\)\./)
    expect(result.stderr).toContain('It needs the package @deepseek-ai/dsh-shell-env-linux-')
    expect(result.stderr).toMatch(new RegExp(`To fix it: npm install @deepseek-ai/dsh-shell-env-linux-x64-(gnu|musl)@${version.replace(/\./g, '\\.')} \\(or reinstall without --omit=optional\\)\\.`))
    expect(result.stderr).not.toContain('npm has a bug')
    expect(result.stderr).not.toContain('Cannot find module')
    expect(result.stderr.trimEnd().split('\n').length).toBeLessThanOrEqual(9)
  })

  it('through require and import, Node reports the uncaught error around the three lines: where it was thrown before them, its version after', () => {
    const dir = withoutBinary(false)
    dirs.push(dir)
    fs.writeFileSync(path.join(dir, 'load.mjs'), "import './lib/native.js'\n")
    for (const args of [['-e', "require('./lib/native.js')"], ['load.mjs']]) {
      const lines = load(dir, {}, args).stderr.trimEnd().split('\n')
      const first = lines.findIndex((line) => line.includes('no native binary for'))
      expect(first).toBeGreaterThan(0)
      expect(lines[first + 1]).toMatch(/^It needs the package /)
      expect(lines[first + 2]).toMatch(/^To fix it: npm install /)
      expect(lines[lines.length - 1]).toMatch(/^Node\.js v/)
      expect(lines.length).toBeLessThanOrEqual(9)
    }
  })

  it('the dsh-shell-env command, --help too: the three lines alone, exit 1', () => {
    const dir = installedWithoutBinary()
    dirs.push(dir)
    for (const args of [['--help'], ['env']]) {
      const result = load(dir, {}, [path.join('bin', 'dsh-shell-env.js'), ...args])
      expect(result.status).toBe(1)
      expect(result.stdout).toBe('')
      const lines = result.stderr.trimEnd().split('\n')
      expect(lines).toHaveLength(3)
      expect(lines[0]).toMatch(/^@deepseek-ai\/dsh-shell-env: no native binary for linux-/)
      expect(lines[2]).toMatch(/^To fix it: npm install /)
    }
  })

  it('a clone: the build that fixes it', () => {
    const dir = withoutBinary(true)
    dirs.push(dir)
    const result = load(dir)
    expect(result.stderr).toContain('In this clone it is built, not installed')
    expect(result.stderr).toContain('To fix it: npm run build (a Rust toolchain is needed), or npm install, which builds it.')
  })

  it('DEBUG=dsh-shell-env adds what was tried and the loader’s causes', () => {
    const dir = withoutBinary(false)
    dirs.push(dir)
    const result = load(dir, { DEBUG: 'dsh-shell-env' })
    expect(result.stderr).toContain('What was tried:')
    expect(result.stderr).toContain("Cannot find module '@deepseek-ai/dsh-shell-env-linux-")
    expect(messageLines(result.stderr).length).toBeGreaterThan(3)
  })
})
