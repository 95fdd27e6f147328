// `@deepseek-ai/dsh-shell-env/subprocess-local`: `ctx.subprocess` over the
// native spawner, a drop-in for @deepseek-ai/dsh-subprocess-local.
import type { Context } from '@deepseek-ai/cordis'
import {
  SubprocessRuntime,
  type SubprocessHandle,
  type SubprocessSpawnSpec,
  type SubprocessTerminalHandle,
  type SubprocessTerminalSpawnSpec,
} from '@deepseek-ai/dsh-subprocess'

/**
 * The `ctx.subprocess` service: every process spawned by this package's Rust
 * spawner, with its containment and its default scrub of the parent
 * environment. `spawnTerminal()` rejects with `ERR_SHELL_EXEC_UNSUPPORTED`
 * for now.
 */
export declare class LocalSubprocessRuntime extends SubprocessRuntime {
  constructor(ctx: Context)
  resolveExecutable(command: string, env?: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string>
  spawn(spec: SubprocessSpawnSpec): SubprocessHandle
  spawnTerminal(spec: SubprocessTerminalSpawnSpec): Promise<SubprocessTerminalHandle>
}

export default LocalSubprocessRuntime
