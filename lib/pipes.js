'use strict'
// The host's ends of a command's raw pipes (`stdio: 'pipe'`) as Node streams,
// for `ShellExecution` and the `ctx.subprocess` runtime alike.

const net = require('node:net')

/**
 * The host's ends of a command's raw pipes as Node streams (`net.Socket`
 * over the descriptor, which then owns and closes it), `null` where none.
 */
function streamsOf(pipes) {
  const socket = (fd, readable) => (fd == null ? null : new net.Socket({ fd, readable, writable: !readable }))
  return { stdin: socket(pipes.stdin, false), stdout: socket(pipes.stdout, true), stderr: socket(pipes.stderr, true) }
}

module.exports = { streamsOf }
