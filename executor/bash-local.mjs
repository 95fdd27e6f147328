// `@deepseek-ai/dsh-shell-env/bash-local`: `ctx.shell` for bash, spawned by
// this package's Rust spawner. A drop-in for @deepseek-ai/dsh-bash-local:
// the same class name, config, `resolve()`, results and handles, and the
// same `runArgv`/`startArgv`/`onProcessDone` for subclasses. Each command
// runs as `bash -c <command>`.

import z from '@deepseek-ai/schemastery'

import { COMMON_CONFIG, NativeShellExecutor, assertServiceableConfig } from './local.mjs'

/**
 * What a non-interactive model shell gets, as the reference sets it: no
 * colours, no pager, a dumb terminal. A caller's own `env` entry still wins.
 */
export const ENV_OVERRIDES = Object.freeze({ NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' })

/** The local bash executor (`ctx.shell`). */
export class LocalBashExecutor extends NativeShellExecutor {
  static label = 'bash-local'
  static envOverrides = ENV_OVERRIDES
  static Config = z.object(COMMON_CONFIG)

  /** `bash -c <command>`. */
  argv(spec) {
    return ['bash', '-c', spec.command]
  }
}

/** Refuses a config this executor could not run with (the reference's name). */
export function assertServiceableBashConfig(config) {
  assertServiceableConfig(LocalBashExecutor.label, config)
}

export default LocalBashExecutor
