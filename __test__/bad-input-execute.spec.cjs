'use strict'

// The bad-input matrix, the part that runs commands: execute(spec),
// buildEnvironment(spec, parentEnv), the ShellExecution handle and the Cordis
// service ctx.shellEnv under both supported Cordis lines (cordis 3.18 and 4.0
// RC, real Contexts), called with wrong types, missing fields, null, huge
// strings, NUL bytes, lone surrogates, prototype-polluting keys, throwing
// getters, Proxies (revoked ones too), frozen and non-plain objects, and
// environments past the kernel's limits. The rows are in
// bad-input-execute-cases.cjs; a command they hand over leaves a marker file
// behind if it ever runs, and none may appear.
// Real calls into the addon, no mocks; runs unchanged under `vitest run` and
// `jest`.
//
// Each case asserts the six conditions listed at the top of
// bad-input-helpers.cjs: a real Error with the pinned `.code` naming the
// offending field; `.cause` the very value a getter, Proxy trap or resolver
// threw; nothing registered; nothing spawned; the process still healthy;
// Object.prototype unpolluted, in this realm and in the addon's. The rules
// themselves (coded errors, all or nothing, text unchanged or refused, the
// kernel's limits, which objects count as records, receivers) are the
// input-validation policy in CONTRIBUTING.md.

const fs = require('node:fs')

const { T, setUp, tearDown, renewRegistry, byGate, badCase } = require('./bad-input-helpers.cjs')
const { CASES, TMP, markers } = require('./bad-input-execute-cases.cjs')

beforeAll(setUp, T)

afterAll(async () => {
  fs.rmSync(TMP, { recursive: true, force: true })
  await tearDown()
})

beforeEach(() => {
  renewRegistry()
})

const [CASES_HERE, CASES_SKIPPED] = byGate(CASES, (row) => row[2].gate)

describe('bad input: a specific code, nothing registered or spawned, the process still healthy', () => {
  it.each(CASES_HERE)('%s: %s', badCase, T)
  if (CASES_SKIPPED.length > 0) it.skip.each(CASES_SKIPPED)('%s: %s', badCase, T)

  it('no rejected execute() ever ran its command (no marker file appeared)', async () => {
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(markers.length).toBeGreaterThan(100)
    expect(markers.filter((marker) => fs.existsSync(marker))).toEqual([])
  })
})
