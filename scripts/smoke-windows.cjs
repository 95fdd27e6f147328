// A smoke test of the addon built for x86_64-pc-windows-gnu, run by a Windows
// node.exe (under wine by scripts/test-cross.sh): the package loads through
// index.js, a registry with a Windows home collects, `execute()` runs a `cmd`
// script with the collected variables, and a whole tree (a node.exe and the
// grandchild it started) ends at a timeout and when its host is terminated.
// Prints one line per check; exits 1 on the first failure.
// NAPI_RS_NATIVE_LIBRARY_PATH names the .node file: binding.js looks for the
// -msvc name, and this build is -gnu.
'use strict'
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
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
  pkg = require(path.join(__dirname, '..', 'lib', 'index.js'))
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

async function checkAsync(name, body) {
  try {
    await body()
    console.log(`${name}: ok`)
  } catch (error) {
    console.log(`${name}: FAILED`)
    console.log(error && error.stack ? error.stack : error)
    process.exit(1)
  }
}

/** A node.exe that starts a grandchild sleeping for a minute, prints both pids, and sleeps. */
const TREE = [
  "const { spawn } = require('node:child_process')",
  "const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' })",
  'console.log(`PIDS ${process.pid} ${child.pid}`)',
  'setTimeout(() => {}, 60000)',
].join('\n')

/** Whether a process with `pid` still runs (`kill(pid, 0)` opens it on Windows). */
function running(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === 'EPERM'
  }
}

async function main() {
  await checkAsync('execute cmd', async () => {
    const registry = new pkg.ShellEnvRegistry({ dshHome: 'C:\\dsh' })
    registry.register({
      name: 'smoke',
      variables: { DSH_SMOKE: { description: 'Set by the smoke test.' } },
      resolve: () => ({ DSH_SMOKE: 'from-the-registry' }),
    })
    const execution = { agent: { session: { header: { id: 'session-smoke' } } } }
    const run = await pkg.execute({ command: 'echo %DSH_SMOKE% %DSH_SESSION_ID% & exit /b 7', shell: 'cmd', registry, execution })
    const result = await run.result()
    assert.equal(result.exitCode, 7)
    assert.equal(result.stdout.text.trim(), 'from-the-registry session-smoke')
  })

  await checkAsync('timeout ends the tree', async () => {
    const started = Date.now()
    const run = await pkg.execute({ command: [process.execPath, '-e', TREE], timeoutMs: 3000, graceMs: 200 })
    const result = await run.result()
    assert.equal(result.timedOut, true)
    assert.ok(Date.now() - started < 30_000, `took ${Date.now() - started} ms`)
    const line = result.stdout.text.split(/\r?\n/).find((text) => text.startsWith('PIDS '))
    assert.ok(line, `no pids in ${JSON.stringify(result.stdout.text)}`)
    const pids = line.split(' ').slice(1).map(Number)
    assert.equal(pids.length, 2)
    const deadline = Date.now() + 10_000
    while (pids.some(running)) {
      assert.ok(Date.now() < deadline, `still running: ${pids.filter(running)}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })

  await checkAsync('host death ends the job', async () => {
    // A host that starts that tree, prints its pids and is then terminated
    // (TerminateProcess: no JavaScript, no exit hook runs).
    const hostFile = path.join(os.tmpdir(), `dsh-smoke-host-${process.pid}.cjs`)
    fs.writeFileSync(
      hostFile,
      [
        `const pkg = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'index.js'))})`,
        `const tree = ${JSON.stringify(TREE)}`,
        ';(async () => {',
        "  const run = await pkg.execute({ command: [process.execPath, '-e', tree], timeoutMs: 60000 })",
        "  let seen = ''",
        '  while (!/PIDS \\d+ \\d+/.test(seen)) {',
        '    seen += run.readOutput().stdout',
        '    await new Promise((resolve) => setTimeout(resolve, 25))',
        '  }',
        "  process.stdout.write(seen.match(/PIDS \\d+ \\d+/)[0] + '\\n', () => process.kill(process.pid, 'SIGKILL'))",
        '})()',
      ].join('\n'),
    )
    const host = spawn(process.execPath, [hostFile], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    host.stdout.on('data', (chunk) => (out += chunk))
    await new Promise((resolve) => host.on('close', resolve))
    fs.rmSync(hostFile, { force: true })
    const line = out.split(/\r?\n/).find((text) => text.startsWith('PIDS '))
    assert.ok(line, `the host printed no pids: ${JSON.stringify(out)}`)
    const pids = line.split(' ').slice(1).map(Number)
    const deadline = Date.now() + 10_000
    while (pids.some(running)) {
      assert.ok(Date.now() < deadline, `still running after the host died: ${pids.filter(running)}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })
}

main()
