// Type test for index.d.ts: compiled with `tsc -p __test__/types/tsconfig.json`.
// Every `@ts-expect-error` line must fail to compile, every other line must compile.

import {
  DSH_ENV_PREFIX,
  RESERVED_KEYS,
  ShellEnvRegistry,
  buildEnvironment,
  execute,
  limitMechanisms,
  reconcileDshHome,
  resolveDshHome,
  type BuiltEnvironment,
  type DshEnvironment,
  type DshEnvironmentKey,
  type ShellEnvCatalog,
  type ShellEnvContributor,
  type ShellExecSpec,
  type ShellExecSpecField,
  type ShellExecution,
  type ShellLimitName,
  type ShellLimits,
  type ShellLimitsField,
  type ShellRunResult,
  type ShellScrub,
  type ShellScrubField,
  type ShellStreamResult,
} from '../..'

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
function assertType<T extends true>(_proof?: T): void {}

// ── DSH_ENV_PREFIX and DshEnvironmentKey ─────────────────────────────────────
assertType<Equal<typeof DSH_ENV_PREFIX, 'DSH_'>>()
assertType<Equal<DshEnvironmentKey, `${typeof DSH_ENV_PREFIX}${string}`>>()

const region: DshEnvironmentKey = 'DSH_REGION'
const home: DshEnvironmentKey = 'DSH_HOME'
// @ts-expect-error: not DSH_-prefixed
const plainHome: DshEnvironmentKey = 'HOME'
// @ts-expect-error: the prefix is case-sensitive
const lowerCase: DshEnvironmentKey = 'dsh_region'
// @ts-expect-error: PATH is no managed key
const pathKey: DshEnvironmentKey = 'PATH'

// ── DshEnvironment ────────────────────────────────────────────────────────────
assertType<Equal<DshEnvironment, Readonly<Record<DshEnvironmentKey, string>>>>()

// ── RESERVED_KEYS ─────────────────────────────────────────────────────────────
const firstReserved: DshEnvironmentKey = RESERVED_KEYS[0]
// @ts-expect-error: frozen, so typed read-only
RESERVED_KEYS.push('DSH_EXTRA')

// ── home helpers ──────────────────────────────────────────────────────────────
const h1: string = resolveDshHome()
const h2: string = resolveDshHome('~/dsh')
const h3: string = resolveDshHome(undefined, { DSH_HOME: '/opt/dsh' })
const h4: string = resolveDshHome('/opt/dsh', process.env)
const r1: string = reconcileDshHome()
const r2: string = reconcileDshHome('/a', '/b')
// @ts-expect-error: the home is a string
resolveDshHome(42)

// ── ShellEnvRegistry ──────────────────────────────────────────────────────────
const registry = new ShellEnvRegistry({ dshHome: '/opt/dsh', profile: { name: 'work', dir: '/profiles/work' } })
new ShellEnvRegistry({})
const dshHome: string = registry.dshHome
// @ts-expect-error: a profile needs a dir
new ShellEnvRegistry({ profile: { name: 'work' } })

type Execution = Parameters<ShellEnvRegistry['collect']>[0]
const noAgent: Execution = {}
const withAgent: Execution = { agent: { session: { header: { id: 'session-1' } } } }

const dispose: () => void = registry.register({
  name: 'deployment-region',
  variables: { DSH_DEPLOYMENT_REGION: { description: 'Current deployment region.' } },
  resolve: (execution) => (execution.agent === undefined ? {} : { DSH_DEPLOYMENT_REGION: 'cn-north' }),
})
dispose()

registry.register({
  name: 'session-echo',
  variables: { DSH_ECHO: { description: 'echoes the session id' }, DSH_OTHER: { description: 'other' } },
  commandDirectories: ['/opt/tools/bin'],
  resolve: (execution) => {
    const id: string | undefined = execution.agent?.session.header.id
    return id === undefined ? {} : { DSH_ECHO: id }
  },
})

registry.register({
  name: 'async',
  variables: { DSH_ASYNC: { description: 'async' } },
  resolve: async () => ({ DSH_ASYNC: 'value' }),
})

// A contributor's resolve can only return its declared keys…
// @ts-expect-error: DSH_UNDECLARED is not declared
registry.register({ name: 'x', variables: { DSH_DECLARED: { description: 'd' } }, resolve: () => ({ DSH_UNDECLARED: 'v' }) })
// @ts-expect-error: DSH_UNDECLARED is not declared (async resolver)
registry.register({ name: 'x', variables: { DSH_DECLARED: { description: 'd' } }, resolve: async () => ({ DSH_UNDECLARED: 'v' }) })
// …with string values only
// @ts-expect-error: values are strings
registry.register({ name: 'x', variables: { DSH_DECLARED: { description: 'd' } }, resolve: () => ({ DSH_DECLARED: 42 }) })
// @ts-expect-error: declared keys are DSH_-prefixed
registry.register({ name: 'x', variables: { HOME: { description: 'd' } }, resolve: () => ({}) })
// @ts-expect-error: every declared key needs a description
registry.register({ name: 'x', variables: { DSH_DECLARED: {} }, resolve: () => ({}) })

// The generic contributor type.
const contributor: ShellEnvContributor<'DSH_A' | 'DSH_B'> = {
  name: 'typed',
  variables: { DSH_A: { description: 'a' }, DSH_B: { description: 'b' } },
  resolve: () => ({ DSH_A: 'a' }),
}
registry.register(contributor)
// @ts-expect-error: resolve returns a key outside DSH_A
const undeclared: ShellEnvContributor<'DSH_A'> = { name: 'u', variables: { DSH_A: { description: 'a' } }, resolve: () => ({ DSH_B: 'b' }) }
// @ts-expect-error: DSH_B is in K but not declared
const missingDeclaration: ShellEnvContributor<'DSH_A' | 'DSH_B'> = { name: 'm', variables: { DSH_A: { description: 'a' } }, resolve: () => ({}) }
// @ts-expect-error: K must be a DshEnvironmentKey
type NotManaged = ShellEnvContributor<'HOME'>

// collect / collectAsync
const snapshot: DshEnvironment = registry.collect(withAgent)
const snapshot2: DshEnvironment = registry.collect(noAgent, { inheritedPath: '/usr/bin' })
const regionValue: string | undefined = snapshot.DSH_REGION
// @ts-expect-error: the snapshot is read-only
snapshot.DSH_HOME = '/elsewhere'
const pending: Promise<DshEnvironment> = registry.collectAsync(withAgent, {
  timeoutMs: 100,
  signal: new AbortController().signal,
  inheritedPath: '/usr/bin',
})
registry.collectAsync(noAgent)
// @ts-expect-error: timeoutMs is a number
registry.collectAsync(noAgent, { timeoutMs: '100' })
// @ts-expect-error: collect is synchronous
const notAPromise: Promise<DshEnvironment> = registry.collect(noAgent)

// list / catalog
const listed: ReadonlyArray<{ contributor: string; description: string; key: string }> = registry.list()
const firstKey: DshEnvironmentKey | undefined = registry.list()[0]?.key
type CatalogVariable = ReturnType<ShellEnvRegistry['catalog']>['variables'][number] // shape chosen by the implementation
assertType<Equal<CatalogVariable['when'], 'always' | 'agent' | 'profile' | 'resolver'>>()
const owner: string = registry.catalog().variables[0].owner
const catalogKey: DshEnvironmentKey = registry.catalog().variables[0].key
const directories: ReadonlyArray<{ contributor: string; directories: ReadonlyArray<string> }> =
  registry.catalog().commandDirectories // shape chosen by the implementation

export {}

// ── buildEnvironment takes what the runtime takes ─────────────────────────────
const built: BuiltEnvironment = buildEnvironment({ command: 'make test', env: { CI: '1' } })
buildEnvironment({})
buildEnvironment({ dshEnv: { DSH_HOME: '/srv/dsh' }, scrub: { inherit: 'core' } }, { PATH: '/usr/bin', UNSET: undefined })
// @ts-expect-error: buildEnvironment collects nothing; pass dshEnv
buildEnvironment({ registry: new ShellEnvRegistry() })
// @ts-expect-error: no such spec field
buildEnvironment({ cwd: '/tmp' })

// ── limits: the spec field, the result fields, limitMechanisms() ─────────────
void execute({ command: 'make test', limits: { memoryBytes: 512 * 2 ** 20, processes: 64, cpuSeconds: 30, fileBytes: 2 ** 30, openFiles: 256 } })
// @ts-expect-error: sizes are numbers of bytes, not strings
void execute({ command: 'make test', limits: { memoryBytes: '512M' } })
// @ts-expect-error: no such limit
void execute({ command: 'make test', limits: { memory: 1 } })
assertType<Equal<ShellLimitName, 'memory' | 'processes' | 'cpu' | 'fileSize' | 'openFiles'>>()
assertType<Equal<ShellRunResult['limit'], ShellLimitName | null>>()
assertType<Equal<ShellRunResult['limitsHit'], ShellLimitName[]>>()
assertType<Equal<ShellRunResult['limitsTampered'], ShellLimitName[]>>()
const mechanisms = limitMechanisms({ cpuSeconds: 30 })
assertType<Equal<(typeof mechanisms)[number]['mechanism'], string | null>>()
assertType<Equal<(typeof mechanisms)[number]['covers'], string | null>>()
assertType<Equal<(typeof mechanisms)[number]['tampering'], 'held' | 'reported' | 'unreported' | null>>()
assertType<Equal<(typeof mechanisms)[number]['tamperingNote'], string | null>>()
assertType<Equal<(typeof mechanisms)[number]['field'], 'memoryBytes' | 'processes' | 'cpuSeconds' | 'fileBytes' | 'openFiles'>>()

// ── shapes declared once: each hand-written input interface has exactly the
// fields the core reads (their names are generated from the core's lists),
// and the result shapes are the binding's own ──────────────────────────────
assertType<Equal<keyof ShellExecSpec, ShellExecSpecField>>()
assertType<Equal<keyof ShellLimits, ShellLimitsField>>()
assertType<Equal<keyof ShellScrub, ShellScrubField>>()
assertType<Equal<keyof ShellStreamResult, 'text' | 'truncated' | 'spillPath' | 'spillError'>>()
assertType<Equal<ShellRunResult['endedAfterExit'], number>>()
assertType<Equal<ShellRunResult['stdout'], ShellStreamResult>>()
assertType<Equal<ShellRunResult['abortReason'], unknown>>()
assertType<Equal<ReturnType<ShellExecution['readFrom']>['nextOffset'], number>>()
assertType<Equal<ShellEnvCatalog['commandDirectories'][number]['directories'], string[]>>()
