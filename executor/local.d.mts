// Types of the native local executors' shared part (executor/local.mjs).
import type { Context } from '@deepseek-ai/cordis'
import type { StandardSchemaV1 } from '@standard-schema/spec'
import { ShellExecutor, type ShellExecRequest, type ShellExecSpec, type ShellProcess, type ShellProcessRead, type ShellProcessStatus, type ShellRunResult } from '@deepseek-ai/dsh-shell'

/** The config both executors accept; the defaults are the reference executors'. */
export interface LocalExecutorConfig {
  /** Default working directory (else `process.cwd()`). */
  cwd?: string
  /** Default foreground timeout, ms (120 000). */
  timeoutMs?: number
  /** Cap on a requested timeout, ms (600 000). */
  maxTimeoutMs?: number
  /** Bytes of each stream kept in memory (64 000). */
  maxOutputBytes?: number
  /** Largest spill file per stream (64 MiB). */
  maxSpillBytes?: number
  /** SIGTERM→SIGKILL grace, ms (3 000). */
  graceMs?: number
  /** Absolute directory for spill files (default: the system temp directory). */
  spillDir?: string
  /**
   * Resource limits of every command (none by default), as `execute()` takes
   * them; a request from trusted code may override each with its own
   * `limits`. A limit this host cannot enforce is refused here, with
   * `ERR_SHELL_EXEC_INVALID_CONFIG`.
   */
  limits?: import('../index.js').ShellLimits
}

/** A request the executors take: the seam's, with per-request limits from trusted code. */
export type LocalExecRequest = ShellExecRequest & { limits?: import('../index.js').ShellLimits }

/** What a command's limits did, one line each for the model (`[killed: memory limit 512 MiB]`, `[limit tampered with: …]`); empty when none acted. */
export declare function limitNotice(result: { limit: import('../index.js').ShellLimitName | null; limitsHit?: readonly import('../index.js').ShellLimitName[]; limitsTampered?: readonly import('../index.js').ShellLimitName[]; endedAfterExit?: number }, limits?: import('../index.js').ShellLimits): string

/** The config fields both executors share, as schemastery schemas with the reference's defaults (internal). */
export declare const COMMON_CONFIG: Record<keyof LocalExecutorConfig, unknown>

/** Refuses a resolved config the executor could not run with (internal). */
export declare function assertServiceableConfig(label: string, config: LocalExecutorConfig): void

/** A config schema as Cordis and the settings service use it: a Standard Schema that is also callable. */
export interface ConfigSchema<C> extends StandardSchemaV1<C, C> {
  (config?: C): C
}

/** A background process handle. */
export declare class LocalShellProcess implements ShellProcess {
  status: ShellProcessStatus
  exitCode: number | null
  signal: NodeJS.Signals | null
  readonly done: Promise<void>
  readOutput(): ShellProcessRead
  kill(): boolean
}

/** The shared native executor: `ctx.shell` on this package's Rust spawner. */
export declare abstract class NativeShellExecutor<C extends LocalExecutorConfig = LocalExecutorConfig> extends ShellExecutor {
  static inject: string[]
  constructor(ctx: Context, config?: C)
  /** The config in force (the settings section's, else the composition's). */
  readonly config: Required<Omit<C, 'cwd' | 'spillDir' | 'limits'>> & Pick<C, 'cwd' | 'spillDir' | 'limits'>
  resolve(request: LocalExecRequest): ShellExecSpec
  run(spec: ShellExecSpec): Promise<ShellRunResult>
  start(spec: ShellExecSpec): ShellProcess
  /** Runs an exact argv with `run()`'s semantics (for subclasses that wrap the command). */
  runArgv(spec: ShellExecSpec, argv: readonly string[]): Promise<ShellRunResult>
  /** Starts an exact argv with `start()`'s semantics. */
  startArgv(spec: ShellExecSpec, argv: readonly string[]): ShellProcess
  /** Called once a background process settled, before `done` resolves. */
  onProcessDone(proc: ShellProcess, stderr: string, spawnFailed: boolean, spawnError?: unknown): void
  /** The argv one command runs as. */
  abstract argv(spec: ShellExecSpec): string[]
}
