'use strict'
// `dsh-shell-env get KEY`: one managed variable's value, as `printenv KEY`
// prints one variable (exit 1 when the call would not get it).

const { PROGRAM } = require('../errors.js')
const { openRegistry, executionFor } = require('../registry.js')

const definition = {
  name: 'get',
  summary: 'one managed variable of one call, as its bare value',
  usage: 'get KEY [options]',
  description: `Collects the managed variables one shell call receives, as env does,
and prints the value of KEY alone, unmasked, followed by a newline. Exits 1,
printing nothing, when the call would not get KEY (a key no contributor
returned for it, or one outside the managed snapshot); keys are
case-sensitive, and a KEY that differs only in case from one the call gets
or could get is told so on stderr.`,
  options: ['session', 'profile', 'home', 'plugin'],
  takesKey: true,
}

async function run(options, io) {
  const registry = await openRegistry(options, io.cwd)
  const snapshot = await registry.collect(executionFor(options))
  if (!Object.hasOwn(snapshot, options.key)) {
    // Environment names are case-sensitive: `dsh_home` is no DSH_HOME, and silence would not say so.
    const known = new Set([...Object.keys(snapshot), ...registry.catalog().variables.map(({ key }) => key)])
    const meant = [...known].find((key) => key !== options.key && key.toUpperCase() === options.key.toUpperCase())
    if (meant !== undefined) io.stderr.write(`${PROGRAM}: no ${options.key}; keys are case-sensitive: did you mean ${meant}?\n`)
    return 1
  }
  io.stdout.write(`${snapshot[options.key]}\n`)
  return 0
}

module.exports = { ...definition, run }
