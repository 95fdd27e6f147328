// `@deepseek-ai/dsh-shell-env/bash-local`: the native bash `ctx.shell`.
import type { ShellExecSpec } from '@deepseek-ai/dsh-shell'
import { NativeShellExecutor, type ConfigSchema, type LocalExecutorConfig } from './local.mjs'

export type { LocalExecutorConfig } from './local.mjs'

/** `NO_COLOR=1`, `TERM=dumb`, `PAGER=cat`, `GIT_PAGER=cat`. */
export declare const ENV_OVERRIDES: Readonly<Record<string, string>>

/** The local bash executor: each command runs as `bash -c <command>`. */
export declare class LocalBashExecutor extends NativeShellExecutor<LocalExecutorConfig> {
  static Config: ConfigSchema<LocalExecutorConfig>
  argv(spec: ShellExecSpec): string[]
}

/** Throws `ERR_SHELL_EXEC_INVALID_CONFIG` for a config the executor cannot run with. */
export declare function assertServiceableBashConfig(config: LocalExecutorConfig): void

export default LocalBashExecutor
