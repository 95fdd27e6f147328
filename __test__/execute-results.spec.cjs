'use strict'

// execute(): the exports, and the results and options a caller reaches for.
// An abort's reason, collectTimeoutMs, raw stdio pipes and offset reads, the
// ShellExecution handle (result(), done, readOutput(), onOutput), output caps
// and spill files, and spill files gone with the process. Real child
// processes, no mocks. Runs unchanged under `vitest run` (globals: true) and
// `jest`.
//
// Conventions (see helpers.cjs): errors are checked with
// `util.types.isNativeError` (Jest runs this file in its own realm), never
// `instanceof`. Assertions on shapes the issue leaves open are marked
// `// shape chosen by the implementation` (they follow README.md).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { ROOT, FIXTURES, rejected, expectCode, runNode, lastJsonLine, trustedScratch } = require('./helpers.cjs')
const { delay, waitFor, run } = require('./process-helpers.cjs')
const { WINDOWS, LINUX, gate, posix, nodeArgv } = require('./platform.cjs')

/** The supervisor's reapers count what a command leaves running (Linux, with its program beside the addon). */
const supervised = gate(LINUX && fs.existsSync(path.join(ROOT, 'dsh-shell-env-supervisor')), 'the supervisor (Linux)')
const { T, ENV_PROGRAM, HOME } = require('./execute-helpers.cjs')

const { execute, buildEnvironment, ShellEnvRegistry, ShellExecution } = require('..')

let TMP
beforeAll(() => {
  // Flag files live here: somewhere no other user can write.
  TMP = trustedScratch('dsh-exec-spec-')
})
afterAll(() => {
  fs.rmSync(TMP, { recursive: true, force: true })
})

// Helpers.

/** Deterministic multi-line text of about `bytes` bytes. */
function lines(bytes, prefix = 'line') {
  let text = ''
  for (let i = 0; text.length < bytes; i++) text += `${prefix}-${String(i).padStart(6, '0')}\n`
  return text
}

/** The longest suffix of `text` of at most `maxBytes` UTF-8 bytes that starts on a character. */
function utf8Tail(text, maxBytes) {
  const bytes = Buffer.from(text, 'utf8')
  let start = Math.max(0, bytes.length - maxBytes)
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++
  return bytes.subarray(start).toString('utf8')
}

// ---------------------------------------------------------------------------

describe('exports', () => {
  it('execute, buildEnvironment and ShellExecution are functions', () => {
    expect(typeof execute).toBe('function')
    expect(typeof buildEnvironment).toBe('function')
    expect(typeof ShellExecution).toBe('function')
    if (posix.runs) expect(ENV_PROGRAM).toBeDefined() // env(1), which the POSIX cases print the environment with
  })

  it('execute() returns a promise resolving to a running ShellExecution', async () => {
    const promise = execute({ command: WINDOWS ? nodeArgv('setTimeout(() => {}, 30_000)') : 'sleep 30', timeoutMs: 20_000 })
    expect(typeof promise.then).toBe('function')
    const execution = await promise
    expect(Number.isInteger(execution.pid)).toBe(true)
    expect(execution.pid).toBeGreaterThan(0)
    expect(execution.status).toBe('running')
    expect(execution.exitCode).toBe(null)
    expect(execution.signal).toBe(null)
    expect(typeof execution.done.then).toBe('function')
    expect(execution.kill()).toBe(true)
    await execution.done
    expect(execution.status).toBe('killed')
  }, T)
})

describe('results and options a caller reaches for', () => {
  posix.it("an abort's reason is in the result", async () => {
    const controller = new AbortController()
    const reason = new Error('user cancelled')
    const execution = await execute({ command: 'sleep 30', signal: controller.signal, graceMs: 100 })
    controller.abort(reason)
    const result = await execution.result()
    expect(result.aborted).toBe(true)
    expect(result.abortReason).toBe(reason)
    const plain = await (await execute({ command: 'true' })).result()
    expect('abortReason' in plain).toBe(false)
  }, T)

  it('collectTimeoutMs bounds the registry collection, and is refused without a registry', async () => {
    const registry = new ShellEnvRegistry({ dshHome: HOME })
    registry.register({ name: 'slow', variables: { DSH_EXEC_SPEC_SLOW: { description: 'slow' } }, resolve: () => new Promise((resolve) => setTimeout(() => resolve({}), 2000)) })
    const started = Date.now()
    const error = await rejected(() => execute({ command: 'true', registry, collectTimeoutMs: 100 }))
    expectCode(error, 'ERR_SHELL_ENV_RESOLVER_TIMEOUT', 'slow')
    expect(Date.now() - started).toBeLessThan(1500)
    expectCode(await rejected(() => execute({ command: 'true', collectTimeoutMs: 100 })), 'ERR_SHELL_EXEC_INVALID_SPEC', 'collectTimeoutMs')
    expectCode(await rejected(() => execute({ command: 'true', registry, collectTimeoutMs: 0 })), 'ERR_SHELL_EXEC_INVALID_SPEC', 'collectTimeoutMs')
  }, T)
})

describe('stdio: raw pipes and inherited streams', () => {
  it("stdio 'pipe' hands the child's own streams over as Node streams; nothing of them is captured", async () => {
    const upper = nodeArgv("let text = ''; process.stdin.on('data', (d) => (text += d)).on('end', () => { process.stdout.write(text.toUpperCase()); process.stderr.write('done\\n') })")
    const execution = await execute({ command: upper, stdio: { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' } })
    let out = ''
    let err = ''
    execution.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk))
    execution.stderr.setEncoding('utf8').on('data', (chunk) => (err += chunk))
    execution.stdin.end('piped')
    // The streams are the caller's: read to their end, not only to the result.
    const ended = (stream) => new Promise((resolve) => stream.once('end', resolve))
    const [result] = await Promise.all([execution.result(), ended(execution.stdout), ended(execution.stderr)])
    expect({ out, err, exitCode: result.exitCode, captured: result.stdout.text + result.stderr.text }).toEqual({ out: 'PIPED', err: 'done\n', exitCode: 0, captured: '' })
    const captured = await execute({ command: nodeArgv('') })
    expect([captured.stdin, captured.stdout, captured.stderr]).toEqual([null, null, null])
  }, T)

  it("stdio 'inherit' writes to the host's own stdout and stderr; nothing of them is captured", () => {
    const child = nodeArgv("process.stdout.write('child out\\n'); process.stderr.write('child err\\n')")
    const host = `require(${JSON.stringify(ROOT)})
      .execute({ command: ${JSON.stringify(child)}, stdio: { stdout: 'inherit', stderr: 'inherit' } })
      .then((execution) => execution.result())
      .then((result) => console.log(JSON.stringify({ exitCode: result.exitCode, captured: result.stdout.text + result.stderr.text })))`
    const run = runNode(['-e', host], { timeout: T })
    expect(run.status).toBe(0)
    expect(run.stdout).toContain('child out\n')
    expect(run.stderr).toBe('child err\n')
    expect(lastJsonLine(run.stdout)).toEqual({ exitCode: 0, captured: '' })
  }, T)
})

posix.describe('stdio: offset reads', () => {
  it('readFrom() reads a captured stream from an offset without consuming it, lossy once the offset left the tail', async () => {
    const execution = await execute({ command: 'printf 0123456789', stdoutMaxBytes: 4 })
    await execution.result()
    expect(execution.readFrom('stdout', 7)).toEqual({ text: '789', nextOffset: 10, lossy: false, spillPath: expect.any(String) })
    expect(execution.readFrom('stdout', 0)).toEqual({ text: '6789', nextOffset: 10, lossy: true, spillPath: expect.any(String) })
    expect(execution.readFrom('stderr', 0)).toEqual({ text: '', nextOffset: 0, lossy: false })
  }, T)

  it.each([
    ['stdin a value and a pipe', { stdin: 'x', stdio: { stdin: 'pipe' } }, 'stdio.stdin'],
    ['an unknown stdout mode', { stdio: { stdout: 'file' } }, 'stdio.stdout'],
    ['an unknown stdio field', { stdio: { stdn: 'pipe' } }, 'stdio.stdn'],
  ])('refuses %s with ERR_SHELL_EXEC_INVALID_SPEC naming the field', async (_title, spec, field) => {
    expectCode(await rejected(() => execute({ command: 'true', ...spec })), 'ERR_SHELL_EXEC_INVALID_SPEC', field)
  })
})

posix.describe('the ShellExecution handle', () => {
  it('result() is the same promise every call and settles with the same object; done resolves to undefined', async () => {
    const execution = await execute({ command: 'echo out; echo err >&2; exit 4' })
    const first = execution.result()
    expect(execution.result()).toBe(first)
    const done = await execution.done
    expect(done).toBeUndefined()
    const result = await first
    expect(await execution.result()).toBe(result)
    expect(result).toEqual({
      exitCode: 4,
      signal: null,
      timedOut: false,
      aborted: false,
      interrupted: null,
      limit: null,
      limitsHit: [],
      limitsTampered: [],
      endedAfterExit: 0,
      timeoutMs: 120_000,
      durationMs: result.durationMs,
      stdout: { text: 'out\n', truncated: false },
      stderr: { text: 'err\n', truncated: false },
    })
    expect(result.stdout.spillPath).toBeUndefined()
  }, T)

  supervised.it('endedAfterExit counts the processes a command left running, which the package ended; 0 when it left none', async () => {
    const left = await (await execute({ command: 'sleep 30 & sleep 31 & echo started' })).result()
    expect({ exitCode: left.exitCode, endedAfterExit: left.endedAfterExit, stdout: left.stdout.text }).toEqual({ exitCode: 0, endedAfterExit: 2, stdout: 'started\n' })
    const waited = await (await execute({ command: 'sleep 0.1 & wait' })).result()
    expect(waited.endedAfterExit).toBe(0)
  }, T)

  it('done never rejects: killed, timed out, aborted, died by a signal', async () => {
    const controller = new AbortController()
    const killed = await execute({ command: 'sleep 30' })
    const timedOut = await execute({ command: 'sleep 30', timeoutMs: 100 })
    const aborted = await execute({ command: 'sleep 30', signal: controller.signal })
    const signalled = await execute({ command: 'kill -KILL $$' })
    killed.kill()
    controller.abort()
    const settled = await Promise.allSettled([killed, timedOut, aborted, signalled].flatMap((e) => [e.done, e.result()]))
    for (const outcome of settled) expect(outcome.status).toBe('fulfilled')
    for (const execution of [killed, timedOut, aborted]) expect(execution.status).toBe('killed')
    expect(signalled.status).toBe('completed')
  }, T)

  it('readOutput() returns the output produced since the previous call', async () => {
    const flag = path.join(TMP, 'read-output-flag')
    const execution = await execute({
      command: 'echo one; echo e1 >&2; while [ ! -e "$EXEC_SPEC_FLAG" ]; do sleep 0.02; done; echo two; echo e2 >&2',
      env: { EXEC_SPEC_FLAG: flag },
    })
    let stdout = ''
    let stderr = ''
    await waitFor(() => {
      const delta = execution.readOutput()
      expect(delta.lossy).toBe(false)
      stdout += delta.stdout
      stderr += delta.stderr
      return stdout === 'one\n' && stderr === 'e1\n'
    }, 'the first output')
    expect(execution.readOutput()).toEqual({ stdout: '', stderr: '', lossy: false })
    fs.writeFileSync(flag, '')
    await execution.result()
    expect(execution.readOutput()).toEqual({ stdout: 'two\n', stderr: 'e2\n', lossy: false })
    expect(execution.readOutput()).toEqual({ stdout: '', stderr: '', lossy: false })
  }, T)

  it('readOutput() keeps at most *MaxBytes of unread text and reports the loss', async () => {
    // shape chosen by the implementation: unread text is capped like the tail, flagged lossy
    const input = lines(5_000)
    const execution = await execute({ command: ['cat'], stdin: input, stdoutMaxBytes: 100 })
    await execution.result()
    const delta = execution.readOutput()
    expect(delta.lossy).toBe(true)
    expect(input.endsWith(delta.stdout)).toBe(true)
    expect(Buffer.byteLength(delta.stdout)).toBeLessThanOrEqual(100)
  }, T)

  it('onOutput receives every chunk; the concatenation per stream equals the output', async () => {
    const input = 'aé€😀\n'.repeat(40_000) // 440 KB: many pipe reads, characters split between them
    const chunks = []
    const execution = await execute({
      command: 'cat; printf "err-€\\n" >&2',
      stdin: input,
      stdoutMaxBytes: 1_000_000,
      onOutput: (chunk) => chunks.push(chunk),
    })
    const result = await execution.result()
    const joined = (stream) =>
      chunks
        .filter((chunk) => chunk.stream === stream)
        .map((chunk) => chunk.text)
        .join('')
    await waitFor(() => joined('stdout').length >= input.length, 'all stdout chunks', 5_000).catch(() => {})
    expect(chunks.length).toBeGreaterThan(1)
    for (const chunk of chunks) {
      expect(['stdout', 'stderr']).toContain(chunk.stream)
      expect(typeof chunk.text).toBe('string')
      expect(chunk.text).not.toContain('\uFFFD')
    }
    expect(joined('stdout') === input).toBe(true)
    expect(joined('stderr')).toBe('err-€\n')
    expect(result.stdout.text === input).toBe(true)
  }, T)

  it('an onOutput that throws is reported once per execution as a warning, and the output is still captured', async () => {
    const warnings = []
    const onWarning = (warning) => {
      if (warning.code === 'DSH_SHELL_ENV_ON_OUTPUT_THREW') warnings.push(warning)
    }
    // Node's own process: under Jest a test file's `process` is a copy, and
    // process.emitWarning reports on the real one.
    const { process: nodeProcess } = require('../binding.js').hostGlobal()
    nodeProcess.on('warning', onWarning)
    try {
      let calls = 0
      const execution = await execute({
        command: 'for i in 1 2 3; do echo line $i; sleep 0.05; done',
        onOutput: () => {
          calls += 1
          throw Symbol('consumer failed')
        },
      })
      const result = await execution.result()
      await waitFor(() => calls >= 3 && warnings.length > 0, 'the callbacks and the warning', 5_000)
      expect(result.stdout.text).toBe('line 1\nline 2\nline 3\n')
      expect(warnings).toHaveLength(1)
      expect(warnings[0].name).toBe('DshShellEnvWarning')
      expect(warnings[0].message).toContain('onOutput threw (Symbol(consumer failed))')
    } finally {
      nodeProcess.off('warning', onWarning)
    }
  }, T)

  it('onOutput never splits a multi-byte character written in two parts', async () => {
    const chunks = []
    const { result } = await run({
      command: "printf 'a\\xf0\\x9f'; sleep 0.3; printf '\\x98\\x80b'; printf '\\xe2\\x82' >&2; sleep 0.3; printf '\\xac' >&2",
      onOutput: (chunk) => chunks.push(chunk),
    })
    await delay(50)
    for (const chunk of chunks) expect(chunk.text).not.toContain('\uFFFD')
    expect(chunks.filter((c) => c.stream === 'stdout').map((c) => c.text).join('')).toBe('a😀b')
    expect(chunks.filter((c) => c.stream === 'stderr').map((c) => c.text).join('')).toBe('€')
    expect(result.stdout.text).toBe('a😀b')
    expect(result.stderr.text).toBe('€')
  }, T)
})

posix.describe('output caps and spill files', () => {
  it('memory keeps the tail; truncated is set; exactly at the cap nothing is cut', async () => {
    const input = lines(2_000)
    const { result } = await run({ command: ['cat'], stdin: input, stdoutMaxBytes: 100 })
    expect(result.stdout.truncated).toBe(true)
    expect(result.stdout.text).toBe(input.slice(-100))
    const exact = await run({ command: ['cat'], stdin: 'y'.repeat(100), stdoutMaxBytes: 100 })
    expect(exact.result.stdout).toEqual({ text: 'y'.repeat(100), truncated: false })
  }, T)

  it.each([
    ['2-byte', 'é', 100, 101],
    ['3-byte', '€', 100, 100],
    ['4-byte', '😀', 10, 10],
    ['mixed', 'aé€😀', 50, 37],
  ])('the tail is cut on a UTF-8 boundary (%s characters)', async (_title, unit, repeat, maxBytes) => {
    const input = unit.repeat(repeat)
    const { result } = await run({ command: ['cat'], stdin: input, stdoutMaxBytes: maxBytes })
    expect(result.stdout.truncated).toBe(true)
    expect(result.stdout.text).not.toContain('\uFFFD')
    expect(result.stdout.text).toBe(utf8Tail(input, maxBytes))
    expect(Buffer.byteLength(result.stdout.text)).toBeLessThanOrEqual(maxBytes)
    expect(Buffer.byteLength(result.stdout.text)).toBeGreaterThan(maxBytes - 4)
  }, T)

  it('stdout and stderr have their own caps', async () => {
    const input = lines(1_000)
    const { result } = await run({ command: 'cat; printf "%s" "$EXEC_SPEC_ERR" >&2', stdin: input, env: { EXEC_SPEC_ERR: input }, stderrMaxBytes: 50 })
    expect(result.stdout).toEqual({ text: input, truncated: false })
    expect(result.stderr.truncated).toBe(true)
    expect(result.stderr.text).toBe(input.slice(-50))
  }, T)

  it('the default cap is 64000 bytes per stream', async () => {
    const input = lines(100_000)
    const execution = await execute({ command: ['cat'], stdin: input })
    const result = await execution.result()
    expect(result.stdout.truncated).toBe(true)
    expect(result.stdout.text).toBe(input.slice(-64_000))
    expect(typeof result.stdout.spillPath).toBe('string')
    expect(fs.readFileSync(result.stdout.spillPath, 'utf8') === input).toBe(true)
    expect(execution.pid).toBeGreaterThan(0) // keeps the execution (and its spill file) alive until here
  }, T)

  it('on overflow the whole stream goes to a private spill file (dir 0700, file 0600)', async () => {
    const input = `${lines(60_000)}€😀 end\n`
    const execution = await execute({
      command: 'cat; printf "%s" "$EXEC_SPEC_ERR" >&2',
      stdin: input,
      env: { EXEC_SPEC_ERR: lines(5_000, 'err') },
      stdoutMaxBytes: 1_000,
      stderrMaxBytes: 1_000,
    })
    const result = await execution.result()
    for (const [stream, expected] of [
      ['stdout', input],
      ['stderr', lines(5_000, 'err')],
    ]) {
      const { spillPath, truncated, text } = result[stream]
      expect(truncated).toBe(true)
      expect(text).toBe(utf8Tail(expected, 1_000))
      expect(typeof spillPath).toBe('string')
      expect(path.isAbsolute(spillPath)).toBe(true)
      expect(fs.existsSync(spillPath)).toBe(true)
      expect(fs.statSync(spillPath).mode & 0o777).toBe(0o600)
      expect(fs.statSync(path.dirname(spillPath)).mode & 0o777).toBe(0o700)
      expect(fs.realpathSync(path.dirname(spillPath)).startsWith(fs.realpathSync(os.tmpdir()))).toBe(true)
      expect(fs.readFileSync(spillPath).equals(Buffer.from(expected, 'utf8'))).toBe(true)
    }
    expect(result.stdout.spillPath).not.toBe(result.stderr.spillPath)
    expect(execution.pid).toBeGreaterThan(0) // keeps the execution (and its spill files) alive until here
  }, T)

  it('no spill file when the stream outgrows spillMaxBytes', async () => {
    const input = lines(50_000)
    const { execution, result } = await run({ command: ['cat'], stdin: input, stdoutMaxBytes: 1_000, spillMaxBytes: 10_000 })
    expect(result.stdout.truncated).toBe(true)
    expect(result.stdout.text).toBe(input.slice(-1_000))
    expect(result.stdout.spillPath).toBeUndefined()
    const under = await run({ command: ['cat'], stdin: input, stdoutMaxBytes: 1_000, spillMaxBytes: input.length })
    expect(fs.readFileSync(under.result.stdout.spillPath, 'utf8') === input).toBe(true)
    expect(execution.pid + under.execution.pid).toBeGreaterThan(0)
  }, T)
})

posix.describe('spill files do not outlive the process', () => {
  it.each([
    ['process.exit()', 'spill-exit'],
    ['the event loop running empty', 'spill-natural'],
  ])('%s', (_title, mode) => {
    const child = runNode([path.join(FIXTURES, 'exec-teardown.cjs'), mode, ROOT])
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    const { spillPath } = JSON.parse(child.stdout.split('\n')[0])
    expect(typeof spillPath).toBe('string')
    const dir = path.dirname(spillPath)
    try {
      expect(fs.existsSync(spillPath)).toBe(false)
      expect(fs.existsSync(dir)).toBe(false)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, T)
})
