// Public types of @deepseek-ai/dsh-shell-env.

// The shapes the package returns are declared once, by the binding's Rust
// structs (binding.d.ts is generated from them), and re-exported here.
import type {
  Interruption,
  LimitMechanism,
  ShellEnvCatalog,
  ShellEnvCatalogEntry,
  ShellEnvCommandDirectories,
  ShellEnvListEntry,
  ShellOutputDelta,
  ShellOutputRead,
  ShellStreamResult,
  UntrustedDirectory,
  ShellRunResult as NativeRunResult,
} from './binding'

export type {
  Interruption,
  LimitMechanism,
  ShellEnvCatalog,
  ShellEnvCatalogEntry,
  ShellEnvCommandDirectories,
  ShellEnvListEntry,
  ShellOutputDelta,
  ShellOutputRead,
  ShellStreamResult,
  UntrustedDirectory,
}

/** Every managed variable starts with this prefix. */
export declare const DSH_ENV_PREFIX: 'DSH_'

/** A managed variable name: `DSH_` followed by upper-case letters, digits and underscores. */
export type DshEnvironmentKey = `${typeof DSH_ENV_PREFIX}${string}`

/** Managed variables: frozen, keys sorted. */
export type DshEnvironment = Readonly<Record<DshEnvironmentKey, string>>

/** What a collection returns: the managed variables, plus `PATH` when contributors declare command directories. */
export type DshSnapshot = DshEnvironment & { readonly PATH?: string }

/** The keys only the registry itself sets. */
export type ReservedKey = 'DSH_HOME' | 'DSH_SHELL' | 'DSH_SESSION_ID' | 'DSH_PROFILE' | 'DSH_PROFILE_DIR'

/** `DSH_HOME, DSH_SHELL, DSH_SESSION_ID, DSH_PROFILE, DSH_PROFILE_DIR` (frozen). */
export declare const RESERVED_KEYS: readonly ReservedKey[]

/**
 * The tool execution a shell call belongs to. Only `agent.session.header.id` is
 * read by the registry; resolvers receive the very object passed in, so any
 * other field a harness adds reaches them intact. The harness's own
 * `ToolExecution` (`@deepseek-ai/dsh-tools`) is one; so is `{}` (no agent).
 */
export interface ToolExecution {
  readonly agent?: { readonly session: { readonly header: { readonly id: string } } } | null
}

/** The profile the harness was launched with. */
export interface ShellEnvProfile {
  /** Profile name, exposed as `DSH_PROFILE`. */
  name: string
  /** Absolute profile directory, exposed as `DSH_PROFILE_DIR`. */
  dir: string
}

/** Options of `new ShellEnvRegistry()`: its config. */
export type ShellEnvRegistryOptions = ShellEnvConfig

/** What a resolver may return: only declared keys, each a string. */
export type ResolvedValues<K extends DshEnvironmentKey> = Partial<Record<K, string>>

/** A plugin's contribution: its keys, their descriptions, and how to compute them per call. */
export interface ShellEnvContributor<K extends DshEnvironmentKey = DshEnvironmentKey, E extends ToolExecution = ToolExecution> {
  /** Stable, unique contributor name; resolvers run in code-point order of names. */
  name: string
  /** Every key the resolver may return, each with a non-blank description. */
  variables: { readonly [Key in K]: { description: string } }
  /** Absolute directories prepended to the child's PATH, in this order. */
  commandDirectories?: readonly string[]
  /** Computes values for one execution. May be async for `collectAsync()` and `execute()`. */
  resolve(execution: E): ResolvedValues<NoInfer<K>> | PromiseLike<ResolvedValues<NoInfer<K>>>
}

/** Options of `collect()`. */
export interface CollectOptions {
  /** PATH appended after command directories; default the calling thread's `process.env.PATH`. */
  inheritedPath?: string
}

/** Options of `collectAsync()`. */
export interface CollectAsyncOptions extends CollectOptions {
  /** Deadline for all resolvers together, in ms (default 5000). */
  timeoutMs?: number
  /** Aborts the collection (`ERR_SHELL_ENV_ABORTED`). */
  signal?: AbortSignal
}

/**
 * The registry of managed `DSH_*` variables, and the Cordis service
 * `ctx.shellEnv`.
 *
 * - `new ShellEnvRegistry(ctx, config?)`, `ctx.plugin(ShellEnvRegistry, config)`
 *   or `ctx.plugin(shellEnvModule, config)` provides `ctx.shellEnv` for the
 *   lifetime of `ctx`'s fiber; through any plugin's `ctx.shellEnv`, a
 *   registration or command belongs to that plugin.
 * - `new ShellEnvRegistry(config?)` is a registry of its own, without Cordis.
 *
 * Throws `ERR_SHELL_ENV_INVALID_OPTION` (unknown or wrongly typed field,
 * named) or `ERR_SHELL_ENV_INVALID_PROFILE`, with nothing provided.
 */
export declare class ShellEnvRegistry {
  /** Loaded as a class plugin, the registry needs no other service. */
  static readonly inject: string[]
  /** The config schema Cordis reads for a class plugin. */
  static readonly Config: ShellEnvConfigSchema
  constructor(ctx: CordisContextLike, config?: ShellEnvConfig)
  // Last: TypeScript 7 reports only the last overload of a call that matches
  // none, and a mistake in a config (`{ dshhome }`) must be told as one
  // ("Did you mean to write 'dshHome'?"), not as a wrong context.
  constructor(config?: ShellEnvConfig)
  /** The providing context; through `ctx.shellEnv`, the caller's. `undefined` without Cordis. */
  readonly ctx: ShellEnvContext | undefined
  /** Absolute Harness home, resolved once at construction. */
  readonly dshHome: string
  /**
   * Registers a contributor; returns an idempotent disposer. Under Cordis the
   * registration also ends when the calling plugin is disposed.
   */
  register<K extends DshEnvironmentKey, E extends ToolExecution = ToolExecution>(contributor: ShellEnvContributor<K, E>): () => void
  /** The managed environment for one execution; resolvers must be synchronous. */
  collect(execution: ToolExecution, options?: CollectOptions): DshSnapshot
  /** The managed environment for one execution; resolvers may be async. */
  collectAsync(execution: ToolExecution, options?: CollectAsyncOptions): Promise<DshSnapshot>
  /** Plugin-declared variables sorted by key; no resolver runs. */
  list(): ShellEnvListEntry[]
  /** Every variable a call can receive, built-ins included, and command directories. */
  catalog(): ShellEnvCatalog
  /**
   * Every registered command directory that cannot be trusted now: owned by
   * another user, writable by its group or others, or inside (or linked
   * through) such a directory. Collections leave these out of PATH and warn
   * once per directory (`DSH_SHELL_ENV_UNTRUSTED_DIRECTORY`).
   */
  untrustedDirectories(): UntrustedDirectory[]
  /**
   * Collects for `execution` (else `spec.execution`, else `{}`: no agent) right
   * before the spawn, then runs `spec`. Under Cordis the command belongs to
   * the calling plugin: disposing that plugin kills it if it still runs.
   */
  execute(spec: ShellEnvExecSpec, execution?: ToolExecution): Promise<ShellExecution>
}

/** `configured` (non-empty), else a non-blank `env.DSH_HOME`, else `~/.dsh`; absolute and normalised. */
export declare function resolveDshHome(configured?: string, env?: Record<string, string | undefined>): string

/** The resolved home; throws `ERR_SHELL_ENV_HOME_CONFLICT` when both are given and differ. */
export declare function reconcileDshHome(top?: string, skillsLocal?: string): string

/** How the inherited environment is filtered; only inherited variables are ever dropped by it. */
export interface ShellScrub {
  /** `all` (default) keeps everything; `core` keeps PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TMPDIR, TEMP, TMP, TZ (and Windows' basics); `none` keeps nothing. */
  inherit?: 'all' | 'core' | 'none'
  /** `false` keeps credentials, which go by default: names such as `*KEY*`, `*TOKEN*`, `*_PWD`, `*WEBHOOK*`, `SSH_AUTH_SOCK`, and values shaped like one (a URL with a password, `ghp_…`, `AKIA…`, a JWT, …). */
  defaultExclude?: boolean
  /** Case-insensitive globs (`*`, `?`) of more names to drop, on top of the credentials. */
  exclude?: string[]
  /** When given, only inherited names matching one of these globs survive. */
  includeOnly?: string[]
  /** `false` keeps what makes programs run code chosen by whoever set it (`BASH_ENV`, `LD_*`, `NODE_OPTIONS`, `GIT_CONFIG_*`, …), which goes by default. */
  hardening?: boolean
}

/** Live output: decoded text; a multi-byte character is never split across chunks. */
export interface ShellOutputChunk {
  stream: 'stdout' | 'stderr'
  text: string
}

/** What to run and how. */
export interface ShellExecSpec {
  /** A string runs through `shell`; an array is argv, run directly. */
  command: string | readonly string[]
  /**
   * `'bash'` (default), `'sh'`, `'pwsh'`, `'powershell'`, `'cmd'` (Windows:
   * `cmd.exe /d /s /c`), any other shell's name (`'zsh'`, run with `-c`),
   * looked up only in the absolute entries of the PATH without command
   * directories, as bash is; or an absolute path to a shell. A relative path
   * is refused. Strings only.
   */
  shell?: 'bash' | 'sh' | 'pwsh' | 'powershell' | 'cmd' | (string & {})
  /** Working directory; default `process.cwd()`. */
  workdir?: string
  /** Milliseconds before the group is killed; default 120000. */
  timeoutMs?: number
  /** `'none'`: no timer at all (background jobs). Default `'kill'`. */
  onExpiry?: 'kill' | 'none'
  /** Milliseconds between SIGTERM and SIGKILL to the group; default 3000. 0 sends SIGKILL alone. */
  graceMs?: number
  /** Aborts the run (an already-aborted signal stops the child at once). */
  signal?: AbortSignal
  /** Written to the child's stdin, which is then closed; absent: `/dev/null`. */
  stdin?: string | Uint8Array
  /**
   * Streams this package does not capture: `stdin: 'pipe'` gives
   * `ShellExecution.stdin` to write (instead of `stdin`'s bytes);
   * `stdout`/`stderr` `'pipe'` give the raw stream as `ShellExecution.stdout`/
   * `stderr` (nothing is captured; read it, or the child blocks on a full
   * pipe), `'inherit'` passes the host's own through; `'capture'` is the
   * default. Windows too: there a `'pipe'` needs a host that exports libuv's
   * `uv_open_osfhandle`, as Node does (else `ERR_SHELL_EXEC_UNSUPPORTED`).
   */
  stdio?: { stdin?: 'pipe'; stdout?: 'capture' | 'pipe' | 'inherit'; stderr?: 'capture' | 'pipe' | 'inherit' }
  /** With `registry`: how long its collection may take before the call fails (`ERR_SHELL_ENV_RESOLVER_TIMEOUT`), in ms; default 5000. */
  collectTimeoutMs?: number
  /** Bytes of stdout kept in memory (the tail); default 64000. */
  stdoutMaxBytes?: number
  /** Bytes of stderr kept in memory (the tail); default 64000. */
  stderrMaxBytes?: number
  /** Largest spill file per stream; default 64 MiB. */
  spillMaxBytes?: number
  /** Absolute directory the private spill directory is made in; default the system temp directory. */
  spillDir?: string
  /** Keep spill files when the result is garbage-collected: removed by `removeSpillFile()` or at the host's exit. */
  keepSpillFiles?: boolean
  /** Explicit variables; `undefined` removes an inherited one. A `DSH_*` name here reaches the child only as the managed snapshot's value. */
  env?: Record<string, string | undefined>
  /** The managed snapshot, merged last: managed `DSH_*` keys and `PATH` only. */
  dshEnv?: DshSnapshot
  /** Instead of `dshEnv`: collect from this registry right before the spawn. */
  registry?: ShellEnvRegistry
  /** The execution the registry collects for (default `{}`). */
  execution?: ToolExecution
  /** How the inherited environment is filtered. */
  scrub?: ShellScrub
  /** Variables for a non-interactive terminal; default `{ NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' }`. */
  terminalEnv?: Record<string, string> | false
  /** Receives output as it arrives. */
  onOutput?: (chunk: ShellOutputChunk) => void
  /**
   * Resource limits of the command, each enforced by the strongest mechanism
   * the host has (see docs/process.md); a limit the host cannot enforce is
   * refused with `ERR_SHELL_EXEC_UNSUPPORTED`. None by default.
   */
  limits?: ShellLimits
}

/** Per-command resource limits: whole numbers. */
export interface ShellLimits {
  /**
   * Bytes of memory: for the whole command with a cgroup or a Windows job,
   * else per process and private memory only (`RLIMIT_DATA`: shared
   * mappings, memfds and `/dev/shm` files are not counted); at least 1 MiB.
   */
  memoryBytes?: number
  /**
   * Processes the command may have at once (a cgroup's `pids.max`, a job's
   * `ActiveProcessLimit`); refused without either. Under `pids.max` every
   * thread counts as one: a shell needs 1, Node 7 (11 once its thread pool
   * runs), the JVM about 20 (docs/process.md).
   */
  processes?: number
  /** CPU seconds of each process (`RLIMIT_CPU`: SIGXCPU at the limit, SIGKILL a second later), or the whole command's user time on Windows. */
  cpuSeconds?: number
  /** The largest file a process may write (`RLIMIT_FSIZE`): SIGXFSZ beyond it. Refused on Windows. */
  fileBytes?: number
  /** Descriptors each process may have open (`RLIMIT_NOFILE`); at least 3. Refused on Windows. */
  openFiles?: number
}

/** How a command ended. */
export interface ShellRunResult extends NativeRunResult {
  /** When `aborted`: the reason the spec's signal was aborted with (`signal.reason`). */
  abortReason?: unknown
}

/** A running or finished command. */
export declare class ShellExecution {
  private constructor()
  readonly pid: number
  readonly status: ExecutionStatus
  readonly exitCode: number | null
  readonly signal: string | null
  /** Settles (never rejects) once the whole process group is gone. */
  readonly done: Promise<void>
  /** SIGTERM to the group, SIGKILL after the grace; `true` once while running. */
  kill(): boolean
  /**
   * Output produced since the previous call (`lossy`: something was dropped or
   * replaced), and each stream's spill file once it started spilling.
   */
  readOutput(): ShellOutputDelta
  /**
   * A captured stream's text from whole-stream byte `fromByte` on, consuming
   * nothing (any number of readers, also after the end): `lossy` when the
   * offset slid out of the tail kept in memory (the whole tail is returned).
   */
  readFrom(stream: 'stdout' | 'stderr', fromByte: number): ShellOutputRead
  /** The child's stdin with `stdio.stdin: 'pipe'`, else `null`. */
  readonly stdin: import('node:stream').Writable | null
  /** The child's raw stdout with `stdio.stdout: 'pipe'`, else `null`. */
  readonly stdout: import('node:stream').Readable | null
  /** The child's raw stderr with `stdio.stderr: 'pipe'`, else `null`. */
  readonly stderr: import('node:stream').Readable | null
  /**
   * Lets the host's event loop end while the command runs, as `child_process`'s
   * `unref()` does; the command then ends with the host. Returns the execution.
   */
  unref(): this
  /** Undoes `unref()`: the running command keeps the host alive again. Returns the execution. */
  ref(): this
  /** Whether the command is running and keeps the host's event loop alive. */
  hasRef(): boolean
  /** The result; the same promise on every call, never rejects. */
  result(): Promise<ShellRunResult>
}

/**
 * Starts a command; resolves once the child runs, rejects with a coded error and nothing started.
 * The command's process group ends with the host: at its exit, and when it is stopped by SIGINT,
 * SIGTERM or SIGHUP that nothing else listens for (the package listens while commands run).
 */
export declare function execute(spec: ShellExecSpec): Promise<ShellExecution>

// BEGIN vocabularies: generated from the core crate's enums (crates/core/src/vocabulary.rs); do not edit.

/** Which step put a variable into the child's environment. */
export type EnvironmentSource = 'inherited' | 'terminal' | 'explicit' | 'managed'

/** Why a variable was removed: the first step of the pipeline that removed it. */
export type RemovalReason = 'unrepresentable' | 'managed-prefix' | 'inherit' | 'credential' | 'secret-value' | 'public-prefix-secret' | 'exclude' | 'hardening' | 'include-only' | 'explicit-unset' | 'unmanaged'

/** When a catalog variable is present: `always`; `agent` (agent calls); `profile` (a profile was given); `resolver` (when its resolver returns it). */
export type VariableAvailability = 'always' | 'agent' | 'profile' | 'resolver'

/** Where a command is in its life. */
export type ExecutionStatus = 'running' | 'completed' | 'killed'

/** A limit, as a result names it. */
export type ShellLimitName = 'memory' | 'processes' | 'cpu' | 'fileSize' | 'openFiles'

/** Every field of `ShellExecSpec`: what `execute()` reads; any other is refused. */
export type ShellExecSpecField = 'command' | 'shell' | 'workdir' | 'timeoutMs' | 'onExpiry' | 'graceMs' | 'signal' | 'stdin' | 'stdoutMaxBytes' | 'stderrMaxBytes' | 'spillMaxBytes' | 'spillDir' | 'keepSpillFiles' | 'env' | 'dshEnv' | 'registry' | 'execution' | 'scrub' | 'terminalEnv' | 'onOutput' | 'stdio' | 'collectTimeoutMs' | 'limits'

/** Every field of `ShellLimits`. */
export type ShellLimitsField = 'memoryBytes' | 'processes' | 'cpuSeconds' | 'fileBytes' | 'openFiles'

/** Every field of `ShellScrub`. */
export type ShellScrubField = 'inherit' | 'defaultExclude' | 'exclude' | 'includeOnly' | 'hardening'

// END vocabularies

/** The environment `execute()` would give the child. */
export interface BuiltEnvironment {
  env: Record<string, string>
  sources: Record<string, EnvironmentSource>
  removed: { key: string; reason: RemovalReason }[]
}

/**
 * Removes a spill file kept with `keepSpillFiles`, and its directory once
 * empty. Only this process's own spill files are removed; `false` for any
 * other path.
 */
export declare function removeSpillFile(path: string): boolean

/**
 * The same pipeline as `execute()`, without spawning. `spec` may be a whole
 * `execute()` spec (only `env`, `dshEnv`, `scrub` and `terminalEnv` matter),
 * but not one with `registry` or `execution`: nothing is collected here, so
 * pass the snapshot as `dshEnv`.
 */
export declare function buildEnvironment(
  spec: Partial<Omit<ShellExecSpec, 'registry' | 'execution'>>,
  parentEnv?: Record<string, string | undefined>,
): BuiltEnvironment

/**
 * Every limit with the mechanism this host enforces it with (asking the
 * supervisor, started if none runs, which cgroup controllers commands get),
 * what that mechanism covers, and what a command can do against it
 * (`tampering`: `'held'`, `'reported'` in a result's `limitsTampered`, or
 * `'unreported'`). `limits`, when given, is checked as `execute()` checks it.
 */
export declare function limitMechanisms(limits?: ShellLimits): LimitMechanism[]

/** Every `.code` this package's errors carry. */
export type ShellEnvErrorCode =
  | 'ERR_SHELL_ENV_INVALID_NAME'
  | 'ERR_SHELL_ENV_INVALID_CONTRIBUTOR'
  | 'ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR'
  | 'ERR_SHELL_ENV_INVALID_KEY'
  | 'ERR_SHELL_ENV_RESERVED_KEY'
  | 'ERR_SHELL_ENV_MISSING_DESCRIPTION'
  | 'ERR_SHELL_ENV_DUPLICATE_KEY'
  | 'ERR_SHELL_ENV_INVALID_DIRECTORY'
  | 'ERR_SHELL_ENV_INVALID_PROFILE'
  | 'ERR_SHELL_ENV_HOME_CONFLICT'
  | 'ERR_SHELL_ENV_INVALID_EXECUTION'
  | 'ERR_SHELL_ENV_INVALID_OPTION'
  | 'ERR_SHELL_ENV_UNDECLARED_KEY'
  | 'ERR_SHELL_ENV_NON_STRING_VALUE'
  | 'ERR_SHELL_ENV_INVALID_VALUE'
  | 'ERR_SHELL_ENV_INVALID_RESULT'
  | 'ERR_SHELL_ENV_RESOLVER_FAILED'
  | 'ERR_SHELL_ENV_ASYNC_RESOLVER'
  | 'ERR_SHELL_ENV_RESOLVER_TIMEOUT'
  | 'ERR_SHELL_ENV_ABORTED'
  | 'ERR_SHELL_EXEC_INVALID_SPEC'
  | 'ERR_SHELL_EXEC_INVALID_WORKDIR'
  | 'ERR_SHELL_EXEC_INVALID_SPILL_DIR'
  | 'ERR_SHELL_EXEC_SPAWN_FAILED'
  | 'ERR_SHELL_EXEC_UNSUPPORTED'
  | 'ERR_SHELL_EXEC_SUPERVISOR_MISMATCH'
  | 'ERR_SHELL_EXEC_INVALID_CONFIG'
  | 'ERR_SHELL_EXEC_INVALID_REQUEST'
  | 'ERR_SHELL_ENV_NATIVE_BINARY_MISSING'

/** An error thrown or rejected by this package. */
export interface ShellEnvError extends Error {
  code: ShellEnvErrorCode
  /**
   * The resolver's own error for `ERR_SHELL_ENV_RESOLVER_FAILED`; the OS error
   * (`code: 'ENOENT'`, `errno`, `syscall`, `path`) for `ERR_SHELL_EXEC_SPAWN_FAILED`
   * (`syscall: 'spawn'`), `ERR_SHELL_EXEC_INVALID_WORKDIR` and
   * `ERR_SHELL_EXEC_INVALID_SPILL_DIR` (`syscall: 'stat'`).
   */
  cause?: unknown
}

// ── Cordis ────────────────────────────────────────────────────────────────────
// Both Cordis packages are optional peer dependencies: `@deepseek-ai/cordis`
// (the harness's own) and `cordis`. Each import is ignored where the package
// is not installed (its type is then `any`), and each augmentation merges
// `shellEnv` into that package's own `Context` where it is.
// @ts-ignore -- optional peer dependency
import type { Context as HarnessContext } from '@deepseek-ai/cordis'
// @ts-ignore -- optional peer dependency
import type { Context as UpstreamContext } from 'cordis'
import type { StandardSchemaV1 } from '@standard-schema/spec'

/** A Cordis context of either package. */
export type ShellEnvContext = HarnessContext | UpstreamContext

/**
 * What the registry's constructor takes as a context: any Cordis context of
 * either line has this shape, and a config, a number or a string does not.
 * Taken by shape because the `Context` of a Cordis package that is not
 * installed is `any` here, which would let anything pass as one.
 */
export interface CordisContextLike {
  provide(name: string, ...rest: any[]): unknown
  set(name: string, value: any): unknown
  plugin(plugin: any, ...rest: any[]): unknown
}

/** Config of the registry and of the plugin. */
export interface ShellEnvConfig {
  /** Absolute Harness home exposed as `DSH_HOME`; default `$DSH_HOME`, then `~/.dsh`. */
  dshHome?: string
  /** Adds `DSH_PROFILE` and `DSH_PROFILE_DIR` to every call. */
  profile?: ShellEnvProfile
}

/** Plugin name. */
export declare const name: 'shell-env'
/** The plugin needs no other service. */
export declare const inject: string[]
/**
 * The schema of `ShellEnvConfig`: a schemastery schema at run time (its
 * descriptions are there for tools that read them), declared here by what
 * Cordis uses of it, a Standard Schema (cordis 4) that is also callable
 * (cordis 3).
 */
export interface ShellEnvConfigSchema extends StandardSchemaV1<ShellEnvConfig, ShellEnvConfig> {
  (config?: ShellEnvConfig): ShellEnvConfig
}
/** The schema of the plugin's config. */
export declare const Config: ShellEnvConfigSchema
/** Plugin entry: provides `ctx.shellEnv` for the lifetime of `ctx`'s fiber. */
export declare function apply(ctx: ShellEnvContext, config?: ShellEnvConfig): void

/** What `ctx.shellEnv.execute()` accepts: the service supplies the managed environment itself. */
export type ShellEnvExecSpec = Omit<ShellExecSpec, 'dshEnv' | 'registry'>

// The names the TypeScript original (0.1.0-rc.8) exports, for code written against it.
/** The plugin config (the original's name). */
export type Config = ShellEnvConfig
/** One declared variable of a contributor (the original's name). */
export interface BashEnvVariable {
  /** What the variable holds. */
  description: string
}
/** A contributor (the original's name). */
export type BashEnvContributor<K extends DshEnvironmentKey = DshEnvironmentKey, E extends ToolExecution = ToolExecution> = ShellEnvContributor<K, E>
/** An entry of `list()` (the original's name). */
export type BashEnvVariableInfo = ShellEnvListEntry

// @ts-ignore -- optional peer dependency
declare module '@deepseek-ai/cordis' {
  interface Context {
    shellEnv: ShellEnvRegistry
  }
}

// @ts-ignore -- optional peer dependency
declare module 'cordis' {
  interface Context {
    shellEnv: ShellEnvRegistry
  }
}
