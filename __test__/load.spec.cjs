'use strict'

// Load. Real children and real registries, no mocks. Runs
// unchanged under `vitest run` (globals: true) and `jest`. The workloads live
// in fixtures/load-work.cjs so that the resident-set check can run the very
// same ones in a fresh `node --expose-gc` (load-rss.cjs), where a reading is
// not blurred by the test runner's own allocations.

const path = require('node:path')

const { ROOT, FIXTURES, runNode, lastJsonLine } = require('./helpers.cjs')
const { overlappingExecutions, racingCollections } = require('./fixtures/load-work.cjs')
const { zombieChildren, waitFor } = require('./process-helpers.cjs')
const { posix, proc } = require('./platform.cjs')

const pkg = require('..')

describe('load', () => {
  // Each child is a bash script ending in `env -0`; zombies are counted in /proc.
  proc.it('500 overlapping executions with 20 contributors: each child gets its own session id and values', async () => {
    // All 500 are started at once; each child checks DSH_SESSION_ID against the
    // id it was told through its explicit env, and prints its whole
    // environment, whose every DSH_* variable is checked against its own execution.
    const report = await overlappingExecutions({ ...pkg, count: 500 })
    expect(report.failures).toEqual([])
    expect(report.failed).toBe(0)
    expect(report.count).toBe(500)
    // They really overlapped: hundreds were running at the same time.
    expect(report.maxInFlight).toBeGreaterThanOrEqual(200)
    await waitFor(() => zombieChildren().length === 0, 'no zombie child', 5_000)
  }, 120_000)

  it('100,000 collect() calls while contributors are registered and disposed, also from inside resolvers: every snapshot is self-consistent', async () => {
    // See racingCollections: every snapshot holds exactly the contributors
    // registered when its collection began, each with the values of that very
    // registration and execution, whatever resolvers registered or disposed meanwhile.
    const report = await racingCollections({ ...pkg, total: 100_000, seed: 20_260_000 + (process.pid % 1000) })
    expect(report.failures).toEqual([])
    expect(report.failed).toBe(0)
    expect(report.total).toBe(100_000)
    expect(report.asyncCalls).toBeGreaterThan(1_000)
    // The races happened: thousands of registrations and disposals, a good
    // share of them from inside resolvers while a collection was running.
    expect(report.registrations).toBeGreaterThan(5_000)
    expect(report.disposals).toBeGreaterThan(5_000)
    expect(report.fromResolvers).toBeGreaterThan(10_000)
  }, 120_000)

  // The same workloads, in a fresh node, after a warm-up run of the same size.
  posix.it('the resident set grows by less than 20 MiB over a run of the workloads (child process, gc before each reading)', () => {
    // The young generation is pinned, and the smaller growth of two runs
    // counts: see load-rss.cjs.
    const flags = ['--expose-gc', '--min-semi-space-size=16', '--max-semi-space-size=16']
    const child = runNode([...flags, path.join(FIXTURES, 'load-rss.cjs'), ROOT], { timeout: 150_000 })
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    const report = lastJsonLine(child.stdout)
    expect(report.failures).toEqual([])
    expect(report.executions).toBe(500)
    expect(report.collects).toBe(100_000)
    expect(report.rssGrowthsMiB).toHaveLength(2)
    expect(report.growthMiB).toBeLessThan(20)
  }, 180_000)
})
