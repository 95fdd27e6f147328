// ESM entry point: the same objects as the CommonJS one.
import pkg from './index.js'

export const {
  DSH_ENV_PREFIX,
  RESERVED_KEYS,
  ShellEnvRegistry,
  ShellExecution,
  buildEnvironment,
  execute,
  limitMechanisms,
  reconcileDshHome,
  removeSpillFile,
  resolveDshHome,
  // The Cordis plugin: `ctx.plugin(await import('@deepseek-ai/dsh-shell-env'), config)`.
  name,
  inject,
  Config,
  apply,
} = pkg
export default pkg
