'use strict'

// Every field the declarations name is read by the addon. The field lists in
// index.d.ts are generated from the core's lists (a core test fails when they
// are stale); these tests close the loop to the binding's reader: a field the
// core accepts but the reader never reads would let any value through.

const fs = require('node:fs')
const path = require('node:path')

const { ROOT, rejected, expectCode } = require('./helpers.cjs')
const { execute } = require('..')

const DECLARATIONS = fs.readFileSync(path.join(ROOT, 'index.d.ts'), 'utf8')

/** The words of one generated field list in index.d.ts. */
function fieldsOf(typeName) {
  const line = DECLARATIONS.split('\n').find((text) => text.startsWith(`export type ${typeName} = `))
  if (line === undefined) throw new Error(`index.d.ts declares no ${typeName}`)
  return [...line.matchAll(/'([^']+)'/g)].map((match) => match[1])
}

/** A value no field takes. */
const probe = () => Symbol('probe')

/** Refused by the field's own reader, not as a field the core does not know. */
function expectReadAndRefused(error, field) {
  expectCode(error, 'ERR_SHELL_EXEC_INVALID_SPEC')
  expect(error.message).toContain(`invalid spec field ${field}:`)
  expect(error.message).not.toContain('is not a spec field')
}

describe('the binding reads every declared field', () => {
  it('the generated lists are not empty', () => {
    expect(fieldsOf('ShellExecSpecField')).toContain('command')
    expect(fieldsOf('ShellLimitsField').length).toBeGreaterThan(0)
    expect(fieldsOf('ShellScrubField').length).toBeGreaterThan(0)
  })

  it.each(fieldsOf('ShellExecSpecField'))('execute() refuses a symbol in spec.%s, naming the field', async (field) => {
    const error = await rejected(() => execute({ command: 'true', [field]: probe() }))
    expectReadAndRefused(error, field)
  })

  it.each(fieldsOf('ShellLimitsField'))('execute() refuses a symbol in spec.limits.%s, naming the field', async (field) => {
    const error = await rejected(() => execute({ command: 'true', limits: { [field]: probe() } }))
    expectReadAndRefused(error, `limits.${field}`)
  })

  it.each(fieldsOf('ShellScrubField'))('execute() refuses a symbol in spec.scrub.%s, naming the field', async (field) => {
    const error = await rejected(() => execute({ command: 'true', scrub: { [field]: probe() } }))
    expectReadAndRefused(error, `scrub.${field}`)
  })
})
