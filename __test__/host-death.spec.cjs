'use strict'

// A host that dies without running any JavaScript (SIGKILL, process.abort(),
// an out-of-memory crash) takes its commands with it: the package's guardian
// process asks every command's reaper to end all its descendants once the host
// is gone. Real host processes and real commands, each a TERM-ignoring leader
// with a child and an escapee that left the group. Runs unchanged under
// `vitest run` and `jest`.

const { spawn } = require('node:child_process')
const path = require('node:path')

const { ROOT, FIXTURES } = require('./helpers.cjs')
const { alive, waitFor } = require('./process-helpers.cjs')
const { signals } = require('./platform.cjs')

/** Starts the host fixture in `mode`; resolves with its commands' pids and its exit. */
function startHost(mode, nodeFlags = []) {
  const host = spawn(process.execPath, [...nodeFlags, path.join(FIXTURES, 'host-death.cjs'), mode, ROOT], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // No core file for the abort: only the exit matters here.
    env: { ...process.env, NODE_OPTIONS: '' },
  })
  let stdout = ''
  host.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk))
  host.stderr.resume()
  const exited = new Promise((resolve) => host.on('exit', (code, signal) => resolve({ code, signal })))
  const pids = waitFor(() => {
    const line = stdout.split('\n').find((text) => text.startsWith('{'))
    return line && JSON.parse(line).pids
  }, 'the host to start its commands', 20_000)
  return { host, exited, pids }
}

signals.describe('a host that dies without running JavaScript ends its commands and their escapees', () => {
  it.each([
    ['SIGKILL', 'wait', [], (host) => host.kill('SIGKILL')],
    ['SIGQUIT', 'wait', [], (host) => host.kill('SIGQUIT')],
    ['SIGUSR2', 'wait', [], (host) => host.kill('SIGUSR2')],
    ['SIGALRM', 'wait', [], (host) => host.kill('SIGALRM')],
    ['process.abort()', 'abort', [], () => {}],
    ['a V8 out-of-memory crash', 'oom', ['--max-old-space-size=32'], () => {}],
  ])('killed by %s', async (_title, mode, flags, kill) => {
    const { host, exited, pids } = startHost(mode, flags)
    const commands = await pids
    expect(commands).toHaveLength(6)
    for (const pid of commands) expect(alive(pid)).toBe(true)
    kill(host)
    const { signal } = await exited
    expect(signal).not.toBeNull()
    await waitFor(() => commands.every((pid) => !alive(pid)), 'every command, child and escapee to be gone', 10_000)
  }, 60_000)
})
