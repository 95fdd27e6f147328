// `@deepseek-ai/dsh-shell-env/pwsh-local`: `ctx.shell` for PowerShell,
// spawned by this package's Rust spawner. A drop-in for
// @deepseek-ai/dsh-pwsh-local: the same class name, config (`pwshPath`
// included), `resolve()`, results and handles. Each command runs as
// `pwsh -NoLogo -NoProfile -NonInteractive -Command <utf-8 preamble><command>`.

import { lstatSync } from 'node:fs'
import { join } from 'node:path'

import z from '@deepseek-ai/schemastery'

import { COMMON_CONFIG, NativeShellExecutor, assertServiceableConfig } from './local.mjs'

const kPwsh = Symbol('PwshLocalExecutor.pwsh')

/** As the reference sets them: no colours, no pager. */
export const ENV_OVERRIDES = Object.freeze({ NO_COLOR: '1', PAGER: 'cat', GIT_PAGER: 'cat' })

/** Makes PowerShell read and write UTF-8 without a byte-order mark. */
export const ENCODING_PREAMBLE =
  '[Console]::OutputEncoding = [System.Text.UTF8Encoding]::new($false); $OutputEncoding = [System.Text.UTF8Encoding]::new($false); '

function candidatePwshPaths(env) {
  const programFiles = env.ProgramFiles ?? 'C:\\Program Files'
  const systemRoot = env.SystemRoot ?? 'C:\\Windows'
  const candidates = [join(programFiles, 'PowerShell', '7', 'pwsh.exe')]
  for (const entry of (env.PATH ?? '').split(';')) {
    const trimmed = entry.trim().replace(/^"|"$/g, '')
    if (trimmed.length > 0) candidates.push(join(trimmed, 'pwsh.exe'))
  }
  candidates.push(join(systemRoot, 'System32', 'WindowsPowerShell', 'v1.0', 'powershell.exe'))
  return candidates
}

function candidateExists(candidate) {
  try {
    const stat = lstatSync(candidate)
    return stat.isFile() || stat.isSymbolicLink()
  } catch {
    return false
  }
}

/**
 * The PowerShell to run, as the reference picks it: the configured path;
 * else on Windows PowerShell 7, a `pwsh.exe` on PATH, then Windows
 * PowerShell; else `pwsh`, looked up on the child's PATH.
 */
export function resolvePwshPath(configured, env = process.env, platform = process.platform) {
  if (configured !== undefined && configured.length > 0) return configured
  if (platform === 'win32') {
    for (const candidate of candidatePwshPaths(env)) if (candidateExists(candidate)) return candidate
  }
  return 'pwsh'
}

/** The local PowerShell executor (`ctx.shell`). */
export class PwshLocalExecutor extends NativeShellExecutor {
  static label = 'pwsh-local'
  static envOverrides = ENV_OVERRIDES
  static Config = z.object({ ...COMMON_CONFIG, pwshPath: z.string() })

  constructor(ctx, config) {
    super(ctx, config)
    Object.defineProperty(this, kPwsh, { value: { declared: undefined, path: undefined } })
    this.configChanged()
  }

  /** The PowerShell every command runs through. */
  get pwshPath() {
    return this[kPwsh].path
  }

  configChanged() {
    // Cordis calls through a proxy, so the state sits under a symbol; the
    // settings section may report a change before the constructor made it.
    const pwsh = this[kPwsh]
    if (pwsh === undefined) return
    const declared = /** @type {{ pwshPath?: string }} */ (this.config).pwshPath
    if (pwsh.path !== undefined && declared === pwsh.declared) return
    pwsh.declared = declared
    pwsh.path = resolvePwshPath(declared)
  }

  argv(spec) {
    return [this.pwshPath, '-NoLogo', '-NoProfile', '-NonInteractive', '-Command', `${ENCODING_PREAMBLE}${spec.command}`]
  }
}

/** Refuses a config this executor could not run with (the reference's name). */
export function assertServiceablePwshConfig(config) {
  assertServiceableConfig(PwshLocalExecutor.label, config)
}

export default PwshLocalExecutor
