'use strict'

// execute() with a registry: the collection runs right before the spawn, with
// async resolvers, for the execution given; a background job keeps the values
// of its start; a failing resolver starts nothing; and under 200 concurrent
// executions each sees only its own dshEnv or collection. Real child
// processes, no mocks. Runs unchanged under `vitest run` (globals: true) and
// `jest`.
//
// Conventions (see helpers.cjs): errors are checked with
// `util.types.isNativeError` (Jest runs this file in its own realm), never
// `instanceof`. Assertions on shapes the issue leaves open are marked
// `// shape chosen by the implementation` (they follow README.md).

const fs = require('node:fs')
const path = require('node:path')

const { rejected, expectCode, agentExecution, trustedScratch } = require('./helpers.cjs')
const { delay, run, untilOutput } = require('./process-helpers.cjs')
const { posix } = require('./platform.cjs')
const { T, HOME, childEnv, script, registry } = require('./execute-helpers.cjs')

const { execute } = require('..')

let TMP
beforeAll(() => {
  // Command directories live here too: somewhere no other user can write.
  TMP = trustedScratch('dsh-exec-spec-')
})
afterAll(() => {
  fs.rmSync(TMP, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------

describe('registry + execution', () => {
  posix.it('collects right before the spawn, with async resolvers, for the execution given', async () => {
    const reg = registry({ profile: { name: 'work', dir: '/profiles/work' } })
    const tools = path.join(TMP, 'registry-bin')
    script(tools, 'exec-spec-registry-tool', 'echo "tool:$DSH_EXEC_SPEC_REGION"')
    let region = 'at-spec-creation'
    let returned = false
    const calls = []
    reg.register({
      name: 'region',
      variables: { DSH_EXEC_SPEC_REGION: { description: 'the region' } },
      commandDirectories: [tools],
      resolve: async (execution) => {
        calls.push({ execution, afterExecuteReturned: returned })
        await delay(20)
        return { DSH_EXEC_SPEC_REGION: region }
      },
    })
    const execution = agentExecution('registry-run')
    const spec = {
      command: 'exec-spec-registry-tool; printf "%s\\n" "$DSH_SESSION_ID" "$DSH_PROFILE" "$DSH_PROFILE_DIR" "$DSH_HOME" "$DSH_SHELL" "$PATH"',
      registry: reg,
      execution,
    }
    region = 'at-execute'
    const pending = execute(spec)
    returned = true
    region = 'right-before-spawn' // the resolvers run through threadsafe functions, after this line
    const started = await pending
    const { stdout, stderr } = await started.result()
    expect(stderr.text).toBe('')
    const [tool, session, profile, profileDir, home, shell, childPath] = stdout.text.split('\n')
    expect(tool).toBe('tool:right-before-spawn')
    expect({ session, profile, profileDir, home, shell }).toEqual({
      session: 'registry-run',
      profile: 'work',
      profileDir: '/profiles/work',
      home: HOME,
      shell: '1',
    })
    expect(childPath.split(':')[0]).toBe(tools)
    expect(calls).toHaveLength(1)
    expect(calls[0].execution).toBe(execution)
    expect(calls[0].afterExecuteReturned).toBe(true)
  }, T)

  posix.it("a background job (onExpiry: 'none') sees the values as of its start", async () => {
    const reg = registry()
    let value = 'when-spec-was-built'
    reg.register({
      name: 'clock',
      variables: { DSH_EXEC_SPEC_VALUE: { description: 'changes over time' } },
      resolve: () => Promise.resolve({ DSH_EXEC_SPEC_VALUE: value }),
    })
    const flag = path.join(TMP, 'background-flag')
    const spec = {
      command: 'echo "start:$DSH_EXEC_SPEC_VALUE"; while [ ! -e "$EXEC_SPEC_FLAG" ]; do sleep 0.02; done; echo "later:$DSH_EXEC_SPEC_VALUE"',
      env: { EXEC_SPEC_FLAG: flag },
      registry: reg,
      execution: agentExecution('background'),
      onExpiry: 'none',
      timeoutMs: 50, // no timer at all with onExpiry 'none'
    }
    value = 'at-start'
    const background = await execute(spec)
    await untilOutput(background, 'start:at-start')
    value = 'after-start'
    await delay(200) // longer than timeoutMs: it must not fire
    fs.writeFileSync(flag, '')
    const result = await background.result()
    expect(result.stdout.text).toBe('start:at-start\nlater:at-start\n')
    expect(result.timedOut).toBe(false)
    expect(result.exitCode).toBe(0)
    expect(background.status).toBe('completed')
    // shape chosen by the implementation: no timer is reported as timeoutMs null
    expect(result.timeoutMs).toBe(null)
    const next = await childEnv({ registry: reg })
    expect(next.DSH_EXEC_SPEC_VALUE).toBe('after-start')
    expect(next.DSH_SESSION_ID).toBeUndefined() // no agent: no session id
  }, T)

  it('a failing resolver rejects execute() with the registry’s code, and nothing starts', async () => {
    const reg = registry()
    const cause = new Error('resolver broke')
    reg.register({
      name: 'broken',
      variables: { DSH_EXEC_SPEC_BROKEN: { description: 'never resolves' } },
      resolve: async () => {
        throw cause
      },
    })
    const marker = path.join(TMP, 'resolver-failed-marker')
    const error = await rejected(() => execute({ command: ['touch', marker], registry: reg }))
    expectCode(error, 'ERR_SHELL_ENV_RESOLVER_FAILED', 'broken')
    expect(error.cause).toBe(cause)
    await delay(200)
    expect(fs.existsSync(marker)).toBe(false)
  }, T)
})

posix.describe('concurrency', () => {
  it('200 concurrent executions each see only their own dshEnv session id', async () => {
    const count = 200
    const runs = Array.from({ length: count }, (_, i) =>
      run({
        command: 'printf "%s|%s" "$DSH_SESSION_ID" "$EXEC_SPEC_INDEX"',
        dshEnv: { DSH_SESSION_ID: `session-${i}` },
        env: { EXEC_SPEC_INDEX: String(i) },
        stdin: `stdin-${i}`,
      }),
    )
    const results = await Promise.all(runs)
    results.forEach(({ result }, i) => {
      expect(result.exitCode).toBe(0)
      expect(result.stdout.text).toBe(`session-${i}|${i}`)
    })
  }, 120_000)

  it('200 concurrent registry executions each see only their own collection', async () => {
    const reg = registry()
    reg.register({
      name: 'per-call',
      variables: { DSH_EXEC_SPEC_CALL: { description: 'the call index' } },
      resolve: async (execution) => {
        await delay(Math.floor(Math.random() * 20))
        return { DSH_EXEC_SPEC_CALL: String(execution.index) }
      },
    })
    const count = 200
    const runs = Array.from({ length: count }, (_, i) =>
      run({
        command: 'printf "%s|%s" "$DSH_SESSION_ID" "$DSH_EXEC_SPEC_CALL"',
        registry: reg,
        execution: agentExecution(`session-${i}`, { index: i }),
      }),
    )
    const results = await Promise.all(runs)
    results.forEach(({ result }, i) => {
      expect(result.stdout.text).toBe(`session-${i}|${i}`)
    })
  }, 120_000)
})
