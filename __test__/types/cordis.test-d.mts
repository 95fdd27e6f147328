// Type test of the Cordis plugin and `ctx.shellEnv` (index.d.ts) on upstream
// `cordis`: compiled with the API type test (tsconfig.json), where `cordis`
// resolves to cordis@3.18.1, and again against cordis@4.0.0-rc.10
// (tsconfig.cordis4.json). The harness's own Cordis has harness.test-d.mts.
// Every `@ts-expect-error` line must fail to compile, every other line must compile.

// The package comes first on purpose: its augmentation must merge into cordis'
// own Context even when index.d.ts is read before cordis is.
import * as shellEnv from '@deepseek-ai/dsh-shell-env'
import {
  Config,
  ShellEnvRegistry,
  apply,
  inject,
  name,
  type DshSnapshot,
  type ShellEnvConfig,
  type ShellExecution,
  type ShellRunResult,
} from '@deepseek-ai/dsh-shell-env'
import { Context } from 'cordis'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function assertType<T extends true>(_proof?: T): void {}

// ── the plugin's parts ──────────────────────────────────────────────────────────
assertType<Equal<typeof name, 'shell-env'>>()
const injected: string[] = inject
const config: ShellEnvConfig = { dshHome: '/opt/dsh', profile: { name: 'work', dir: '/profiles/work' } }
new ShellEnvRegistry(new Context(), config)
new ShellEnvRegistry(config)
// @ts-expect-error: a profile needs a dir
const badConfig: ShellEnvConfig = { profile: { name: 'work' } }

declare const root: Context
apply(root, { dshHome: '/opt/dsh' })
apply(root)
root.plugin(shellEnv, { dshHome: '/opt/dsh' })

// ── ctx.shellEnv through the module augmentation ───────────────────────────────
const service: ShellEnvRegistry = root.shellEnv
assertType<Equal<Context['shellEnv'], ShellEnvRegistry>>()
root.plugin(ShellEnvRegistry, { dshHome: '/opt/dsh' })
const home: string = root.shellEnv.dshHome

// A contributor plugin.
const dispose: () => void = root.shellEnv.register({
  name: 'deployment-region',
  variables: { DSH_DEPLOYMENT_REGION: { description: 'Current deployment region.' } },
  commandDirectories: ['/opt/region/bin'],
  resolve: (execution) => (execution.agent ? { DSH_DEPLOYMENT_REGION: 'cn-north' } : {}),
})
root.shellEnv.register({
  name: 'undeclared',
  variables: { DSH_DECLARED: { description: 'declared' } },
  // @ts-expect-error: a resolver returns declared keys only
  resolve: () => ({ DSH_OTHER: 'x' }),
})

// A bash executor.
async function bash(ctx: Context, command: string, sessionId?: string): Promise<ShellRunResult> {
  const execution = sessionId === undefined ? {} : { agent: { session: { header: { id: sessionId } } } }
  const running: ShellExecution = await ctx.shellEnv.execute({ command, timeoutMs: 30_000 }, execution)
  // ref() and unref() return the execution, as a timer's do.
  const background: ShellExecution = running.unref().ref()
  const holds: boolean = background.hasRef()
  return holds ? running.result() : background.result()
}
root.shellEnv.execute({ command: ['env'], onExpiry: 'none' })
// @ts-expect-error: the service supplies the managed environment itself
root.shellEnv.execute({ command: 'env', dshEnv: { DSH_HOME: '/x' } })

const snapshot: DshSnapshot = root.shellEnv.collect({})
const later: Promise<DshSnapshot> = root.shellEnv.collectAsync({}, { timeoutMs: 1000 })
const keys: string[] = root.shellEnv.list().map((entry) => entry.key)
const owners: string[] = root.shellEnv.catalog().variables.map((entry) => entry.owner)
