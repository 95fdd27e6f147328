// One process of the bench's terminal row: `ctx.subprocess.spawnTerminal()`
// of `/bin/sh -c 'echo ready; exec cat'`, from the call until the first
// output arrives (then the session is terminated, outside the timing),
// through this package's runtime and through
// @deepseek-ai/dsh-subprocess-local (node-pty), interleaved.
//
// The reference's terminal handle uses Promise.withResolvers, which Node 20
// lacks; where it is missing it is added here, as the standard defines it,
// so that the reference runs at all.
//
//   node bench/terminal-child.mjs <rounds> <perRound>
//
// Prints one JSON line: { samples: { native: [ms…], reference: [ms…] } }.

import os from 'node:os'

import { Context } from '@deepseek-ai/cordis'
import ReferenceSubprocess from '@deepseek-ai/dsh-subprocess-local'
import NativeSubprocess from '@deepseek-ai/dsh-shell-env/subprocess-local'

import { interleave } from './lib.mjs'

if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function withResolvers() {
    let resolve
    let reject
    const promise = new this((res, rej) => {
      resolve = res
      reject = rej
    })
    return { promise, resolve, reject }
  }
}

const [roundsText, perRoundText] = process.argv.slice(2)
const SPEC = { argv: ['/bin/sh', '-c', 'echo ready; exec cat'], cwd: os.tmpdir(), rows: 24, cols: 80, graceMs: 1000 }

async function runtimeOf(plugin) {
  const root = new Context()
  const fiber = root.plugin(plugin)
  await fiber
  return { subprocess: root.get('subprocess'), fiber }
}

const native = await runtimeOf(NativeSubprocess)
const reference = await runtimeOf(ReferenceSubprocess)

/** One session: milliseconds from the call to the first output; then it is ended. */
async function firstOutput(subprocess) {
  const started = performance.now()
  const terminal = await subprocess.spawnTerminal(SPEC)
  await new Promise((resolve) => terminal.output.once('data', resolve))
  const taken = performance.now() - started
  await terminal.terminate()
  return taken
}

const contender = (id, runtime) => ({
  id,
  external: async (perRound) => {
    const taken = []
    for (let i = 0; i < perRound; i++) taken.push(await firstOutput(runtime.subprocess))
    return taken
  },
})

const samples = await interleave([contender('native', native), contender('reference', reference)], {
  rounds: Number(roundsText),
  perRound: Number(perRoundText),
})
await native.fiber.dispose()
await reference.fiber.dispose()
console.log(JSON.stringify({ samples: Object.fromEntries(samples) }))
