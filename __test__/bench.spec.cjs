'use strict'

// `npm run bench` keeps working. This smoke test runs the bench
// script in quick mode (a tiny workload) in a fresh Node process, writing to a
// temporary file instead of bench/results.json, and checks that it exits 0 and
// writes well-formed JSON with every expected row. It asserts no timings: the
// numbers of a quick run on a busy CI machine mean nothing.
// Runs unchanged under `vitest run` (globals: true) and `jest`.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { posix } = require('./platform.cjs')

const ROOT = path.resolve(__dirname, '..')
const SCRIPT = path.join(ROOT, 'bench', 'index.mjs')

/** The sandboxed rows need bubblewrap (.ci/run installs it). */
const SANDBOXED = ['/usr/bin/bwrap', '/bin/bwrap'].some((file) => fs.existsSync(file))
const toolRows = (shape) => [`tool-bash/${shape}`, `subprocess/${shape}`, ...(SANDBOXED ? [`tool-bash-sandbox/${shape}`] : [])]

const ROWS = [
  'spawn-true/default',
  'spawn-bash/default',
  'scrub',
  'collect/1',
  'collect/10',
  'collect/50',
  'collect-async/10',
  'build-environment',
  'concurrent',
  'throughput',
  ...toolRows('none'),
  ...toolRows('strings'),
  ...toolRows('objects'),
  // The native runtime's terminals need the supervisor (Linux).
  ...(process.platform === 'linux' ? ['terminal'] : []),
  'event-loop-busy/default',
  'event-loop-delay/default',
  'spawn-true/grown',
  'spawn-bash/grown',
  'event-loop-busy/grown',
  'event-loop-delay/grown',
  // Limits need a POSIX spawn; measured last.
  ...(process.platform !== 'win32' ? ['limits'] : []),
]

const isNumber = (value) => typeof value === 'number' && Number.isFinite(value)

// The bench measures /bin/true and `bash -c true` (bench/index.mjs).
posix.describe('npm run bench (quick mode)', () => {
  let dir
  let run
  let results

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-bench-spec-'))
    const output = path.join(dir, 'results.json')
    // BENCH_FLOOR=existing: use the floor binary only when it is already
    // built; a test must not start a cargo build.
    run = spawnSync(process.execPath, [SCRIPT, '--quick'], {
      cwd: ROOT,
      env: { ...process.env, BENCH_OUTPUT: output, BENCH_FLOOR: 'existing' },
      encoding: 'utf8',
      timeout: 150_000,
    })
    if (fs.existsSync(output)) results = JSON.parse(fs.readFileSync(output, 'utf8'))
  }, 160_000)

  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('exits 0 and prints the table', () => {
    if (run.error) throw run.error
    expect({ status: run.status, signal: run.signal, stderr: run.status === 0 ? '' : run.stderr }).toEqual({
      status: 0,
      signal: null,
      stderr: '',
    })
    expect(run.stdout).toContain('ours ÷ this')
    expect(run.stdout).toContain('Targets')
  })

  it('writes valid JSON to the requested path, not to bench/results.json', () => {
    expect(results).toBeDefined()
    expect(results.quick).toBe(true)
    expect(typeof results.date).toBe('string')
    expect(Number.isNaN(Date.parse(results.date))).toBe(false)
    expect(results.machine.node).toBe(process.version)
    expect(typeof results.machine.cpuModel).toBe('string')
  })

  it('has every row, each contender with samples and a median or a reason it was skipped', () => {
    expect(results.rows.map((row) => row.id)).toEqual(ROWS)
    for (const row of results.rows) {
      expect(row.contenders.length).toBeGreaterThanOrEqual(2)
      const ours = row.contenders[0]
      expect(['execute', 'native']).toContain(ours.id)
      expect(ours.oursOverThis).toBe(1)
      for (const entry of row.contenders) {
        if (entry.skipped !== undefined) {
          // Only the floor and its model may be missing (no cargo, or not built yet).
          expect(['rust-floor', 'floor-2-threads', 'helper-model']).toContain(entry.id)
          expect(typeof entry.skipped).toBe('string')
          continue
        }
        expect(isNumber(entry.median)).toBe(true)
        expect(isNumber(entry.oursOverThis)).toBe(true)
        expect(Array.isArray(entry.samples)).toBe(true)
        expect(entry.samples.length).toBe(entry.n)
        expect(entry.samples.every(isNumber)).toBe(true)
      }
    }
  })

  it('pairs each row with its alternatives', () => {
    const ids = (rowId) => results.rows.find((row) => row.id === rowId).contenders.map((entry) => entry.id)
    for (const rowId of ['spawn-true/default', 'spawn-bash/default', 'spawn-true/grown', 'spawn-bash/grown']) {
      expect(ids(rowId)).toEqual(['execute', 'child_process', 'execa', 'rust-floor', 'helper-model'])
    }
    for (const count of [1, 10, 50]) expect(ids(`collect/${count}`)).toEqual(['native', 'plain-js'])
    expect(ids('collect-async/10')).toEqual(['native', 'plain-js'])
    expect(ids('build-environment')).toEqual(['native', 'plain-js', 'plain-js-filter'])
    expect(ids('concurrent')).toEqual(['execute', 'child_process', 'floor-2-threads'])
    expect(ids('throughput')).toEqual(['execute', 'execute-nospill', 'child_process'])
    if (process.platform === 'linux') expect(ids('terminal')).toEqual(['native', 'reference'])
    if (process.platform !== 'win32') expect(ids('limits')).toEqual(['execute', 'no-limits'])
    for (const shape of ['none', 'strings', 'objects']) {
      expect(ids(`tool-bash/${shape}`)).toEqual(['native', 'reference'])
      expect(ids(`subprocess/${shape}`)).toEqual(['native', 'reference'])
    }
    const throughput = results.rows.find((row) => row.id === 'throughput')
    for (const entry of throughput.contenders) {
      expect(isNumber(entry.rssGrowthMiB.max)).toBe(true)
      expect(isNumber(entry.mibPerSecond)).toBe(true)
    }
    // Per-call latency is the Node contenders'; the floor times its batches whole.
    const concurrent = results.rows.find((row) => row.id === 'concurrent')
    for (const entry of concurrent.contenders.slice(0, 2)) expect(isNumber(entry.perCall.p99)).toBe(true)
  })

  it('reports every target', () => {
    expect(results.targets.length).toBe(26)
    for (const target of results.targets) {
      expect(typeof target.name).toBe('string')
      expect(typeof target.limit).toBe('number')
      expect([true, false, null]).toContain(target.met)
    }
    // The supervisor runs on Linux: its resident set is read there.
    const rss = results.targets.find((target) => target.row === 'supervisor')
    expect(rss.value === null).toBe(process.platform !== 'linux')
  })

  it('puts the model of a helper design beside the floor in each spawn row', () => {
    const floorBuilt = results.floor.binary !== undefined
    expect(results.models.map((model) => model.row)).toEqual(['spawn-true/default', 'spawn-bash/default', 'spawn-true/grown', 'spawn-bash/grown'])
    for (const model of results.models) {
      if (floorBuilt) expect(isNumber(model.modelOverFloor)).toBe(true)
      else expect(model.modelOverFloor).toBeNull()
    }
    expect(run.stdout).toContain('model ÷ floor')
  })
})
