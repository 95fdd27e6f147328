'use strict'

// The bad-input matrix, its odd but valid inputs: each row of ACCEPTED
// (bad-input-accepted-cases.cjs) is an input at the edge of what an entry
// point takes (frozen, null-prototype, Proxy and class-instance objects,
// __proto__ and constructor as names, 1 MiB strings, 10,000 keys, an
// environment past ARG_MAX, extra arguments), with its exact behaviour.
// Afterwards nothing was registered in the registries in play, Object.prototype
// is unpolluted and the process is still healthy (the probes are in
// bad-input-helpers.cjs).
// Real calls into the addon, no mocks; runs unchanged under `vitest run` and
// `jest`.
// The rules (which objects count as records, text unchanged or refused) are
// the input-validation policy in CONTRIBUTING.md.

const {
  T,
  setUp,
  tearDown,
  renewRegistry,
  byGate,
  registriesInPlay,
  prototypeState,
  expectUnpolluted,
  expectHealthy,
} = require('./bad-input-helpers.cjs')
const { ACCEPTED } = require('./bad-input-accepted-cases.cjs')

beforeAll(setUp, T)

afterAll(tearDown)

beforeEach(() => {
  renewRegistry()
})

const [ACCEPTED_HERE, ACCEPTED_SKIPPED] = byGate(ACCEPTED, (row) => row[3])

describe('odd but valid input: exact behaviour', () => {
  async function acceptedCase(_api, _title, check) {
    const lists = registriesInPlay().map((registry) => registry.list())
    const prototypesBefore = prototypeState()
    await check()
    expect(registriesInPlay().map((registry) => registry.list())).toEqual(lists)
    expectUnpolluted(prototypesBefore)
    await expectHealthy()
  }

  it.each(ACCEPTED_HERE)('%s: %s', acceptedCase, T)
  if (ACCEPTED_SKIPPED.length > 0) it.skip.each(ACCEPTED_SKIPPED)('%s: %s', acceptedCase, T)
})
