'use strict'

// The bad-input matrix as a whole: the rows of CASES (bad-input-registry-cases.cjs
// and bad-input-execute-cases.cjs, in that order) and of ACCEPTED
// (bad-input-accepted-cases.cjs) cover every public entry point. The rows
// themselves run in bad-input-registry.spec.cjs, bad-input-execute.spec.cjs and
// bad-input-accepted.spec.cjs. Real calls into the addon, no mocks; runs
// unchanged under `vitest run` and `jest`; the input-validation policy the rows
// pin is in CONTRIBUTING.md.

const fs = require('node:fs')

const { CASES: REGISTRY_CASES } = require('./bad-input-registry-cases.cjs')
const { CASES: EXECUTE_CASES, TMP } = require('./bad-input-execute-cases.cjs')
const { ACCEPTED } = require('./bad-input-accepted-cases.cjs')

const CASES = [...REGISTRY_CASES, ...EXECUTE_CASES]

// Loading the execute rows made their marker directory.
afterAll(() => {
  fs.rmSync(TMP, { recursive: true, force: true })
})

describe('the matrix', () => {
  it(`holds ${CASES.length} failing and ${ACCEPTED.length} accepted cases over every public entry point`, () => {
    const apis = new Set([...CASES, ...ACCEPTED].map(([api]) => api.replace(/^cordis@\S+ /, '')))
    for (const api of [
      'new ShellEnvRegistry',
      'register',
      'disposer',
      'collect',
      'collectAsync',
      'list/catalog',
      'registry methods',
      'resolveDshHome',
      'reconcileDshHome',
      'execute',
      'buildEnvironment',
      'ShellExecution',
      'ctx.shellEnv',
    ]) {
      expect(apis.has(api)).toBe(true)
    }
    expect(CASES.length).toBeGreaterThan(300)
  })
})
