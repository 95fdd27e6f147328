'use strict'

// What the release pipeline relies on, checked without publishing: every
// declared target has its platform package (the supervisor beside the addon on
// Linux), the staged main package carries no contributor scripts and depends
// on every platform package, the workflow linter rejects a broken workflow,
// and the glibc check rejects a binary that needs a newer glibc. The whole
// install from packed tarballs is `npm run test:package`. Runs unchanged
// under `vitest run` and `jest`.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT } = require('./helpers.cjs')
const { elf } = require('./platform.cjs')

const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
const node = (args, cwd = ROOT) => spawnSync(process.execPath, args, { cwd, encoding: 'utf8', timeout: 60_000 })

/** The release scripts' own mapping from a target triple to its platform package. */
let platformOf
beforeAll(async () => {
  ;({ platformOf } = await import('../scripts/platforms.mjs'))
})

describe('the platform packages', () => {
  it.each(manifest.napi.targets)('%s has its package in npm/, named, constrained and listing its files', (triple) => {
    const platform = platformOf(triple)
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'npm', platform.name, 'package.json'), 'utf8'))
    expect(pkg.name).toBe(`${manifest.name}-${platform.name}`)
    expect(pkg.version).toBe(manifest.version)
    expect(pkg.os).toEqual([platform.os])
    expect(pkg.cpu).toEqual([platform.cpu])
    expect(pkg.libc).toEqual(platform.libc ? [platform.libc] : undefined)
    const binary = `dsh-shell-env.${platform.name}.node`
    expect(pkg.main).toBe(binary)
    expect(pkg.files).toEqual(platform.os === 'linux' ? [binary, 'dsh-shell-env-supervisor'] : [binary])
  })

  it('npm/ holds no package for a target that is not declared', () => {
    const declared = manifest.napi.targets.map((triple) => platformOf(triple).name)
    expect(fs.readdirSync(path.join(ROOT, 'npm')).sort()).toEqual(declared.sort())
  })
})

describe('the staged main package', () => {
  let staged
  let dir

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-stage-spec-'))
    const run = node([path.join(ROOT, 'scripts', 'stage-package.mjs'), path.join(dir, 'staging')])
    expect(run.stderr).toBe('')
    staged = JSON.parse(fs.readFileSync(path.join(dir, 'staging', 'package.json'), 'utf8'))
  })

  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  it('has no scripts and no dev dependencies, so nothing builds at install or pack time', () => {
    expect(staged.scripts).toBeUndefined()
    expect(staged.devDependencies).toBeUndefined()
    expect(manifest.scripts.prepare).toBeDefined()
  })

  it('depends, optionally, on every platform package at its own version', () => {
    const expected = Object.fromEntries(manifest.napi.targets.map((triple) => [`${manifest.name}-${platformOf(triple).name}`, manifest.version]))
    expect(staged.optionalDependencies).toEqual(expected)
  })

  it('holds the files its manifest lists, and no native binary', () => {
    for (const entry of staged.files) expect(fs.existsSync(path.join(dir, 'staging', entry))).toBe(true)
    const all = fs.readdirSync(path.join(dir, 'staging'), { recursive: true }).map(String)
    expect(all.filter((file) => file.endsWith('.node') || file.includes('supervisor'))).toEqual([])
  })
})

describe('the release checks can fail', () => {
  it('the workflow linter passes the repository’s workflows and rejects a broken one', () => {
    const ok = node([path.join(ROOT, 'scripts', 'lint-workflows.mjs')])
    expect({ status: ok.status, out: ok.stdout.trim().split('\n').pop() }).toEqual({ status: 0, out: '1 workflow file(s), 0 problem(s)' })
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-actionlint-spec-'))
    const broken = path.join(dir, 'broken.yml')
    fs.writeFileSync(broken, 'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n')
    // Named relative to the working directory, as the linter reports it.
    const bad = node([path.join(ROOT, 'scripts', 'lint-workflows.mjs'), 'broken.yml'], dir)
    // Named through directories: with '/' on every platform.
    const nested = node([path.join(ROOT, 'scripts', 'lint-workflows.mjs'), broken])
    fs.rmSync(dir, { recursive: true, force: true })
    expect(bad.status).toBe(1)
    expect(bad.stdout).toMatch(/^broken\.yml:6:\d+: property "nope" is not defined/m)
    expect(nested.status).toBe(1)
    expect(nested.stdout).toContain(`${path.relative(ROOT, broken).split(path.sep).join('/')}:6:`)
  })

  const readelf = spawnSync('readelf', ['--version']).status === 0
  elf.it('the glibc check rejects a binary that needs a newer glibc than allowed, and passes the static supervisor', () => {
    if (!readelf) throw new Error('readelf (binutils) is needed')
    const check = path.join(ROOT, 'scripts', 'check-glibc.mjs')
    const strict = node([check, '--max', '2.2', '/bin/true'])
    expect(strict.status).toBe(1)
    expect(strict.stdout).toMatch(/needs GLIBC_2\.\d+ \(newer than 2\.2\)/)
    const supervisor = node([check, '--max', '2.17', path.join(ROOT, 'dsh-shell-env-supervisor')])
    expect({ status: supervisor.status, stdout: supervisor.stdout.trim() }).toEqual({ status: 0, stdout: `${path.join(ROOT, 'dsh-shell-env-supervisor')}: is statically linked` })
  })
})
