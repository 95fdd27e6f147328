// ESM entry point: the same objects as the CommonJS one.
import pkg from './index.js'

export const {
  DSH_ENV_PREFIX,
  RESERVED_KEYS,
  ShellEnvRegistry,
  ShellExecution,
  buildEnvironment,
  execute,
  reconcileDshHome,
  resolveDshHome,
  // The Cordis plugin (cordis.js).
  name,
  inject,
  Config,
  apply,
  ShellEnvService,
} = pkg
export default pkg
