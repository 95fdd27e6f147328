'use strict'

// execute() and buildEnvironment(). Real child processes, no mocks.
// Runs unchanged under `vitest run` (globals: true) and `jest`.
//
// Conventions (see helpers.cjs): errors are checked with
// `util.types.isNativeError` (Jest runs this file in its own realm), never
// `instanceof`. Timing is only asserted for grace bounds, with wide margins.
// Assertions on shapes the issue leaves open are marked
// `// shape chosen by the implementation` (they follow README.md).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { types } = require('node:util')

const { ROOT, FIXTURES, rejected, thrown, expectCode, agentExecution, runNode, lastJsonLine, trustedScratch } = require('./helpers.cjs')
const { delay, waitFor, run, untilOutput, parseEnv0, groupGone } = require('./process-helpers.cjs')
const { WINDOWS, PYTHON, python, posix, signals, proc, pidfd, straceInjection, powershell, nodeArgv } = require('./platform.cjs')

const { execute, buildEnvironment, ShellEnvRegistry, ShellExecution } = require('..')

/** Per-test timeout for anything that spawns. */
const T = 30_000
/** Slack over a grace period for `result()` to settle (2-core CI). */
const SLACK_MS = 5_000
const TERMINAL_DEFAULTS = { NO_COLOR: '1', TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat' }
const ENV_PROGRAM = ['/usr/bin/env', '/bin/env'].find((file) => fs.existsSync(file))
/** An exit with `code` through the platform's own shell (bash; `cmd` on Windows). */
const exitWith = (code) => (WINDOWS ? { command: `exit /b ${code}`, shell: 'cmd' } : { command: `exit ${code}` })
const HOME = path.resolve('/tmp/dsh-exec-spec-home')

let TMP
beforeAll(() => {
  // Command directories live here too: somewhere no other user can write.
  TMP = trustedScratch('dsh-exec-spec-')
})
afterAll(() => {
  fs.rmSync(TMP, { recursive: true, force: true })
})

// Helpers.

/** Sets (or, for `undefined`, deletes) `process.env` entries around `fn`, restoring them afterwards. */
async function withEnv(vars, fn) {
  const saved = Object.keys(vars).map((key) => [key, Object.prototype.hasOwnProperty.call(process.env, key), process.env[key]])
  for (const [key, value] of Object.entries(vars)) {
    if (value === undefined) delete process.env[key]
    else process.env[key] = value
  }
  try {
    return await fn()
  } finally {
    for (const [key, had, value] of saved) {
      if (had) process.env[key] = value
      else delete process.env[key]
    }
  }
}

/** The exact environment a child receives (argv run directly, so no shell adds anything). */
async function childEnv(spec = {}) {
  const { result } = await run({ command: [ENV_PROGRAM, '-0'], ...spec })
  expect(result.stderr.text).toBe('')
  expect(result.exitCode).toBe(0)
  return parseEnv0(result.stdout.text)
}

/** Writes an executable (or not) shell script. */
function script(dir, name, body, mode = 0o755) {
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, name)
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`)
  fs.chmodSync(file, mode)
  return file
}

function registry(options = {}) {
  return new ShellEnvRegistry({ dshHome: HOME, ...options })
}

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

describe('the child environment', () => {
  posix.it('stale and lower-case DSH_* variables of the caller never reach the child', async () => {
    const env = await withEnv(
      {
        DSH_SESSION_ID: 'stale-session',
        DSH_HOME: '/stale/home',
        DSH_EXEC_SPEC_STALE: 'stale',
        dsh_exec_spec_lower: 'lower',
        Dsh_Exec_Spec_Mixed: 'mixed',
        DSH_: 'bare-prefix',
      },
      () => childEnv({ dshEnv: { DSH_SESSION_ID: 'fresh-session' } }),
    )
    expect(env.DSH_SESSION_ID).toBe('fresh-session')
    const managedPrefix = Object.keys(env).filter((key) => key.toUpperCase().startsWith('DSH_'))
    expect(managedPrefix).toEqual(['DSH_SESSION_ID'])
  }, T)

  posix.it('without dshEnv the child has no DSH_* variable at all', async () => {
    const env = await withEnv({ DSH_SESSION_ID: 'stale', dsh_x: 'lower' }, () => childEnv())
    expect(Object.keys(env).filter((key) => key.toUpperCase().startsWith('DSH_'))).toEqual([])
  }, T)

  posix.it('the caller’s process.env is what the child inherits (also under Jest’s per-file process.env)', async () => {
    const marker = `inherited-${process.pid}-${Date.now()}`
    const env = await withEnv({ EXEC_SPEC_INHERITED_MARK: marker }, () => childEnv())
    expect(env.EXEC_SPEC_INHERITED_MARK).toBe(marker)
    expect(env.PATH).toBe(process.env.PATH)
    // And a variable deleted from process.env is not inherited.
    const without = await withEnv({ EXEC_SPEC_INHERITED_MARK: undefined }, () => childEnv())
    expect(without.EXEC_SPEC_INHERITED_MARK).toBeUndefined()
  }, T)

  posix.it('explicit env cannot displace managed keys (DSH_* or PATH)', async () => {
    const tools = path.join(TMP, 'managed-bin')
    script(tools, 'exec-spec-managed-tool', 'echo managed-tool')
    const managedPath = `${tools}:${process.env.PATH}`
    const { result } = await run({
      command: 'printf "%s\\n" "$DSH_SESSION_ID" "$DSH_EXEC_SPEC_FACT" "$PATH"; exec-spec-managed-tool',
      env: { DSH_SESSION_ID: 'forged', DSH_EXEC_SPEC_FACT: 'forged-fact', PATH: '/forged/bin:/usr/bin:/bin' },
      dshEnv: { DSH_SESSION_ID: 'real', DSH_EXEC_SPEC_FACT: 'real-fact', PATH: managedPath },
    })
    expect(result.stderr.text).toBe('')
    expect(result.stdout.text).toBe(`real\nreal-fact\n${managedPath}\nmanaged-tool\n`)
    expect(result.exitCode).toBe(0)
  }, T)

  posix.it('explicit env cannot displace managed keys collected from a registry', async () => {
    const reg = registry()
    reg.register({
      name: 'fact',
      variables: { DSH_EXEC_SPEC_FACT: { description: 'a fact' } },
      resolve: () => ({ DSH_EXEC_SPEC_FACT: 'from-registry' }),
    })
    const env = await childEnv({
      registry: reg,
      execution: agentExecution('registry-session'),
      env: { DSH_SESSION_ID: 'forged', DSH_EXEC_SPEC_FACT: 'forged', DSH_HOME: '/forged', DSH_SHELL: '0' },
    })
    expect(env.DSH_SESSION_ID).toBe('registry-session')
    expect(env.DSH_EXEC_SPEC_FACT).toBe('from-registry')
    expect(env.DSH_HOME).toBe(HOME)
    expect(env.DSH_SHELL).toBe('1')
  }, T)

  posix.it('an undefined value in env removes an inherited variable; strings add or replace', async () => {
    const env = await withEnv({ EXEC_SPEC_REMOVE_ME: 'inherited', EXEC_SPEC_REPLACE_ME: 'inherited' }, () =>
      childEnv({ env: { EXEC_SPEC_REMOVE_ME: undefined, EXEC_SPEC_REPLACE_ME: 'explicit', EXEC_SPEC_ADDED: 'added' } }),
    )
    expect('EXEC_SPEC_REMOVE_ME' in env).toBe(false)
    expect(env.EXEC_SPEC_REPLACE_ME).toBe('explicit')
    expect(env.EXEC_SPEC_ADDED).toBe('added')
  }, T)

  posix.it('credentials are scrubbed by default: names whose words say so, in any case; names that merely mention one stay', async () => {
    const secrets = {
      EXEC_SPEC_API_KEY: 's1',
      exec_spec_db_password: 's2',
      Exec_Spec_Client_Secret: 's3',
      EXEC_SPEC_GITHUB_TOKEN: 's4',
      EXEC_SPEC_DB_PW: 's5',
      execSpecApiSecret: 's6',
      token: 's7',
    }
    const settings = {
      KEYRING_EXEC_SPEC: 'gnome',
      EXEC_SPEC_MONKEY: 'banana',
      EXEC_SPEC_MAX_TOKENS: '4096',
      EXEC_SPEC_PASSWORD_MIN_LENGTH: '12',
      EXEC_SPEC_TOKEN_URL: 'https://auth.example.com/token',
      EXEC_SPEC_CREDENTIALS_FILE: '/home/ada/.aws/credentials',
    }
    const env = await withEnv({ ...secrets, ...settings }, () => childEnv())
    for (const key of Object.keys(secrets)) expect(env[key]).toBeUndefined()
    expect(env).toEqual(expect.objectContaining(settings))
    // Explicitly given values are not scrubbed: the filters only look at inherited variables.
    const explicit = await childEnv({ env: { EXEC_SPEC_API_KEY: 'explicit' } })
    expect(explicit.EXEC_SPEC_API_KEY).toBe('explicit')
  }, T)

  posix.it('scrub.exclude adds to the credential defaults (case-insensitive); defaultExclude: false keeps credentials', async () => {
    await withEnv({ EXEC_SPEC_API_KEY: 'secret', EXEC_SPEC_DROP_A: 'a', exec_spec_drop_b: 'b' }, async () => {
      const env = await childEnv({ scrub: { exclude: ['exec_spec_DROP_*'] } })
      expect(env.EXEC_SPEC_API_KEY).toBeUndefined()
      expect(env.EXEC_SPEC_DROP_A).toBeUndefined()
      expect(env.exec_spec_drop_b).toBeUndefined()
      const none = await childEnv({ scrub: { exclude: [] } })
      expect(none.EXEC_SPEC_API_KEY).toBeUndefined()
      const kept = await childEnv({ scrub: { defaultExclude: false, exclude: ['exec_spec_DROP_*'] } })
      expect(kept.EXEC_SPEC_API_KEY).toBe('secret')
      expect(kept.EXEC_SPEC_DROP_A).toBeUndefined()
    })
  }, T)

  posix.it('credentials go by value too: a URL with a password, a token shape, whatever the name', async () => {
    const env = await withEnv(
      {
        EXEC_SPEC_DATABASE_URL: 'postgres://app:pw@db.internal/app',
        EXEC_SPEC_SETTING: 'ghp_0123456789abcdefghijABCDEFGHIJklmnop',
        EXEC_SPEC_CONNECTION: 'Server=db;Database=app;User Id=app;Password=Pa55word;',
        EXEC_SPEC_JAVA_OPTS: '-Xmx1g -Ddb.password=hunter2',
        EXEC_SPEC_PLAIN_URL: 'https://example.com/a',
        EXEC_SPEC_BRANCH: 'sk-fix-login-redirect-loop',
      },
      () => childEnv(),
    )
    for (const key of ['EXEC_SPEC_DATABASE_URL', 'EXEC_SPEC_SETTING', 'EXEC_SPEC_CONNECTION', 'EXEC_SPEC_JAVA_OPTS']) {
      expect(env[key]).toBeUndefined()
    }
    expect(env.EXEC_SPEC_PLAIN_URL).toBe('https://example.com/a')
    expect(env.EXEC_SPEC_BRANCH).toBe('sk-fix-login-redirect-loop')
  }, T)

  python.it('loader and language-path variables reach a real bash as in the developer\'s shell: a module found through PYTHONPATH, LD_LIBRARY_PATH set', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-exec-spec-pythonpath-'))
    try {
      fs.writeFileSync(path.join(dir, 'dsh_exec_spec_probe.py'), "VALUE = 'found through PYTHONPATH'\n")
      const command = `${PYTHON} -c 'import dsh_exec_spec_probe as m; print(m.VALUE)'; printf '%s\\n' "$LD_LIBRARY_PATH"`
      const { result } = await withEnv({ PYTHONPATH: dir, LD_LIBRARY_PATH: '/usr/local/cuda/lib64' }, () =>
        run({ command: ['bash', '-c', command] }),
      )
      expect(result.stderr.text).toBe('')
      expect(result.stdout.text).toBe('found through PYTHONPATH\n/usr/local/cuda/lib64\n')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, T)

  posix.it("scrub.inherit 'core' keeps only the core variables", async () => {
    const core = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'TMPDIR', 'TEMP', 'TMP', 'TZ']
    const env = await withEnv(
      { TZ: 'UTC', LC_EXEC_SPEC: 'lc', LANG: 'C.UTF-8', TMPDIR: os.tmpdir(), EXEC_SPEC_NOT_CORE: 'dropped', TERM: 'xterm' },
      () => childEnv({ scrub: { inherit: 'core' } }),
    )
    for (const key of Object.keys(env)) {
      const allowed = core.includes(key) || key.startsWith('LC_') || key in TERMINAL_DEFAULTS
      expect(`${key}:${allowed}`).toBe(`${key}:true`)
    }
    expect(env.TZ).toBe('UTC')
    expect(env.LC_EXEC_SPEC).toBe('lc')
    expect(env.LANG).toBe('C.UTF-8')
    expect(env.PATH).toBe(process.env.PATH)
    expect(env.EXEC_SPEC_NOT_CORE).toBeUndefined()
    expect(env.TERM).toBe('dumb')
  }, T)

  posix.it("scrub.inherit 'none' inherits nothing", async () => {
    expect(await childEnv({ scrub: { inherit: 'none' } })).toEqual(TERMINAL_DEFAULTS)
    expect(await childEnv({ scrub: { inherit: 'none' }, terminalEnv: false })).toEqual({})
    expect(await childEnv({ scrub: { inherit: 'none' }, terminalEnv: false, env: { ONLY: 'me' } })).toEqual({ ONLY: 'me' })
  }, T)

  posix.it('scrub.includeOnly keeps only matching inherited names (explicit, terminal and managed still added)', async () => {
    const env = await withEnv({ EXEC_SPEC_KEEP_1: 'a', exec_spec_keep_2: 'b', EXEC_SPEC_OTHER: 'c' }, () =>
      childEnv({
        scrub: { includeOnly: ['EXEC_SPEC_KEEP_*', 'PATH'] },
        env: { EXEC_SPEC_EXPLICIT: 'x' },
        dshEnv: { DSH_SESSION_ID: 'inc' },
      }),
    )
    expect(env).toEqual({
      ...TERMINAL_DEFAULTS,
      EXEC_SPEC_KEEP_1: 'a',
      exec_spec_keep_2: 'b', // globs compare case-insensitively
      PATH: process.env.PATH,
      EXEC_SPEC_EXPLICIT: 'x',
      DSH_SESSION_ID: 'inc',
    })
  }, T)

  posix.describe('scrub.hardening', () => {
    let bashEnv
    beforeAll(() => {
      bashEnv = script(path.join(TMP, 'hardening'), 'exec-spec-bash-env.sh', 'echo BASH_ENV-RAN')
    })
    const hostile = () => ({
      BASH_ENV: bashEnv,
      'BASH_FUNC_exec_spec_fn%%': '() {  echo FUNCTION-RAN\n}',
      EXEC_SPEC_FUNCTION_VALUE: '() { echo value; }',
      LD_EXEC_SPEC_LOADER: 'x',
      PS4: '+hostile ',
    })

    it('with hardening turned off, BASH_ENV runs and exported functions import (the test’s control)', async () => {
      const { result } = await withEnv(hostile(), () =>
        run({ command: 'exec_spec_fn; printf "%s\\n" "${EXEC_SPEC_FUNCTION_VALUE:-unset}"', scrub: { hardening: false } }),
      )
      expect(result.stdout.text).toBe('BASH_ENV-RAN\nFUNCTION-RAN\n() { echo value; }\n')
    }, T)

    it('drops BASH_ENV, BASH_FUNC_*%%, values starting "() {", LD_*, PS4', async () => {
      const { result } = await withEnv(hostile(), () =>
        run({
          command: 'type exec_spec_fn >/dev/null 2>&1 && echo FUNCTION-PRESENT; printf "%s|%s|%s\\n" "${EXEC_SPEC_FUNCTION_VALUE:-unset}" "${LD_EXEC_SPEC_LOADER:-unset}" "${BASH_ENV:-unset}"',
          scrub: { hardening: true },
        }),
      )
      expect(result.stdout.text).toBe('unset|unset|unset\n')
      expect(result.stdout.text).not.toContain('BASH_ENV-RAN')
      const env = await withEnv(hostile(), () => childEnv({ scrub: { hardening: true } }))
      for (const key of Object.keys(hostile())) expect(env[key]).toBeUndefined()
    }, T)

    it('an explicitly given variable is not dropped by hardening', async () => {
      const { result } = await run({ command: 'echo hi', env: { BASH_ENV: bashEnv }, scrub: { hardening: true } })
      expect(result.stdout.text).toBe('BASH_ENV-RAN\nhi\n')
    }, T)
  })

  posix.it('terminalEnv: the defaults replace inherited values; false keeps what was inherited', async () => {
    await withEnv({ TERM: 'xterm-256color', NO_COLOR: undefined, PAGER: 'less', GIT_PAGER: undefined }, async () => {
      const env = await childEnv()
      expect(env).toEqual(expect.objectContaining(TERMINAL_DEFAULTS))
      const off = await childEnv({ terminalEnv: false })
      expect(off.TERM).toBe('xterm-256color')
      expect(off.PAGER).toBe('less')
      expect(off.NO_COLOR).toBeUndefined()
      expect(off.GIT_PAGER).toBeUndefined()
      // A record replaces the defaults as a whole; explicit env still wins over it.
      const custom = await childEnv({ terminalEnv: { TERM: 'vt100', COLUMNS: '80' }, env: { COLUMNS: '120' } })
      expect(custom.TERM).toBe('vt100')
      expect(custom.COLUMNS).toBe('120')
      expect(custom.NO_COLOR).toBeUndefined()
      expect(custom.PAGER).toBe('less')
    })
  }, T)

  posix.it('dshEnv accepts managed DSH_* keys and PATH; a registry snapshot works as dshEnv', async () => {
    const reg = registry()
    const snapshot = reg.collect(agentExecution('from-snapshot'))
    const env = await childEnv({ dshEnv: snapshot })
    expect(env.DSH_SESSION_ID).toBe('from-snapshot')
    expect(env.DSH_HOME).toBe(HOME)
    expect(env.DSH_SHELL).toBe('1')
  }, T)

  it.each([
    ['HOME', { HOME: '/x' }, 'dshEnv.HOME'],
    ['a lower-case key', { dsh_session_id: 'x' }, 'dshEnv.dsh_session_id'],
    ['a key not matching the DSH_ key rule', { 'DSH_lower': 'x' }, 'dshEnv.DSH_lower'],
    ['Path spelt differently', { Path: '/x' }, 'dshEnv.Path'],
  ])('dshEnv with %s is ERR_SHELL_EXEC_INVALID_SPEC', async (_title, dshEnv, field) => {
    const marker = path.join(TMP, `dsh-env-marker-${field}`)
    const error = await rejected(() => execute({ command: ['touch', marker], dshEnv }))
    expectCode(error, 'ERR_SHELL_EXEC_INVALID_SPEC', field)
    expectCode(thrown(() => buildEnvironment({ dshEnv })), 'ERR_SHELL_EXEC_INVALID_SPEC', field)
    await delay(100)
    expect(fs.existsSync(marker)).toBe(false)
  }, T)
})

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

describe('process behaviour', () => {
  posix.it('stdin as a string and as a Uint8Array is written, then closed', async () => {
    const text = 'héllo\nwörld 😀\n'
    const fromString = await run({ command: ['cat'], stdin: text })
    expect(fromString.result.stdout.text).toBe(text)
    const bytes = new Uint8Array([0x61, 0xc3, 0xa9, 0x0a, 0xf0, 0x9f, 0x98, 0x80])
    const fromBytes = await run({ command: ['cat'], stdin: bytes })
    expect(fromBytes.result.stdout.text).toBe('aé\n😀')
    const fromBuffer = await run({ command: ['cat'], stdin: Buffer.from('buffer') })
    expect(fromBuffer.result.stdout.text).toBe('buffer')
    const empty = await run({ command: ['cat'], stdin: '' })
    expect(empty.result.stdout.text).toBe('')
    expect(empty.result.exitCode).toBe(0)
  }, T)

  posix.it('large stdin is written completely; a child that never reads it still finishes', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024)
    const counted = await run({ command: 'wc -c', stdin: big })
    expect(counted.result.stdout.text.trim()).toBe(String(big.length))
    const ignored = await run({ command: 'exit 3', stdin: big })
    expect(ignored.result.exitCode).toBe(3)
  }, T)

  proc.it('without stdin the child reads /dev/null', async () => {
    const { result } = await run({ command: 'readlink /proc/$$/fd/0; cat; echo "eof:$?"' })
    expect(result.stdout.text).toBe('/dev/null\neof:0\n')
  }, T)

  powershell.it.each(['powershell', 'pwsh'])('%s runs a script with the variables of the spec and reports its exit code', async (shell) => {
    const { result } = await run({ command: 'Write-Output "value:$env:EXEC_SPEC_VALUE"; exit 3', shell, env: { EXEC_SPEC_VALUE: 'from-env' } })
    expect(result.exitCode).toBe(3)
    expect(result.stdout.text.trim()).toBe('value:from-env')
  }, T)

  powershell.it('a PowerShell script that outlives its timeout is ended with its job', async () => {
    const { execution, result } = await run({ command: 'Start-Sleep -Seconds 60', shell: 'powershell', timeoutMs: 1_000, graceMs: 500 })
    // Ended by CTRL_BREAK where it shares the host's console, else by TerminateJobObject.
    expect(result.timedOut).toBe(true)
    expect(execution.status).toBe('killed')
  }, T)

  it.each([0, 1, 7, 255])('exit code %i', async (code) => {
    const { execution, result } = await run(exitWith(code))
    expect(result.exitCode).toBe(code)
    expect(result.signal).toBe(null)
    expect(result.timedOut).toBe(false)
    expect(result.aborted).toBe(false)
    expect(execution.exitCode).toBe(code)
    expect(execution.signal).toBe(null)
    expect(execution.status).toBe('completed')
  }, T)

  posix.it('an argv command runs directly, without a shell', async () => {
    const { result } = await run({ command: ['printf', '%s|', 'a b', '$HOME', '*', '"q"'] })
    expect(result.stdout.text).toBe('a b|$HOME|*|"q"|')
    expect((await run({ command: ['false'] })).result.exitCode).toBe(1)
  }, T)

  posix.it("shell: 'bash' by default, 'sh', or an absolute path", async () => {
    const bash = await run({ command: 'echo "${BASH_VERSION:+bash}"' })
    expect(bash.result.stdout.text).toBe('bash\n')
    const sh = await run({ command: 'echo "$0"', shell: 'sh' })
    expect(path.basename(sh.result.stdout.text.trim())).toBe('sh')
    const absolute = await run({ command: 'echo "$0"', shell: '/bin/bash' })
    expect(absolute.result.stdout.text).toBe('/bin/bash\n')
  }, T)

  posix.it('the program is looked up on the child’s final PATH', async () => {
    const tools = path.join(TMP, 'explicit-bin')
    script(tools, 'exec-spec-explicit-tool', 'echo explicit-tool')
    const { result } = await run({ command: ['exec-spec-explicit-tool'], env: { PATH: `${tools}:${process.env.PATH}` } })
    expect(result.stdout.text).toBe('explicit-tool\n')
    const error = await rejected(() => execute({ command: ['exec-spec-explicit-tool'] }))
    expectCode(error, 'ERR_SHELL_EXEC_SPAWN_FAILED')
    expect(error.cause.code).toBe('ENOENT')
  }, T)

  posix.it('workdir defaults to process.cwd() and can be set', async () => {
    const here = await run({ command: ['pwd'] })
    expect(here.result.stdout.text).toBe(`${process.cwd()}\n`)
    const there = await run({ command: ['pwd'], workdir: TMP })
    expect(there.result.stdout.text).toBe(`${TMP}\n`)
  }, T)

  signals.it("death by a signal: signal 'SIGTERM', exitCode null, status 'completed' (we did not kill it)", async () => {
    const { execution, result } = await run({ command: 'kill -TERM $$' })
    expect(result.signal).toBe('SIGTERM')
    expect(result.exitCode).toBe(null)
    expect(result.timedOut).toBe(false)
    expect(result.aborted).toBe(false)
    expect(execution.status).toBe('completed')
    expect(execution.signal).toBe('SIGTERM')
    expect(execution.exitCode).toBe(null)
    const killed = await run({ command: 'kill -KILL $$' })
    expect(killed.result.signal).toBe('SIGKILL')
    expect(killed.execution.status).toBe('completed')
  }, T)

  signals.it("timeout: timedOut true, aborted false, status 'killed'", async () => {
    const { execution, result } = await run({ command: 'sleep 30', timeoutMs: 300 })
    expect(result.timedOut).toBe(true)
    expect(result.aborted).toBe(false)
    expect(result.timeoutMs).toBe(300)
    expect(result.signal).toBe('SIGTERM')
    expect(result.exitCode).toBe(null)
    expect(execution.status).toBe('killed')
    expect(result.durationMs).toBeLessThan(20_000)
  }, T)

  signals.it('a timeout ends and reaps the child while the JS thread is blocked', async () => {
    const execution = await execute({ command: ['sleep', '30'], timeoutMs: 200, graceMs: 200 })
    // Busy past the timeout: neither the kill nor the reap may wait for this thread.
    const until = Date.now() + 3_000
    let reaped = false
    while (!reaped && Date.now() < until) {
      try {
        process.kill(execution.pid, 0) // a zombie still answers
      } catch (error) {
        reaped = error.code === 'ESRCH'
      }
    }
    expect(reaped).toBe(true)
    const result = await execution.result()
    expect(result.timedOut).toBe(true)
    expect(result.signal).toBe('SIGTERM')
  }, T)

  it('the default timeout is reported as 120000', async () => {
    const { result } = await run(exitWith(0))
    expect(result.timeoutMs).toBe(120_000)
    expect(result.timedOut).toBe(false)
    expect(typeof result.durationMs).toBe('number')
    expect(result.durationMs).toBeGreaterThanOrEqual(0)
  }, T)

  signals.it("a child that exits on SIGTERM with its own code is still status 'killed' after a timeout", async () => {
    const { execution, result } = await run({
      command: 'trap "exit 3" TERM; echo ready; while :; do sleep 0.05; done',
      timeoutMs: 300,
    })
    expect(result.exitCode).toBe(3)
    expect(result.signal).toBe(null)
    expect(result.timedOut).toBe(true)
    expect(execution.status).toBe('killed')
  }, T)

  signals.it("abort mid-run: aborted true, timedOut false, status 'killed'", async () => {
    const controller = new AbortController()
    const execution = await execute({ command: 'echo ready; sleep 30', signal: controller.signal })
    await untilOutput(execution, 'ready')
    expect(execution.status).toBe('running')
    controller.abort()
    const result = await execution.result()
    expect(result.aborted).toBe(true)
    expect(result.timedOut).toBe(false)
    expect(result.signal).toBe('SIGTERM')
    expect(execution.status).toBe('killed')
    expect(execution.kill()).toBe(false)
  }, T)

  posix.it('an already-aborted signal stops the child at once: aborted true, timedOut false', async () => {
    const controller = new AbortController()
    controller.abort()
    const marker = path.join(TMP, 'already-aborted-marker')
    const execution = await execute({ command: `sleep 2; touch ${marker}; sleep 30`, signal: controller.signal })
    const result = await execution.result()
    expect(result.aborted).toBe(true)
    expect(result.timedOut).toBe(false)
    expect(execution.status).toBe('killed')
    expect(result.durationMs).toBeLessThan(20_000)
    expect(fs.existsSync(marker)).toBe(false)
  }, T)

  signals.it('timedOut and aborted are never both true: an abort during the timeout’s grace stays a timeout', async () => {
    const controller = new AbortController()
    const execution = await execute({
      command: 'trap "echo term" TERM; echo ready; while :; do sleep 0.05; done',
      timeoutMs: 200,
      graceMs: 1_500,
      signal: controller.signal,
    })
    await untilOutput(execution, 'term') // the timeout's SIGTERM arrived; SIGKILL follows after the grace
    controller.abort()
    const result = await execution.result()
    expect(result.timedOut).toBe(true)
    expect(result.aborted).toBe(false)
    expect(result.signal).toBe('SIGKILL')
  }, T)

  signals.it('timedOut and aborted are never both true: a timeout during the abort’s grace stays an abort', async () => {
    const controller = new AbortController()
    const execution = await execute({
      command: 'trap "echo term" TERM; echo ready; while :; do sleep 0.05; done',
      timeoutMs: 3_000,
      graceMs: 5_000,
      signal: controller.signal,
    })
    await untilOutput(execution, 'ready')
    controller.abort()
    const result = await execution.result()
    expect(result.aborted).toBe(true)
    expect(result.timedOut).toBe(false)
    expect(result.signal).toBe('SIGKILL')
  }, T)

  signals.it('kill() is true once while running, then false; after the end it is false', async () => {
    const execution = await execute({ command: 'echo ready; sleep 30' })
    await untilOutput(execution, 'ready')
    expect(execution.kill()).toBe(true)
    expect(execution.kill()).toBe(false)
    const result = await execution.result()
    expect(execution.kill()).toBe(false)
    expect(result.signal).toBe('SIGTERM')
    expect(result.timedOut).toBe(false)
    expect(result.aborted).toBe(false)
    expect(execution.status).toBe('killed')
    const finished = await run({ command: 'true' })
    expect(finished.execution.kill()).toBe(false)
    expect(finished.execution.status).toBe('completed')
  }, T)

  signals.it('a TERM-ignoring command is killed with SIGKILL after graceMs', async () => {
    const graceMs = 1_000
    const execution = await execute({ command: 'trap "" TERM; echo ready; sleep 30', graceMs })
    await untilOutput(execution, 'ready')
    expect(execution.kill()).toBe(true)
    const result = await execution.result()
    expect(result.signal).toBe('SIGKILL')
    expect(result.exitCode).toBe(null)
    expect(execution.status).toBe('killed')
    expect(result.durationMs).toBeGreaterThanOrEqual(graceMs)
    expect(result.durationMs).toBeLessThan(15_000)
    await groupGone(execution.pid)
  }, T)

  signals.it('a TERM-ignoring command that times out is killed after timeoutMs + graceMs', async () => {
    const timeoutMs = 300
    const graceMs = 1_000
    const { execution, result } = await run({ command: 'trap "" TERM; sleep 30', timeoutMs, graceMs })
    expect(result.timedOut).toBe(true)
    expect(result.signal).toBe('SIGKILL')
    expect(result.durationMs).toBeGreaterThanOrEqual(timeoutMs + graceMs)
    expect(result.durationMs).toBeLessThan(15_000)
    expect(execution.status).toBe('killed')
  }, T)

  signals.it('graceMs 0 sends SIGKILL at once', async () => {
    const execution = await execute({ command: 'trap "" TERM; echo ready; sleep 30', graceMs: 0 })
    await untilOutput(execution, 'ready')
    execution.kill()
    const result = await execution.result()
    expect(result.signal).toBe('SIGKILL')
    expect(result.durationMs).toBeLessThan(15_000)
  }, T)

  proc.it('a grandchild keeping stdout open cannot hold result() once the leader exits; the group is gone', async () => {
    const graceMs = 1_000
    const execution = await execute({ command: 'sleep 60 & echo "$!"; exit 0', graceMs })
    const result = await execution.result()
    expect(result.exitCode).toBe(0)
    expect(execution.status).toBe('completed')
    expect(result.durationMs).toBeLessThan(graceMs + SLACK_MS)
    const grandchild = Number(result.stdout.text.trim())
    expect(grandchild).toBeGreaterThan(0)
    await groupGone(execution.pid)
  }, T)

  proc.it('a TERM-ignoring grandchild keeping stdout open is SIGKILLed after the grace; result() settles within grace + slack', async () => {
    const graceMs = 1_000
    const flag = path.join(TMP, 'grandchild-trap-flag')
    const started = Date.now()
    const execution = await execute({
      command: '(trap "" TERM; touch "$EXEC_SPEC_FLAG"; exec sleep 60) & while [ ! -e "$EXEC_SPEC_FLAG" ]; do sleep 0.02; done; exit 0',
      env: { EXEC_SPEC_FLAG: flag },
      graceMs,
    })
    const result = await execution.result()
    const waited = Date.now() - started
    expect(result.exitCode).toBe(0)
    expect(result.durationMs).toBeLessThan(graceMs + SLACK_MS)
    expect(waited).toBeLessThan(graceMs + SLACK_MS)
    await groupGone(execution.pid)
  }, T)

  proc.it('kill() ends the whole group, grandchildren included', async () => {
    const execution = await execute({ command: 'sleep 60 & echo "ready $!"; wait' })
    await untilOutput(execution, 'ready')
    expect(execution.kill()).toBe(true)
    await execution.result()
    await groupGone(execution.pid)
  }, T)

  proc.it('kill() ends the whole group: a TERM-ignoring grandchild that closed its pipes gets SIGKILL after the grace', async () => {
    const graceMs = 500
    const flag = path.join(TMP, 'detached-grandchild-flag')
    const execution = await execute({
      command: '(trap "" TERM; touch "$EXEC_SPEC_FLAG"; exec sleep 60) >/dev/null 2>&1 & while [ ! -e "$EXEC_SPEC_FLAG" ]; do sleep 0.02; done; echo ready; wait',
      env: { EXEC_SPEC_FLAG: flag },
      graceMs,
    })
    await untilOutput(execution, 'ready')
    expect(execution.kill()).toBe(true)
    const result = await execution.result()
    expect(result.durationMs).toBeLessThan(graceMs + SLACK_MS)
    await groupGone(execution.pid)
  }, T)

  proc.it('after the leader exits, a TERM-ignoring background job without pipes is SIGKILLed after the grace', async () => {
    // docs/process.md: when the leader exits, whatever is left of its group gets the same treatment.
    const graceMs = 500
    const flag = path.join(TMP, 'background-no-pipes-flag')
    const execution = await execute({
      command: '(trap "" TERM; touch "$EXEC_SPEC_FLAG"; exec sleep 60) >/dev/null 2>&1 & while [ ! -e "$EXEC_SPEC_FLAG" ]; do sleep 0.02; done; exit 0',
      env: { EXEC_SPEC_FLAG: flag },
      graceMs,
    })
    await execution.result()
    await groupGone(execution.pid)
  }, T)

  proc.it('the leader is reaped by the time result() settles (no zombie)', async () => {
    const executions = await Promise.all(Array.from({ length: 10 }, (_, i) => execute({ command: `exit ${i}` })))
    await Promise.all(executions.map((execution) => execution.result()))
    for (const execution of executions) expect(fs.existsSync(`/proc/${execution.pid}`)).toBe(false)
  }, T)

  proc.it('no file descriptors leak (pipes, pidfds, spill files)', async () => {
    const fds = () => {
      const counts = { pipe: 0, pidfd: 0, spill: 0, lock: 0 }
      for (const fd of fs.readdirSync('/proc/self/fd')) {
        let target
        try {
          target = fs.readlinkSync(`/proc/self/fd/${fd}`)
        } catch {
          continue
        }
        if (target.startsWith('pipe:')) counts.pipe++
        else if (target.includes('pidfd')) counts.pidfd++
        else if (target.includes('dsh-shell-env-')) {
          // A private directory's lock is held for the host's life, also after
          // another suite of the same process removed the directory (" (deleted)").
          if (path.basename(target).replace(/ \(deleted\)$/, '') === 'lock') counts.lock++
          else counts.spill++
        }
      }
      return counts
    }
    const batch = async () => {
      const runs = []
      for (let i = 0; i < 10; i++) {
        runs.push(run({ command: ['cat'], stdin: 'x'.repeat(5_000), stdoutMaxBytes: 100 }))
        runs.push(run({ command: 'exit 2' }))
        runs.push(run({ command: 'sleep 30', timeoutMs: 100 }))
      }
      await Promise.all(runs)
    }
    await batch() // warm up whatever the runtime allocates once
    const before = fds()
    await batch()
    await batch()
    const after = fds()
    expect(after.pidfd).toBe(before.pidfd)
    expect(after.spill).toBe(0)
    expect(after.lock).toBeLessThanOrEqual(before.lock)
    expect(after.pipe).toBeLessThanOrEqual(before.pipe)
  }, 60_000)
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

posix.describe('stdio: raw pipes and offset reads', () => {
  it("stdio 'pipe' hands the child's own streams over as Node streams; nothing of them is captured", async () => {
    const execution = await execute({ command: 'tr a-z A-Z; echo done >&2', stdio: { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' } })
    let out = ''
    let err = ''
    execution.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk))
    execution.stderr.setEncoding('utf8').on('data', (chunk) => (err += chunk))
    execution.stdin.end('piped')
    // The streams are the caller's: read to their end, not only to the result.
    const ended = (stream) => new Promise((resolve) => stream.once('end', resolve))
    const [result] = await Promise.all([execution.result(), ended(execution.stdout), ended(execution.stderr)])
    expect({ out, err, exitCode: result.exitCode, captured: result.stdout.text + result.stderr.text }).toEqual({ out: 'PIPED', err: 'done\n', exitCode: 0, captured: '' })
    const captured = await execute({ command: 'true' })
    expect([captured.stdin, captured.stdout, captured.stderr]).toEqual([null, null, null])
  }, T)

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
      timeoutMs: 120_000,
      durationMs: result.durationMs,
      stdout: { text: 'out\n', truncated: false },
      stderr: { text: 'err\n', truncated: false },
    })
    expect(result.stdout.spillPath).toBeUndefined()
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

describe('spawn errors', () => {
  it('a missing workdir or a file as workdir: ERR_SHELL_EXEC_INVALID_WORKDIR', async () => {
    const missing = path.join(TMP, 'no-such-dir')
    expectCode(await rejected(() => execute({ command: 'true', workdir: missing })), 'ERR_SHELL_EXEC_INVALID_WORKDIR', missing)
    const file = path.join(TMP, 'a-file')
    fs.writeFileSync(file, '')
    expectCode(await rejected(() => execute({ command: 'true', workdir: file })), 'ERR_SHELL_EXEC_INVALID_WORKDIR', file)
  }, T)

  it("a missing program: ERR_SHELL_EXEC_SPAWN_FAILED with cause.code 'ENOENT'", async () => {
    for (const spec of [
      { command: ['exec-spec-no-such-program'] },
      { command: [path.join(TMP, 'no-such-program')] },
      { command: 'true', shell: path.join(TMP, 'no-such-shell') },
    ]) {
      const error = await rejected(() => execute(spec))
      expectCode(error, 'ERR_SHELL_EXEC_SPAWN_FAILED')
      expect(types.isNativeError(error.cause)).toBe(true)
      expect(error.cause.code).toBe('ENOENT')
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
    ['shell unknown', () => base({ shell: 'zsh' }), 'shell'],
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

describe('buildEnvironment(spec, parentEnv)', () => {
  const parent = {
    PATH: '/usr/bin:/bin',
    HOME: '/home/ada',
    TERM: 'xterm',
    DSH_SESSION_ID: 'stale',
    dsh_lower: 'stale-lower',
    MY_API_TOKEN: 'secret',
    BASH_ENV: '/tmp/evil.sh',
    EXEC_FN: '() { echo hi; }',
    UNSET_ME: 'bye',
    NOT_INCLUDED: 'x',
    KEPT: 'kept',
  }

  it('reports the source of every variable and every removal with its reason', () => {
    const built = buildEnvironment(
      {
        scrub: { hardening: true, includeOnly: ['PATH', 'HOME', 'TERM', 'UNSET_ME', 'KEPT', '*TOKEN*', 'BASH_ENV', 'EXEC_FN', 'DSH_*'] },
        env: { UNSET_ME: undefined, EXPLICIT: 'e', NEVER_THERE: undefined },
        dshEnv: { DSH_SESSION_ID: 'fresh', PATH: '/managed/bin:/usr/bin:/bin' },
      },
      parent,
    )
    expect(built.env).toEqual({
      PATH: '/managed/bin:/usr/bin:/bin',
      HOME: '/home/ada',
      TERM: 'dumb',
      KEPT: 'kept',
      NO_COLOR: '1',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      EXPLICIT: 'e',
      DSH_SESSION_ID: 'fresh',
    })
    expect(built.sources).toEqual({
      PATH: 'managed',
      HOME: 'inherited',
      TERM: 'terminal',
      KEPT: 'inherited',
      NO_COLOR: 'terminal',
      PAGER: 'terminal',
      GIT_PAGER: 'terminal',
      EXPLICIT: 'explicit',
      DSH_SESSION_ID: 'managed',
    })
    const reasons = Object.fromEntries(built.removed.map(({ key, reason }) => [key, reason]))
    expect(reasons).toEqual({
      DSH_SESSION_ID: 'managed-prefix',
      dsh_lower: 'managed-prefix',
      MY_API_TOKEN: 'credential',
      BASH_ENV: 'hardening',
      EXEC_FN: 'hardening',
      NOT_INCLUDED: 'include-only',
      UNSET_ME: 'explicit-unset',
    })
    expect(built.removed).toHaveLength(7)
    for (const removal of built.removed) expect(Object.keys(removal).sort()).toEqual(['key', 'reason'])
  })

  it("reports 'inherit' for what inherit core or none leaves behind", () => {
    const core = buildEnvironment({ scrub: { inherit: 'core' }, terminalEnv: false }, parent)
    expect(core.env).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/ada' })
    const reasons = Object.fromEntries(core.removed.map(({ key, reason }) => [key, reason]))
    for (const key of ['TERM', 'UNSET_ME', 'NOT_INCLUDED', 'KEPT', 'BASH_ENV', 'EXEC_FN']) expect(reasons[key]).toBe('inherit')
    expect(reasons.DSH_SESSION_ID).toBe('managed-prefix')
    const none = buildEnvironment({ scrub: { inherit: 'none' }, terminalEnv: false }, parent)
    expect(none.env).toEqual({})
    expect(none.sources).toEqual({})
    expect(none.removed.find((removal) => removal.key === 'PATH')).toEqual({ key: 'PATH', reason: 'inherit' })
  })

  it('hardening, when asked for, drops the sudo-style list and function values; by default they stay', () => {
    const hostile = {
      BASH_ENV: '/x',
      ENV: '/x',
      'BASH_FUNC_ls%%': '() { :; }',
      EXEC_FUNCTION_VALUE: '() { :; }',
      LD_PRELOAD: '/x.so',
      LD_LIBRARY_PATH: '/x',
      IFS: ' ',
      PS4: '+',
      SHELLOPTS: 'xtrace',
      PERL5OPT: '-d',
      PYTHONSTARTUP: '/x.py',
      NODE_OPTIONS: '--require /x.js',
    }
    const safe = { SAFE_PARENS: '(not a function)', SAFE_LATER: 'x () { :; }' }
    const built = buildEnvironment({ scrub: { hardening: true } }, { ...hostile, ...safe })
    for (const key of Object.keys(hostile)) {
      expect(built.env[key]).toBeUndefined()
      expect(built.removed).toContainEqual({ key, reason: 'hardening' })
    }
    expect(built.env).toEqual(expect.objectContaining(safe))
    // Off by default: the host's environment is its user's own.
    const byDefault = buildEnvironment({}, hostile)
    for (const key of Object.keys(hostile)) expect(byDefault.sources[key]).toBe('inherited')
    const soft = buildEnvironment({ scrub: { hardening: false } }, hostile)
    for (const key of Object.keys(hostile)) expect(soft.sources[key]).toBe('inherited')
  })

  it('explicit env cannot displace managed keys', () => {
    const built = buildEnvironment(
      { env: { DSH_SESSION_ID: 'forged', PATH: '/forged' }, dshEnv: { DSH_SESSION_ID: 'real', PATH: '/real' } },
      parent,
    )
    expect(built.env.DSH_SESSION_ID).toBe('real')
    expect(built.env.PATH).toBe('/real')
    expect(built.sources.DSH_SESSION_ID).toBe('managed')
    expect(built.sources.PATH).toBe('managed')
  })

  posix.it('parentEnv defaults to process.env', async () => {
    await withEnv({ EXEC_SPEC_DEFAULT_PARENT: 'yes', DSH_EXEC_SPEC_STALE: 'stale' }, () => {
      const built = buildEnvironment({})
      expect(built.env.EXEC_SPEC_DEFAULT_PARENT).toBe('yes')
      expect(built.sources.EXEC_SPEC_DEFAULT_PARENT).toBe('inherited')
      expect(built.removed).toContainEqual({ key: 'DSH_EXEC_SPEC_STALE', reason: 'managed-prefix' })
    })
  })

  // What the caller's process.env holds is what the child inherits, whatever
  // kind of object it is (not the process environment underneath).
  posix.it('an object assigned to process.env is what the child inherits, not the OS environment', async () => {
    const original = process.env
    process.env = { ...original, EXEC_SPEC_ONLY_IN_OBJECT: 'object' }
    delete process.env.PATH
    try {
      expect(buildEnvironment({}).env.EXEC_SPEC_ONLY_IN_OBJECT).toBe('object')
      expect(buildEnvironment({}).env.PATH).toBeUndefined()
      const env = await childEnv()
      expect(env.EXEC_SPEC_ONLY_IN_OBJECT).toBe('object')
      expect(env.PATH).toBeUndefined()
    } finally {
      process.env = original
    }
    expect(buildEnvironment({}).env.EXEC_SPEC_ONLY_IN_OBJECT).toBeUndefined()
  }, T)

  posix.it('a Proxy assigned to process.env is read through its traps', async () => {
    const original = process.env
    process.env = new Proxy({ ...original }, { get: (target, key) => (key === 'HOME' ? '/from-proxy' : target[key]) })
    try {
      expect(buildEnvironment({}).env.HOME).toBe('/from-proxy')
    } finally {
      process.env = original
    }
  })

  posix.it("a worker's own process.env is what its children inherit", async () => {
    const { Worker } = require('node:worker_threads')
    const source = `
      const { parentPort } = require('node:worker_threads')
      const { execute, buildEnvironment } = require(${JSON.stringify(ROOT)})
      process.env.EXEC_SPEC_WORKER_ONLY = 'worker'
      execute({ command: [${JSON.stringify(ENV_PROGRAM)}, '-0'] })
        .then((execution) => execution.result())
        .then((result) => parentPort.postMessage({ built: buildEnvironment({}).env.EXEC_SPEC_WORKER_ONLY, child: result.stdout.text }))
    `
    const message = await new Promise((resolve, reject) => {
      const worker = new Worker(source, { eval: true })
      worker.once('message', resolve)
      worker.once('error', reject)
    })
    expect(message.built).toBe('worker')
    expect(parseEnv0(message.child).EXEC_SPEC_WORKER_ONLY).toBe('worker')
    expect(process.env.EXEC_SPEC_WORKER_ONLY).toBeUndefined()
  }, T)

  // Node's own process.env on a plain `node` main thread, not a test runner's copy.
  posix.it('the main thread’s own process.env gives what reading a copy of it gives', () => {
    const child = runNode([path.join(FIXTURES, 'host-env.cjs'), ROOT, 'genuine'])
    expect(child.stderr).toBe('')
    const { first, second } = lastJsonLine(child.stdout)
    for (const { built, copy, child: seen } of [first, second]) {
      expect(built).toEqual(copy)
      expect(seen).toEqual(built)
    }
    expect(first.built).toMatchObject({ HOST_ENV_SET: 'é = € 😀', HOST_ENV_EMPTY: '', host_env_lower: 'lower' })
    // Changes made between calls are seen by the next one.
    expect(second.built.HOST_ENV_SET).toBeUndefined()
    expect(second.built.HOST_ENV_EMPTY).toBe('now set')
  }, T)

  it('reading process.env is safe while a SHARE_ENV worker adds and deletes variables', () => {
    const child = runNode([path.join(FIXTURES, 'host-env-shared.cjs'), ROOT, '1000'])
    expect(child.signal).toBe(null)
    expect(child.status).toBe(0)
    const { reads, unexpected } = lastJsonLine(child.stdout)
    expect(unexpected).toEqual([])
    expect(reads).toBeGreaterThan(0)
  }, T)

  posix.it('a plain object assigned to process.env before the package loads is read as that object', () => {
    const child = runNode([path.join(FIXTURES, 'host-env.cjs'), ROOT, 'replaced'], { env: { HOST_ENV_ONLY_IN_OS: 'os' } })
    expect(child.stderr).toBe('')
    const { first } = lastJsonLine(child.stdout)
    for (const seen of [first.built, first.child]) {
      expect(seen.HOST_ENV_ONLY_IN_OBJECT).toBe('object')
      expect(seen.HOST_ENV_ONLY_IN_OS).toBeUndefined()
    }
  }, T)

  // Both reach the OS environment, yet are not Node's own object over it.
  posix.it.each(['proxy', 'inherit'])('a process.env replaced before the package loads by a Proxy over the real one, or an object inheriting from it, is read as that object (%s)', (mode) => {
    const child = runNode([path.join(FIXTURES, 'host-env.cjs'), ROOT, mode], { env: { HOST_ENV_ONLY_IN_OS: 'os' } })
    expect(child.stderr).toBe('')
    const { first } = lastJsonLine(child.stdout)
    expect(first.built).toEqual(first.copy)
    expect(first.child).toEqual(first.built)
    expect(first.built.HOST_ENV_ONLY_IN_OS).toBeUndefined()
  }, T)

  it('values of every length around 256 UTF-8 bytes come through whole, whatever their characters', () => {
    for (const unit of ['x', 'é', '€', '😀']) {
      for (let bytes = 240; bytes <= 270; bytes++) {
        const value = unit.repeat(Math.ceil(bytes / Buffer.byteLength(unit)))
        expect(buildEnvironment({ env: { X: value } }, { [value]: value }).env).toEqual({ [value]: value, X: value, ...TERMINAL_DEFAULTS })
      }
    }
  })

  posix.it('is exactly what execute() gives the child (one pipeline)', async () => {
    const spec = {
      scrub: { exclude: ['*KEY*', 'EXEC_SPEC_DROP*'], hardening: true },
      terminalEnv: { TERM: 'vt100' },
      env: { EXEC_SPEC_EXPLICIT: 'e', EXEC_SPEC_GONE: undefined },
      dshEnv: { DSH_SESSION_ID: 'same', DSH_EXEC_SPEC_X: 'x' },
    }
    await withEnv({ EXEC_SPEC_DROP_ME: '1', EXEC_SPEC_GONE: '1', DSH_SESSION_ID: 'stale', BASH_ENV: '/nonexistent' }, async () => {
      const built = buildEnvironment(spec)
      const env = await childEnv(spec)
      expect(env).toEqual(built.env)
    })
  }, T)
})

proc.describe('teardown of the JS environment ends the group (child process)', () => {
  // The fixture starts a TERM-ignoring leader with a grandchild and a grace of a
  // minute, reports the group, then ends the way the mode says. Teardown kills
  // without a grace, so nothing of the group may outlive the fixture for long.
  it.each([
    ['process.exit()', 'exit'],
    ['an uncaught exception', 'throw'],
    ['worker.terminate()', 'worker'],
  ])('%s', async (_title, mode) => {
    const child = runNode([path.join(FIXTURES, 'exec-teardown.cjs'), mode, ROOT], { timeout: 30_000 })
    expect(child.signal).toBe(null)
    const pid = JSON.parse(child.stdout.split('\n')[0]).pid
    expect(pid).toBeGreaterThan(0)
    await groupGone(pid)
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

posix.describe('waiting does not depend on SIGCHLD (child process)', () => {
  const strace = ['/usr/bin/strace', '/bin/strace'].find((file) => fs.existsSync(file))
  const expected = [
    'first\n',
    'node-1\n',
    'after-node\n',
    'native-slow\n',
    'node-fast\n',
    'native-fast\n',
    'node-slow\n',
    ...Array(8).fill(''),
    'last\n',
  ]

  function check(child) {
    expect(child.signal).toBe(null)
    expect(child.status).toBe(0)
    const results = lastJsonLine(child.stdout)
    expect(results.map((r) => r.stdout)).toEqual(expected)
    expect(results.slice(7, 15).map((r) => r.exitCode)).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    for (const result of results) expect(result.timedOut ?? false).toBe(false)
  }

  it('native executions interleaved with Node child_process children all finish', () => {
    check(runNode([path.join(FIXTURES, 'exec-interleave.cjs'), ROOT], { timeout: 60_000 }))
  }, 90_000)

  straceInjection.it('…also with pidfd_open failing (strace fault injection: the waiter-thread fallback)', () => {
    // Skipped only off CI: there a missing strace must fail, not pass quietly.
    if (!strace) throw new Error('strace is required in CI (.ci/run installs it)')
    const { spawnSync } = require('node:child_process')
    const child = spawnSync(
      strace,
      ['-f', '-qq', '-o', '/dev/null', '-e', 'trace=pidfd_open', '-e', 'inject=pidfd_open:error=ENOSYS', process.execPath, path.join(FIXTURES, 'exec-interleave.cjs'), ROOT],
      { encoding: 'utf8', timeout: 60_000, cwd: ROOT },
    )
    if (child.error) throw child.error
    if (/ptrace|Operation not permitted/i.test(child.stderr) && child.status !== 0) {
      // No ptrace in this sandbox: nothing to learn here.
      return
    }
    check({ status: child.status, signal: child.signal, stdout: child.stdout })
  }, 90_000)
})
