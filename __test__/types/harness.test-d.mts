// Type test against the published harness: `ctx.shellEnv` on
// `@deepseek-ai/cordis`'s Context is this package's ShellEnvRegistry, the
// harness's own ToolExecution is accepted wherever an execution is, the
// construction forms compile, and the type names of the TypeScript original
// are still exported. Every `@ts-expect-error` line must fail to compile.
import { Context } from '@deepseek-ai/cordis'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'
import type { DshEnvironment } from '@deepseek-ai/dsh-shell'
import * as shellEnv from '@deepseek-ai/dsh-shell-env'
import {
  ShellEnvRegistry,
  type BashEnvContributor,
  type BashEnvVariable,
  type BashEnvVariableInfo,
  type Config,
  type DshSnapshot,
  type ShellExecution,
} from '@deepseek-ai/dsh-shell-env'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function assertType<T extends true>(_proof?: T): void {}

declare const ctx: Context
declare const exec: ToolExecution

// ── ctx.shellEnv is the registry itself ───────────────────────────────────────
assertType<Equal<Context['shellEnv'], ShellEnvRegistry>>()
const registry: ShellEnvRegistry = ctx.shellEnv

// ── the construction forms ────────────────────────────────────────────────────
new ShellEnvRegistry(ctx, { dshHome: '/opt/dsh' })
new ShellEnvRegistry(ctx)
new ShellEnvRegistry({ dshHome: '/opt/dsh', profile: { name: 'work', dir: '/profiles/work' } })
new ShellEnvRegistry()
ctx.plugin(ShellEnvRegistry, { dshHome: '/opt/dsh' })
ctx.plugin(shellEnv, { dshHome: '/opt/dsh' })
shellEnv.apply(ctx, { dshHome: '/opt/dsh' })
// @ts-expect-error: the config has no such field
new ShellEnvRegistry(ctx, { dshhome: '/opt/dsh' })
// Upstream `cordis` is not installed here, as in the harness: its Context is
// no wildcard that lets anything through as a context.
// @ts-expect-error: the config has no such field
new ShellEnvRegistry({ dshhome: '/opt/dsh' })
// @ts-expect-error: a number is neither a context nor a config
new ShellEnvRegistry(42)
// @ts-expect-error: a string is neither a context nor a config
new ShellEnvRegistry('hello')
// @ts-expect-error: a profile's dir is required
new ShellEnvRegistry({ profile: { name: 'work' } })
// @ts-expect-error: dshHome is a string
new ShellEnvRegistry({ dshHome: 42 })

// ── the harness's ToolExecution is an execution ───────────────────────────────
const snapshot: DshSnapshot = ctx.shellEnv.collect(exec)
// What the bash tool hands to ctx.shell as `dshEnv`.
const dshEnv: DshEnvironment = ctx.shellEnv.collect(exec)
const later: Promise<DshSnapshot> = ctx.shellEnv.collectAsync(exec, { timeoutMs: 1000 })
const started: Promise<ShellExecution> = ctx.shellEnv.execute({ command: 'true' }, exec)
const dispose: () => void = ctx.shellEnv.register({
  name: 'call-id',
  variables: { DSH_CALL_ID: { description: 'The tool call id.' } },
  resolve: (execution: ToolExecution) => ({ DSH_CALL_ID: String(execution.callId) }),
})
ctx.shellEnv.register({
  name: 'undeclared',
  variables: { DSH_DECLARED: { description: 'declared' } },
  // @ts-expect-error: a resolver returns declared keys only
  resolve: () => ({ DSH_OTHER: 'x' }),
})

// ── the original's type names ─────────────────────────────────────────────────
const variable: BashEnvVariable = { description: 'Current deployment region.' }
const contributor: BashEnvContributor = {
  name: 'deployment-region',
  variables: { DSH_DEPLOYMENT_REGION: variable },
  resolve: (execution) => (execution.agent === undefined ? {} : { DSH_DEPLOYMENT_REGION: 'cn-north' }),
}
registry.register(contributor)
const listed: BashEnvVariableInfo[] = registry.list()
const config: Config = { dshHome: '/opt/dsh' }

export { snapshot, dshEnv, later, started, dispose, listed, config }

// ── the native executors are ctx.shell providers ──────────────────────────────
import LocalBashExecutor from '@deepseek-ai/dsh-shell-env/bash-local'
import PwshLocalExecutor from '@deepseek-ai/dsh-shell-env/pwsh-local'
import type { ShellExecutor, ShellProcess, ShellRunResult } from '@deepseek-ai/dsh-shell'

ctx.plugin(LocalBashExecutor, { cwd: '/work', graceMs: 1000, spillDir: '/var/spill' })
ctx.plugin(PwshLocalExecutor, { pwshPath: '/usr/bin/pwsh' })
declare const bashExecutor: LocalBashExecutor
const asSeam: ShellExecutor = bashExecutor
const spec = bashExecutor.resolve({ command: 'true', dshEnv: ctx.shellEnv.collect(exec) })
const ran: Promise<ShellRunResult> = bashExecutor.run(spec)
const proc: ShellProcess = bashExecutor.start(spec)
// @ts-expect-error: the grace is a number
ctx.plugin(LocalBashExecutor, { graceMs: '1s' })

export { asSeam, ran, proc }

// ── the sandboxed composition (docs/executors.md): the published sandboxing
// executor over this package's ctx.subprocess ─────────────────────────────────
import LocalSubprocessRuntime from '@deepseek-ai/dsh-shell-env/subprocess-local'
import SandboxBashExecutor from '@deepseek-ai/dsh-bash-sandbox'
import LocalSandboxProvider from '@deepseek-ai/dsh-sandbox-local'
import SandboxPolicyService from '@deepseek-ai/dsh-sandbox-policy'

ctx.plugin(LocalSubprocessRuntime)
ctx.plugin(LocalSandboxProvider)
ctx.plugin(SandboxPolicyService, { mode: 'workspace-write', workspaceRoot: '/work' })
ctx.plugin(SandboxBashExecutor, { cwd: '/work' })
// @ts-expect-error: no such sandbox mode
ctx.plugin(SandboxPolicyService, { mode: 'workspace', workspaceRoot: '/work' })
