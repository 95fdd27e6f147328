'use strict'

// The bad-input matrix, the registry's part: new ShellEnvRegistry(options),
// register(), list(), catalog(), dshHome and the registry methods on a foreign
// receiver, collect() and collectAsync() (with resolvers returning every wrong
// shape), resolveDshHome() and reconcileDshHome(), called with wrong types,
// missing fields, null, huge strings, NUL bytes, lone surrogates,
// prototype-polluting keys, throwing getters, Proxies (revoked ones too), and
// frozen and non-plain objects. The rows are in bad-input-registry-cases.cjs.
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

const { T, setUp, tearDown, renewRegistry, byGate, badCase } = require('./bad-input-helpers.cjs')
const { CASES } = require('./bad-input-registry-cases.cjs')

beforeAll(setUp, T)

afterAll(tearDown)

beforeEach(() => {
  renewRegistry()
})

const [CASES_HERE, CASES_SKIPPED] = byGate(CASES, (row) => row[2].gate)

describe('bad input: a specific code, nothing registered or spawned, the process still healthy', () => {
  it.each(CASES_HERE)('%s: %s', badCase, T)
  if (CASES_SKIPPED.length > 0) it.skip.each(CASES_SKIPPED)('%s: %s', badCase, T)
})
