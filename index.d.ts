// Public types of @deepseek-ai/dsh-shell-env.

/** Every managed variable starts with this prefix. */
export declare const DSH_ENV_PREFIX: 'DSH_'

/** A managed variable name: `DSH_` followed by upper-case letters, digits and underscores. */
export type DshEnvironmentKey = `${typeof DSH_ENV_PREFIX}${string}`

/** A managed snapshot: frozen, keys sorted. `PATH` is present when contributors declare command directories. */
export type DshEnvironment = Readonly<Record<DshEnvironmentKey, string>> & { readonly PATH?: string }

/** The keys only the registry itself sets. */
export type ReservedKey = 'DSH_HOME' | 'DSH_SHELL' | 'DSH_SESSION_ID' | 'DSH_PROFILE' | 'DSH_PROFILE_DIR'

/** `DSH_HOME, DSH_SHELL, DSH_SESSION_ID, DSH_PROFILE, DSH_PROFILE_DIR` (frozen). */
export declare const RESERVED_KEYS: readonly ReservedKey[]

/**
 * The tool execution a shell call belongs to. Only `agent.session.header.id` is
 * read by the registry; resolvers receive the very object passed in, so any
 * other field a harness adds reaches them intact.
 */
export interface ToolExecution {
  agent?: { session: { header: { id: string } } } | null
  [field: string]: unknown
}

/** The profile the harness was launched with. */
export interface ShellEnvProfile {
  /** Profile name, exposed as `DSH_PROFILE`. */
  name: string
  /** Absolute profile directory, exposed as `DSH_PROFILE_DIR`. */
  dir: string
}

/** Options of `new ShellEnvRegistry()`. */
export interface ShellEnvRegistryOptions {
  /** Harness home; default `$DSH_HOME`, then `~/.dsh`. */
  dshHome?: string
  /** Adds `DSH_PROFILE` and `DSH_PROFILE_DIR` to every call. */
  profile?: ShellEnvProfile
}

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
  resolve(execution: E): ResolvedValues<K> | PromiseLike<ResolvedValues<K>>
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

/** A plugin-declared variable. */
export interface ShellEnvListEntry {
  contributor: string
  description: string
  key: DshEnvironmentKey
}

/** A variable a shell call can receive, built-ins included. */
export interface ShellEnvCatalogEntry {
  key: DshEnvironmentKey
  description: string
  /** `'built-in'` or the declaring contributor. */
  owner: string
  /** `always`; `agent` (agent calls); `profile` (a profile was given); `resolver` (when its resolver returns it). */
  when: 'always' | 'agent' | 'profile' | 'resolver'
}

/** Everything a shell call can receive. */
export interface ShellEnvCatalog {
  /** Sorted by key. */
  variables: ShellEnvCatalogEntry[]
  /** In contributor-name order. */
  commandDirectories: { contributor: string; directories: string[] }[]
}

/** The registry of managed `DSH_*` variables. */
export declare class ShellEnvRegistry {
  constructor(options?: ShellEnvRegistryOptions)
  /** Absolute Harness home, resolved once at construction. */
  readonly dshHome: string
  /** Registers a contributor; returns an idempotent disposer. */
  register<K extends DshEnvironmentKey, E extends ToolExecution = ToolExecution>(contributor: ShellEnvContributor<K, E>): () => void
  /** The managed environment for one execution; resolvers must be synchronous. */
  collect(execution: ToolExecution, options?: CollectOptions): DshEnvironment
  /** The managed environment for one execution; resolvers may be async. */
  collectAsync(execution: ToolExecution, options?: CollectAsyncOptions): Promise<DshEnvironment>
  /** Plugin-declared variables sorted by key; no resolver runs. */
  list(): ShellEnvListEntry[]
  /** Every variable a call can receive, built-ins included, and command directories. */
  catalog(): ShellEnvCatalog
}

/** `configured` (non-empty), else a non-blank `env.DSH_HOME`, else `~/.dsh`; absolute and normalised. */
export declare function resolveDshHome(configured?: string, env?: Record<string, string | undefined>): string

/** The resolved home; throws `ERR_SHELL_ENV_HOME_CONFLICT` when both are given and differ. */
export declare function reconcileDshHome(top?: string, skillsLocal?: string): string

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

/** An error thrown or rejected by this package. */
export interface ShellEnvError extends Error {
  code: ShellEnvErrorCode
  /** The resolver's own error, for `ERR_SHELL_ENV_RESOLVER_FAILED`. */
  cause?: unknown
}
