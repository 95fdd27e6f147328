// A smoke test of the addon built for x86_64-pc-windows-gnu, run by a Windows
// node.exe (under wine by scripts/test-cross.sh with CROSS_SMOKE=1): the
// package loads through index.js, and a registry with a Windows home
// collects. Prints one line per check; exits 1 on the first failure.
// NAPI_RS_NATIVE_LIBRARY_PATH names the .node file: binding.js looks for the
// -msvc name, and this build is -gnu.
'use strict'
const assert = require('node:assert/strict')
const path = require('node:path')

function check(name, body) {
  try {
    body()
    console.log(`${name}: ok`)
  } catch (error) {
    console.log(`${name}: FAILED`)
    console.log(error && error.stack ? error.stack : error)
    process.exit(1)
  }
}

let pkg
check('load', () => {
  pkg = require(path.join(__dirname, '..', 'index.js'))
  assert.equal(process.platform, 'win32')
  assert.equal(typeof pkg.ShellEnvRegistry, 'function')
})

check('collect', () => {
  const registry = new pkg.ShellEnvRegistry({ dshHome: 'C:\\dsh' })
  const unregister = registry.register({
    name: 'smoke',
    variables: { DSH_SMOKE: { description: 'Set by the smoke test.' } },
    commandDirectories: ['C:\\dsh\\tools\\bin'],
    resolve: () => ({ DSH_SMOKE: 'yes' }),
  })
  const execution = { agent: { session: { header: { id: 'session-smoke' } } } }
  const snapshot = registry.collect(execution)
  assert.equal(snapshot.DSH_HOME, 'C:\\dsh')
  assert.equal(snapshot.DSH_SHELL, '1')
  assert.equal(snapshot.DSH_SESSION_ID, 'session-smoke')
  assert.equal(snapshot.DSH_SMOKE, 'yes')
  // Command directories come first, then the inherited path, `;`-separated.
  const inheritedPath = 'C:\\Windows\\System32;C:\\Windows'
  assert.equal(registry.collect(execution, { inheritedPath }).PATH, `C:\\dsh\\tools\\bin;${inheritedPath}`)
  unregister()
  assert.equal(registry.collect(execution).DSH_SMOKE, undefined)
})

// TODO(windows process control): the execute() checks go here once spawning
// works on Windows (it fails with "process control is only implemented on
// Unix" today), and then they must pass, not be skipped:
// - `cmd /c echo`: execute({ command: 'echo %DSH_SMOKE%', shell: 'cmd', registry, execution })
//   exits 0 with the managed value on stdout;
// - the timeout kills the whole tree: a command that starts a grandchild and
//   outlives timeoutMs ends with timedOut, and neither process is left.
