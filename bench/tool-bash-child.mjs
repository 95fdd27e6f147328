// One process of the bench's tool-bash rows: the published bash tool
// (@deepseek-ai/dsh-tool-bash) calling `true`, once through this package's
// native executor and once through @deepseek-ai/dsh-bash-local, each in a
// composition of its own in this process, interleaved. The process first
// holds the requested ballast:
//   none     — the default heap;
//   strings  — ~N MiB of large strings (512 KiB each, outside V8's young
//              space; fork copies the page tables of such memory);
//   objects  — ~N MiB of small objects on the V8 heap (which V8 marks
//              MADV_DONTFORK, so fork skips most of it).
//
//   node --max-old-space-size=6144 bench/tool-bash-child.mjs <shape> <MiB> <rounds> <perRound>
//
// Prints one JSON line: { samples: { native: [ms…], reference: [ms…] }, heap }.

import os from 'node:os'

import LocalBashExecutor from '@deepseek-ai/dsh-shell-env/bash-local'
import ReferenceBashExecutor from '@deepseek-ai/dsh-bash-local'
import ReferenceSubprocess from '@deepseek-ai/dsh-subprocess-local'

import { agent, callTool, composition, loadHarness, started } from '../__test__/harness-helpers.mjs'
import { interleave } from './lib.mjs'

const [shape, mibText, roundsText, perRoundText] = process.argv.slice(2)
const MiB = 1024 * 1024
const mib = Number(mibText)

const ballast = []
if (shape === 'strings') {
  for (let i = 0; i < mib * 2; i++) {
    const bytes = Buffer.alloc(512 * 1024, 0x61 + (i % 26))
    bytes.writeUInt32LE(i, 0)
    ballast.push(bytes.toString('latin1'))
  }
} else if (shape === 'objects') {
  // About 48 bytes each with its slot in the array.
  const count = Math.floor((mib * MiB) / 48)
  for (let i = 0; i < count; i++) ballast.push({ id: i, next: null })
} else if (shape !== 'none') {
  throw new Error(`unknown ballast shape ${shape}`)
}

const parts = await loadHarness()
const cwd = os.tmpdir()
async function compose(executor, extra) {
  const root = new parts.Context()
  const plugin = composition(parts, executor, { cwd }, { dshHome: cwd })
  return started(root, extra === undefined ? plugin : { name: 'with-subprocess', async apply(ctx) { await ctx.plugin(extra); await plugin.apply(ctx) } })
}
const native = await compose(LocalBashExecutor)
const reference = await compose(ReferenceBashExecutor, ReferenceSubprocess)
const call = (fiber) => async () => {
  const result = await callTool(fiber.ctx, 'bash', { command: 'true', description: 'Run true' }, { agent: agent('bench-session', cwd) })
  if (result.isError || result.value.exitCode !== 0) throw new Error(`the call failed: ${JSON.stringify(result.content)}`)
}
const samples = await interleave(
  [
    { id: 'native', fn: call(native) },
    { id: 'reference', fn: call(reference) },
  ],
  { rounds: Number(roundsText), perRound: Number(perRoundText) },
)
const usage = process.memoryUsage()
await native.dispose()
await reference.dispose()
console.log(JSON.stringify({
  samples: Object.fromEntries(samples),
  heap: { shape, ballastMiB: shape === 'none' ? 0 : mib, rssMiB: usage.rss / MiB, heapUsedMiB: usage.heapUsed / MiB },
  ballastLength: ballast.length,
}))
