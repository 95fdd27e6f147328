// `@deepseek-ai/dsh-shell-env/pwsh-local`: the native PowerShell `ctx.shell`.
import type { ShellExecSpec } from '@deepseek-ai/dsh-shell'
import { NativeShellExecutor, type ConfigSchema, type LocalExecutorConfig } from './local.mjs'

/** The config: the shared fields and the PowerShell to run. */
export interface PwshExecutorConfig extends LocalExecutorConfig {
  /** Path of `pwsh` (default: found as the reference finds it, else `pwsh` on PATH). */
  pwshPath?: string
}

/** `NO_COLOR=1`, `PAGER=cat`, `GIT_PAGER=cat`. */
export declare const ENV_OVERRIDES: Readonly<Record<string, string>>
/** Sets PowerShell's console encoding to UTF-8 before each command. */
export declare const ENCODING_PREAMBLE: string
/** The PowerShell to run for a configured path (see the README). */
export declare function resolvePwshPath(configured?: string, env?: Record<string, string | undefined>, platform?: NodeJS.Platform): string

/** The local PowerShell executor: `pwsh -NoLogo -NoProfile -NonInteractive -Command <preamble><command>`. */
export declare class PwshLocalExecutor extends NativeShellExecutor<PwshExecutorConfig> {
  static Config: ConfigSchema<PwshExecutorConfig>
  /** The PowerShell every command runs through. */
  readonly pwshPath: string
  argv(spec: ShellExecSpec): string[]
}

/** Throws `ERR_SHELL_EXEC_INVALID_CONFIG` for a config the executor cannot run with. */
export declare function assertServiceablePwshConfig(config: PwshExecutorConfig): void

export default PwshLocalExecutor
