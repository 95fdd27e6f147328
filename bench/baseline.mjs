// The binding's per-call cost, this build against another build of the addon
// (`--baseline <path-to-.node>`), both loaded in this one process and measured
// interleaved (see lib.mjs), so a change to the binding shows as a ratio taken
// at one moment. Both are called through their raw exports with the main
// thread's own `process.env` as the parent, as the package's wrappers pass it;
// each `.node` finds its supervisor program beside it.
//
// Given a checkout of the package instead (`--baseline DIR`, installed and
// built), its addon is the baseline for those rows, and its own JS layer and
// addon together for the registry's `collect()` and `collectAsync()` as users
// call them, beside this checkout's.
//
//   node bench/baseline.mjs --baseline FILE.node|DIR [--quick]
//   npm run bench -- --baseline FILE.node|DIR   (the same rows, in the full report)

import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import { formatMs, interleave, stats, table } from './lib.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

const EXECUTION = { agent: { session: { header: { id: 'session-bench-42' } } } }
/** A typical spec: a scrub, explicit variables, managed ones. */
const SPEC = {
  command: ['/bin/true'],
  scrub: { exclude: ['*_TOKEN', 'AWS_*'], hardening: true },
  env: { LANG: 'C.UTF-8', TZ: 'UTC', PAGER: 'cat', REMOVED: undefined },
  dshEnv: { DSH_HOME: '/srv/dsh', DSH_SESSION_ID: 'session-bench-42', DSH_DEPLOYMENT_REGION: 'eu-west' },
}

/**
 * A native execution's result: through `onFinish()`, or `wait()` in builds
 * made before it, which a baseline may be.
 */
function finished(native) {
  return typeof native.onFinish === 'function' ? new Promise((resolve) => native.onFinish(resolve)) : native.wait()
}

/**
 * A registry with `count` contributors (3 keys declared, 2 returned each):
 * the raw binding's (`binding.ShellEnvRegistry`), or the package's.
 */
function registry(binding, count, make = (Registry) => new Registry({ dshHome: '/srv/dsh' }, process.env)) {
  const registry = make(binding.ShellEnvRegistry)
  for (let index = count - 1; index >= 0; index--) {
    const prefix = `DSH_C${String(index).padStart(3, '0')}`
    const keys = [`${prefix}_REGION`, `${prefix}_ZONE`, `${prefix}_TIER`]
    const variables = Object.fromEntries(keys.map((key) => [key, { description: `${key}, for the benchmark` }]))
    const resolve = (execution) => ({ [keys[0]]: `region-${index}`, [keys[2]]: execution.agent ? 'agent' : 'user' })
    registry.register({ name: `contributor-${index}`, variables, resolve })
  }
  return registry
}

/**
 * The rows: one per call measured, each with a `native` (this build) and a
 * `baseline` contender. `size`: `{ rounds, perRound, batch }`, `batch` calls
 * per sample for the synchronous calls.
 */
/** A checkout's loader: `lib/native.js`, or `native.js` at the root in builds before the JS moved to `lib/`. */
function loaderIn(dir) {
  const inLib = path.join(dir, 'lib', 'native.js')
  return fs.existsSync(inLib) ? inLib : path.join(dir, 'native.js')
}

export async function baselineRows(baselineFile, size) {
  const baselineDir = fs.statSync(baselineFile).isDirectory() ? path.resolve(baselineFile) : undefined
  const builds = {
    native: require(path.join(ROOT, 'lib', 'native.js')),
    baseline: require(baselineDir ? loaderIn(baselineDir) : path.resolve(baselineFile)),
  }
  const registries = Object.fromEntries(Object.entries(builds).map(([id, binding]) => [id, registry(binding, 5)]))
  assert.deepStrictEqual({ ...registries.native.collect(EXECUTION, undefined, process.env) }, { ...registries.baseline.collect(EXECUTION, undefined, process.env) })
  const batched = (one) => () => {
    for (let i = 0; i < size.batch; i++) one()
  }
  const calls = [
    {
      id: 'collect/5',
      title: `registry.collect() (sync), 5 contributors; per call, ${size.batch} calls per sample`,
      batch: size.batch,
      fn: (id) => batched(() => registries[id].collect(EXECUTION, undefined, process.env)),
    },
    {
      id: 'build-environment/typical',
      title: `buildEnvironment() with scrub, env and dshEnv; per call, ${size.batch} calls per sample`,
      batch: size.batch,
      fn: (id) => batched(() => builds[id].buildEnvironment(SPEC, process.env)),
    },
    {
      id: 'build-environment/minimal',
      title: `buildEnvironment({ command: 'true' }); per call, ${size.batch} calls per sample`,
      batch: size.batch,
      fn: (id) => batched(() => builds[id].buildEnvironment({ command: 'true' }, process.env)),
    },
    {
      id: 'execute/true',
      title: "execute({ command: ['/bin/true'] }), awaited to exit",
      batch: 1,
      fn: (id) => async () => {
        const result = await finished(await builds[id].execute({ command: ['/bin/true'] }, process.env))
        if (result.exitCode !== 0) throw new Error(`${id}: exit ${result.exitCode}`)
      },
    },
  ]
  if (baselineDir) calls.push(...packageCalls({ native: require(ROOT), baseline: require(baselineDir) }, size))
  const rows = []
  for (const call of calls) {
    const contenders = [
      { id: 'native', label: `this build: ${call.id}`, fn: call.fn('native') },
      { id: 'baseline', label: `baseline ${path.basename(baselineFile)}: ${call.id}`, fn: call.fn('baseline') },
    ]
    const raw = await interleave(contenders, { rounds: size.rounds, perRound: size.perRound })
    const samples = new Map([...raw].map(([id, values]) => [id, values.map((ms) => ms / call.batch)]))
    rows.push({ id: `baseline/${call.id}`, title: call.title, contenders, samples })
  }
  return rows
}

/**
 * The package as users call it, in each of `packages`: the registry with a
 * profile (the built-ins of a real harness), `collect()` with 1, 10 and 50
 * contributors, `collectAsync()` with 10; `buildEnvironment({})`; and
 * `execute()` of `/bin/true`, its JS layer included.
 */
function packageCalls(packages, size) {
  const make = (Registry) => new Registry({ dshHome: '/srv/dsh', profile: { name: 'bench', dir: '/srv/dsh/profiles/bench' } })
  const calls = []
  for (const count of [1, 10, 50]) {
    const registries = Object.fromEntries(Object.entries(packages).map(([id, pkg]) => [id, registry(pkg, count, make)]))
    assert.deepStrictEqual({ ...registries.native.collect(EXECUTION) }, { ...registries.baseline.collect(EXECUTION) })
    calls.push({
      id: `package-collect/${count}`,
      title: `ShellEnvRegistry#collect(), ${count} contributor${count > 1 ? 's' : ''}; per call, ${size.batch} calls per sample`,
      batch: size.batch,
      fn: (id) => () => {
        for (let i = 0; i < size.batch; i++) registries[id].collect(EXECUTION)
      },
    })
  }
  assert.deepStrictEqual(packages.native.buildEnvironment({}), packages.baseline.buildEnvironment({}))
  calls.push({
    id: 'package-build-environment',
    title: `buildEnvironment({}) of the package, this process's own process.env; per call, ${size.batch} calls per sample`,
    batch: size.batch,
    fn: (id) => () => {
      for (let i = 0; i < size.batch; i++) packages[id].buildEnvironment({})
    },
  })
  calls.push({
    id: 'package-execute/true',
    title: "execute({ command: ['/bin/true'] }) of the package, awaited to its result",
    batch: 1,
    fn: (id) => async () => {
      const result = await (await packages[id].execute({ command: ['/bin/true'] })).result()
      if (result.exitCode !== 0) throw new Error(`${id}: exit ${result.exitCode}`)
    },
  })
  const registries = Object.fromEntries(Object.entries(packages).map(([id, pkg]) => [id, registry(pkg, 10, make)]))
  calls.push({
    id: 'package-collect-async/10',
    title: `ShellEnvRegistry#collectAsync(), 10 contributors answering at once; per call, ${size.batch} calls per sample`,
    batch: size.batch,
    fn: (id) => async () => {
      for (let i = 0; i < size.batch; i++) await registries[id].collectAsync(EXECUTION)
    },
  })
  return calls
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2)
  const at = argv.indexOf('--baseline')
  if (at < 0 || !argv[at + 1]) {
    console.error('usage: node bench/baseline.mjs --baseline FILE.node|DIR [--quick]')
    process.exit(2)
  }
  const quick = argv.includes('--quick')
  const size = quick ? { rounds: 2, perRound: 3, batch: 5 } : { rounds: 30, perRound: 20, batch: 20 }
  const rows = await baselineRows(argv[at + 1], size)
  const cells = rows.map(({ title, samples }) => {
    const [ours, base] = [stats(samples.get('native')), stats(samples.get('baseline'))]
    return [title, formatMs(base.median), formatMs(ours.median), `${(ours.median / base.median).toFixed(2)}×`, String(ours.n)]
  })
  console.log(table(['call', 'baseline median', 'this build median', 'this ÷ baseline', 'samples each'], cells))
}
