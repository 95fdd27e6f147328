'use strict'

// The default scrub, through the public buildEnvironment(), scored on the
// labelled corpus the core's own test uses (crates/core/tests/corpus): CI
// runners, a Kubernetes pod, cloud and AI SDKs, developer shells. No
// credential may reach a child and no legitimate variable may be removed.

const path = require('node:path')

const { buildEnvironment } = require('..')
const { ROOT } = require('./helpers.cjs')

const CORPUS = require(path.join(ROOT, 'crates', 'core', 'tests', 'corpus', 'environment.json')).variables

describe('the default scrub on a labelled corpus of real environments', () => {
  const parent = Object.fromEntries(CORPUS.map(({ name, value }) => [name, value]))
  const built = buildEnvironment({ terminalEnv: false }, parent)
  const reasons = Object.fromEntries(built.removed.map(({ key, reason }) => [key, reason]))

  it('holds enough of each kind to judge by', () => {
    const credentials = CORPUS.filter((entry) => entry.label === 'credential').length
    expect(CORPUS.length).toBeGreaterThanOrEqual(200)
    expect(credentials).toBeGreaterThanOrEqual(60)
    expect(new Set(CORPUS.map((entry) => entry.group)).size).toBeGreaterThanOrEqual(5)
  })

  it('no credential passes', () => {
    const passing = CORPUS.filter((entry) => entry.label === 'credential' && entry.name in built.env)
    expect(passing.map(({ name, why }) => `${name}: ${why}`)).toEqual([])
  })

  it('no legitimate variable is removed', () => {
    const removed = CORPUS.filter((entry) => entry.label === 'keep' && !(entry.name in built.env))
    expect(removed.map(({ name, why }) => `${name} (${reasons[name]}): ${why}`)).toEqual([])
  })

  it('each removal says whether the name or the value gave the credential away, or a public prefix could not hide it', () => {
    for (const entry of CORPUS.filter((candidate) => candidate.label === 'credential')) {
      const wanted = entry.reason ?? expect.stringMatching(/^(credential|secret-value)$/)
      expect([entry.name, reasons[entry.name]]).toEqual([entry.name, wanted])
    }
  })
})
