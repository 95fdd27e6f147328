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
 * A terminal of this runtime: the seam's handle, and its input as a stream.
 */
export interface LocalSubprocessTerminalHandle extends SubprocessTerminalHandle {
  /**
   * The terminal's input as a writable stream with backpressure: `write()`
   * returns `false` while a command does not read, and `'drain'` follows
   * once it does. The handle's `write(data)` goes through it. Writing
   * never blocks the host's thread.
   */
  readonly input: import('node:stream').Writable
}

/**
 * The `ctx.subprocess` service: every process spawned by this package's Rust
 * spawner, with its containment and its default scrub of the parent
 * environment. `spawnTerminal()` gives a real terminal: a pseudo-terminal on
 * Linux and macOS, a pseudo console on Windows 10 version 1809 and later,
 * where the foreground is always the command, SIGINT is a typed ^C and
 * SIGTSTP and SIGHUP reject with `ERR_SHELL_EXEC_UNSUPPORTED` (on an older
 * Windows `spawnTerminal()` rejects with that code).
 */
export declare class LocalSubprocessRuntime extends SubprocessRuntime {
  constructor(ctx: Context)
  resolveExecutable(command: string, env?: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string>
  spawn(spec: SubprocessSpawnSpec): SubprocessHandle
  spawnTerminal(spec: SubprocessTerminalSpawnSpec): Promise<LocalSubprocessTerminalHandle>
}

export default LocalSubprocessRuntime
