'use strict'

// execute(): what is refused before anything runs. Spawn errors (a missing or
// unusable workdir, a missing program, a file that is not executable) and
// invalid specs, each ERR_SHELL_EXEC_INVALID_SPEC naming the field, with
// nothing started. Real child processes, no mocks. Runs unchanged under
// `vitest run` (globals: true) and `jest`.
//
// Conventions (see helpers.cjs): errors are checked with
// `util.types.isNativeError` (Jest runs this file in its own realm), never
// `instanceof`. Assertions on shapes the issue leaves open are marked
// `// shape chosen by the implementation` (they follow README.md).

const fs = require('node:fs')
const path = require('node:path')
const { getSystemErrorMap, types } = require('node:util')

const { rejected, thrown, expectCode, trustedScratch } = require('./helpers.cjs')
const { delay } = require('./process-helpers.cjs')
const { posix } = require('./platform.cjs')
const { T, script, registry } = require('./execute-helpers.cjs')

const { execute, buildEnvironment } = require('..')

let TMP
beforeAll(() => {
  // Command directories live here too: somewhere no other user can write.
  TMP = trustedScratch('dsh-exec-spec-')
})
afterAll(() => {
  fs.rmSync(TMP, { recursive: true, force: true })
})

// ---------------------------------------------------------------------------

describe('spawn errors', () => {
  it('a missing workdir or a file as workdir: ERR_SHELL_EXEC_INVALID_WORKDIR', async () => {
    const missing = path.join(TMP, 'no-such-dir')
    expectCode(await rejected(() => execute({ command: 'true', workdir: missing })), 'ERR_SHELL_EXEC_INVALID_WORKDIR', missing)
    const file = path.join(TMP, 'a-file')
    fs.writeFileSync(file, '')
    expectCode(await rejected(() => execute({ command: 'true', workdir: file })), 'ERR_SHELL_EXEC_INVALID_WORKDIR', file)
  }, T)

  it("a missing program: ERR_SHELL_EXEC_SPAWN_FAILED with cause.code 'ENOENT' and Node's own errno for it", async () => {
    // libuv's number, as child_process gives it: -2 on Linux, -4058 on Windows.
    const [enoent] = [...getSystemErrorMap()].find(([, [name]]) => name === 'ENOENT')
    for (const spec of [
      { command: ['exec-spec-no-such-program'] },
      { command: [path.join(TMP, 'no-such-program')] },
      { command: 'true', shell: path.join(TMP, 'no-such-shell') },
    ]) {
      const error = await rejected(() => execute(spec))
      expectCode(error, 'ERR_SHELL_EXEC_SPAWN_FAILED')
      expect(types.isNativeError(error.cause)).toBe(true)
      expect(error.cause.code).toBe('ENOENT')
      expect(error.cause.errno).toBe(enoent)
    }
  }, T)

  posix.it("a file that is not executable: cause.code 'EACCES' (directly and found on PATH)", async () => {
    const dir = path.join(TMP, 'not-executable')
    const file = script(dir, 'exec-spec-not-executable', 'echo ran', 0o644)
    const direct = await rejected(() => execute({ command: [file] }))
    expectCode(direct, 'ERR_SHELL_EXEC_SPAWN_FAILED')
    expect(direct.cause.code).toBe('EACCES')
    const onPath = await rejected(() => execute({ command: ['exec-spec-not-executable'], env: { PATH: `${dir}:/usr/bin:/bin` } }))
    expectCode(onPath, 'ERR_SHELL_EXEC_SPAWN_FAILED')
    expect(onPath.cause.code).toBe('EACCES')
  }, T)
})

describe('invalid specs: ERR_SHELL_EXEC_INVALID_SPEC naming the field, and nothing started', () => {
  const markers = []
  /** A valid spec whose command would leave a marker file behind. */
  const base = (overrides) => {
    const marker = path.join(TMP, `invalid-spec-marker-${markers.length}`)
    markers.push(marker)
    return { command: `touch '${marker}'`, ...overrides }
  }
  const fake = { aborted: false }
  const cases = [
    ['command missing', () => base({ command: undefined }), 'command'],
    ['command an empty array', () => base({ command: [] }), 'command'],
    ['command with a non-string element', () => base({ command: ['touch', 5] }), 'command[1]'],
    ['command a number', () => base({ command: 42 }), 'command'],
    ['command null', () => base({ command: null }), 'command'],
    ['shell empty', () => base({ shell: '' }), 'shell'],
    ['shell dot-relative', () => base({ shell: './bash' }), 'shell'],
    ['shell relative', () => base({ shell: 'bin/bash' }), 'shell'],
    ['shell not a string', () => base({ shell: 5 }), 'shell'],
    ['timeoutMs 0', () => base({ timeoutMs: 0 }), 'timeoutMs'],
    ['timeoutMs -1', () => base({ timeoutMs: -1 }), 'timeoutMs'],
    ['timeoutMs NaN', () => base({ timeoutMs: NaN }), 'timeoutMs'],
    ['timeoutMs Infinity', () => base({ timeoutMs: Infinity }), 'timeoutMs'],
    ["timeoutMs '5'", () => base({ timeoutMs: '5' }), 'timeoutMs'],
    ['graceMs -1', () => base({ graceMs: -1 }), 'graceMs'],
    ['graceMs NaN', () => base({ graceMs: NaN }), 'graceMs'],
    ['graceMs Infinity', () => base({ graceMs: Infinity }), 'graceMs'],
    ["graceMs '5'", () => base({ graceMs: '5' }), 'graceMs'],
    ['stdoutMaxBytes 1.5', () => base({ stdoutMaxBytes: 1.5 }), 'stdoutMaxBytes'],
    ['stdoutMaxBytes -1', () => base({ stdoutMaxBytes: -1 }), 'stdoutMaxBytes'],
    ['stdoutMaxBytes NaN', () => base({ stdoutMaxBytes: NaN }), 'stdoutMaxBytes'],
    ["stdoutMaxBytes '10'", () => base({ stdoutMaxBytes: '10' }), 'stdoutMaxBytes'],
    ['stderrMaxBytes 2.5', () => base({ stderrMaxBytes: 2.5 }), 'stderrMaxBytes'],
    ['stderrMaxBytes Infinity', () => base({ stderrMaxBytes: Infinity }), 'stderrMaxBytes'],
    ['spillMaxBytes 0.5', () => base({ spillMaxBytes: 0.5 }), 'spillMaxBytes'],
    ['spillMaxBytes -1', () => base({ spillMaxBytes: -1 }), 'spillMaxBytes'],
    ["onExpiry 'never'", () => base({ onExpiry: 'never' }), 'onExpiry'],
    ['onExpiry a boolean', () => base({ onExpiry: false }), 'onExpiry'],
    ['stdin a number', () => base({ stdin: 5 }), 'stdin'],
    ['stdin a plain object', () => base({ stdin: { length: 1 } }), 'stdin'],
    ['stdin an array', () => base({ stdin: [104, 105] }), 'stdin'],
    ['stdin a Uint16Array', () => base({ stdin: new Uint16Array([1, 2]) }), 'stdin'],
    ['env not an object', () => base({ env: 'FOO=1' }), 'env'],
    ['env with a number value', () => base({ env: { EXEC_SPEC_FOO: 1 } }), 'env.EXEC_SPEC_FOO'],
    ['env with a null value', () => base({ env: { EXEC_SPEC_FOO: null } }), 'env.EXEC_SPEC_FOO'],
    ['env with a name containing =', () => base({ env: { 'A=B': 'x' } }), 'env.A=B'],
    ['env with a NUL in a value', () => base({ env: { EXEC_SPEC_FOO: 'a\0b' } }), 'env.EXEC_SPEC_FOO'],
    ['dshEnv not an object', () => base({ dshEnv: 'DSH_X=1' }), 'dshEnv'],
    ['dshEnv with a non-managed key', () => base({ dshEnv: { HOME: '/x' } }), 'dshEnv.HOME'],
    ['dshEnv with a lower-case key', () => base({ dshEnv: { dsh_x: 'x' } }), 'dshEnv.dsh_x'],
    ['dshEnv with a non-string value', () => base({ dshEnv: { DSH_X: 5 } }), 'dshEnv.DSH_X'],
    ['scrub not an object', () => base({ scrub: 'core' }), 'scrub'],
    ["scrub.inherit 'some'", () => base({ scrub: { inherit: 'some' } }), 'scrub.inherit'],
    ['scrub.inherit a number', () => base({ scrub: { inherit: 1 } }), 'scrub.inherit'],
    ['scrub.exclude a string', () => base({ scrub: { exclude: '*KEY*' } }), 'scrub.exclude'],
    ['scrub.exclude with a number', () => base({ scrub: { exclude: ['*KEY*', 5] } }), 'scrub.exclude[1]'],
    ['scrub.includeOnly a string', () => base({ scrub: { includeOnly: 'PATH' } }), 'scrub.includeOnly'],
    ['scrub.hardening a string', () => base({ scrub: { hardening: 'yes' } }), 'scrub.hardening'],
    ['terminalEnv true', () => base({ terminalEnv: true }), 'terminalEnv'],
    ['terminalEnv a string', () => base({ terminalEnv: 'dumb' }), 'terminalEnv'],
    ['terminalEnv with a non-string value', () => base({ terminalEnv: { TERM: 5 } }), 'terminalEnv.TERM'],
    ['onOutput not a function', () => base({ onOutput: 'console.log' }), 'onOutput'],
    ['onOutput an object', () => base({ onOutput: {} }), 'onOutput'],
    ['signal not an AbortSignal', () => base({ signal: fake }), 'signal'],
    ['signal a string', () => base({ signal: 'abort' }), 'signal'],
    ['signal an AbortController', () => base({ signal: new AbortController() }), 'signal'],
    ['registry a plain object', () => base({ registry: { collect: () => ({}) } }), 'registry'],
    ['registry a string', () => base({ registry: 'shellEnv' }), 'registry'],
    ['registry a look-alike class instance', () => base({ registry: new (class ShellEnvRegistry {})() }), 'registry'],
    ['workdir not a string', () => base({ workdir: 5 }), 'workdir'],
    ['workdir empty', () => base({ workdir: '' }), 'workdir'],
    // shape chosen by the implementation: registry and dshEnv together are refused
    ['registry together with dshEnv', () => base({ registry: registry(), dshEnv: {} }), 'registry'],
  ]

  it.each(cases)('%s', async (_title, makeSpec, field) => {
    const spec = makeSpec()
    let promise
    expect(() => {
      promise = execute(spec)
    }).not.toThrow()
    const error = await rejected(() => promise)
    expectCode(error, 'ERR_SHELL_EXEC_INVALID_SPEC', field)
  }, T)

  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'touch x'],
  ])('a spec that is %s', async (_title, spec) => {
    expectCode(await rejected(() => execute(spec)), 'ERR_SHELL_EXEC_INVALID_SPEC')
  }, T)

  it('none of the rejected specs started anything (no marker file appeared)', async () => {
    await delay(500)
    expect(markers.length).toBeGreaterThan(50)
    expect(markers.filter((marker) => fs.existsSync(marker))).toEqual([])
  }, T)

  it('the same fields are checked by buildEnvironment()', () => {
    expectCode(thrown(() => buildEnvironment({ env: { X: 1 } })), 'ERR_SHELL_EXEC_INVALID_SPEC', 'env.X')
    expectCode(thrown(() => buildEnvironment({ scrub: { inherit: 'x' } })), 'ERR_SHELL_EXEC_INVALID_SPEC', 'scrub.inherit')
    expectCode(thrown(() => buildEnvironment({ terminalEnv: { TERM: 1 } })), 'ERR_SHELL_EXEC_INVALID_SPEC', 'terminalEnv.TERM')
    expectCode(thrown(() => buildEnvironment({ dshEnv: { HOME: '/' } })), 'ERR_SHELL_EXEC_INVALID_SPEC', 'dshEnv.HOME')
  })
})
