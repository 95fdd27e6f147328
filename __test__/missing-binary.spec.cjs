'use strict'

// Without a loadable native binary every entry point says so in three lines:
// the platform and libc, what it looked for, and the command that fixes it
// (an install of the platform package, or a build in a clone); the loader's
// causes and what was tried only with DEBUG=dsh-shell-env or --debug.

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
  for (const file of ['native.js', 'binding.js', 'package.json']) fs.copyFileSync(path.join(ROOT, file), path.join(dir, file))
  if (clone) fs.writeFileSync(path.join(dir, 'Cargo.toml'), '')
  return dir
}

function load(dir, env = {}) {
  return spawnSync(process.execPath, ['-e', "require('./native.js')"], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, ...env } })
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
