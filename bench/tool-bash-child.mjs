// One process of the bench's tool-bash and subprocess rows, each contender in
// a composition of its own in this process, interleaved:
// - the published bash tool (@deepseek-ai/dsh-tool-bash) calling `true`,
//   through this package's native executor and through
//   @deepseek-ai/dsh-bash-local;
// - `ctx.subprocess.spawn()` of /bin/true with collected output, through this
//   package's runtime and through @deepseek-ai/dsh-subprocess-local;
// - with bubblewrap installed, the bash tool in `read-only` through
//   @deepseek-ai/dsh-bash-sandbox and @deepseek-ai/dsh-sandbox-local, over
//   each of the two runtimes.
// The process first holds the requested ballast:
//   none     — the default heap;
//   strings  — ~N MiB of large strings (512 KiB each, outside V8's young
//              space; fork copies the page tables of such memory);
//   objects  — ~N MiB of small objects on the V8 heap (which V8 marks
//              MADV_DONTFORK, so fork skips most of it).
//
//   node --max-old-space-size=6144 bench/tool-bash-child.mjs <shape> <MiB> <rounds> <perRound>
//
// Prints one JSON line: { samples: { native: [ms…], reference: [ms…],
// 'runtime-native', 'runtime-reference', 'sandbox-native'?,
// 'sandbox-reference'? }, heap }.

import fs from 'node:fs'
import os from 'node:os'

import LocalBashExecutor from '@deepseek-ai/dsh-shell-env/bash-local'
import ReferenceBashExecutor from '@deepseek-ai/dsh-bash-local'
import ReferenceSubprocess from '@deepseek-ai/dsh-subprocess-local'
import NativeSubprocess from '@deepseek-ai/dsh-shell-env/subprocess-local'
import SandboxBashExecutor from '@deepseek-ai/dsh-bash-sandbox'
import LocalSandboxProvider from '@deepseek-ai/dsh-sandbox-local'
import SandboxPolicyService from '@deepseek-ai/dsh-sandbox-policy'

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
async function compose(executor, ...services) {
  const root = new parts.Context()
  const plugin = composition(parts, executor, { cwd }, { dshHome: cwd })
  return started(root, {
    name: 'with-services',
    async apply(ctx) {
      for (const [service, config] of services) await ctx.plugin(service, config)
      await plugin.apply(ctx)
    },
  })
}
const native = await compose(LocalBashExecutor)
const reference = await compose(ReferenceBashExecutor, [ReferenceSubprocess])
// The sandbox policy reads the calling session's events for a mode override.
const sessionAgent = { session: { ...agent('bench-session', cwd).session, events: [] } }
const call = (fiber) => async () => {
  const result = await callTool(fiber.ctx, 'bash', { command: 'true', description: 'Run true' }, { agent: sessionAgent })
  if (result.isError || result.value.exitCode !== 0) throw new Error(`the call failed: ${JSON.stringify(result.content)}`)
}
/** `/bin/true` through `ctx.subprocess`, output collected, awaited to close. */
const spawnTrue = (fiber) => async () => {
  const handle = fiber.ctx.get('subprocess').spawn({
    argv: ['/bin/true'],
    cwd,
    graceMs: 3000,
    stdio: { stdin: 'ignore', stdout: { maxBytes: 64000 }, stderr: { maxBytes: 64000 } },
  })
  const { exitCode } = await handle.done
  if (exitCode !== 0) throw new Error(`spawn: exit ${exitCode}`)
}
// The reference executor over this package's runtime: its ctx.subprocess is the one measured.
const overNative = await compose(ReferenceBashExecutor, [NativeSubprocess])
const contenders = [
  { id: 'native', fn: call(native) },
  { id: 'reference', fn: call(reference) },
  { id: 'runtime-native', fn: spawnTrue(overNative) },
  { id: 'runtime-reference', fn: spawnTrue(reference) },
]
const fibers = [native, reference, overNative]
if (['/usr/bin/bwrap', '/bin/bwrap'].some((file) => fs.existsSync(file))) {
  const sandboxed = (runtime) =>
    compose(SandboxBashExecutor, [runtime], [SandboxPolicyService, { mode: 'read-only', workspaceRoot: cwd }], [LocalSandboxProvider])
  const sandboxNative = await sandboxed(NativeSubprocess)
  const sandboxReference = await sandboxed(ReferenceSubprocess)
  fibers.push(sandboxNative, sandboxReference)
  contenders.push({ id: 'sandbox-native', fn: call(sandboxNative) }, { id: 'sandbox-reference', fn: call(sandboxReference) })
}
const samples = await interleave(contenders, { rounds: Number(roundsText), perRound: Number(perRoundText) })
const usage = process.memoryUsage()
for (const fiber of fibers) await fiber.dispose()
console.log(JSON.stringify({
  samples: Object.fromEntries(samples),
  heap: { shape, ballastMiB: shape === 'none' ? 0 : mib, rssMiB: usage.rss / MiB, heapUsedMiB: usage.heapUsed / MiB },
  ballastLength: ballast.length,
}))
