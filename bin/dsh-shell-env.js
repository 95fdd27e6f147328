#!/usr/bin/env node
'use strict'
// The `dsh-shell-env` command; see `dsh-shell-env --help` and cli/.

let main
try {
  main = require('../cli/main.js')
} catch (error) {
  // No native binary for this platform: its three lines (more with --debug), for every subcommand.
  if (error?.code !== 'ERR_SHELL_ENV_NATIVE_BINARY_MISSING') throw error
  process.stderr.write(`${error.stack.replace(/^Error: /, '')}\n`)
  process.exit(1)
}
main.cli()
