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
} = pkg
export default pkg
