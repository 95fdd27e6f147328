'use strict'

// Shared by the registry specs (registry-*.spec.cjs): the home every registry
// there is made with, its built-ins, the path delimiter, and both collection
// entry points, so collection rules are checked on each. Plain CommonJS, no
// assertions, like helpers.cjs.

const path = require('node:path')

const { thrown, rejected } = require('./helpers.cjs')

const { ShellEnvRegistry } = require('..')

const HOME = path.resolve('/tmp/dsh-spec-home')
const D = path.delimiter
const BUILTINS = { DSH_HOME: HOME, DSH_SHELL: '1' }

function registry(options = {}) {
  return new ShellEnvRegistry({ dshHome: HOME, ...options })
}

/** Both collection entry points, so collection rules are checked on each. */
const MODES = [
  ['collect', (reg, execution, options) => reg.collect(execution, options)],
  ['collectAsync', (reg, execution, options) => reg.collectAsync(execution, options)],
]

/** The error a collection fails with: thrown synchronously by collect, a rejection from collectAsync. */
async function collectionError(mode, reg, execution = {}, options) {
  return mode === 'collect'
    ? thrown(() => reg.collect(execution, options))
    : rejected(() => reg.collectAsync(execution, options))
}

module.exports = { HOME, D, BUILTINS, registry, MODES, collectionError }
