'use strict'

// execute(): the child environment. What the caller's process.env passes on,
// what is scrubbed (managed DSH_* names, credentials, scrub.inherit,
// scrub.includeOnly, scrub.hardening), terminalEnv, explicit env and dshEnv.
// Real child processes, no mocks. Runs unchanged under `vitest run` (globals:
// true) and `jest`.
//
// Conventions (see helpers.cjs): errors are checked with
// `util.types.isNativeError` (Jest runs this file in its own realm), never
// `instanceof`. The child's environment is read with env(1) run directly
// (childEnv in execute-helpers.cjs), so no shell adds anything.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const { rejected, thrown, expectCode, agentExecution, trustedScratch } = require('./helpers.cjs')
const { delay, run } = require('./process-helpers.cjs')
const { PYTHON, python, posix } = require('./platform.cjs')
const { T, TERMINAL_DEFAULTS, HOME, withEnv, childEnv, script, registry } = require('./execute-helpers.cjs')

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

  // Each command reads process.env anew, and what the scrub made of it last
  // time is never used for a process.env that changed since.
  posix.it('a process.env changed between two commands is scrubbed as it is now', async () => {
    const token = 'ghp_0123456789abcdefghijABCDEFGHIJ012345'
    await withEnv({ EXEC_SPEC_CHANGING: 'plain', EXEC_SPEC_NOTE: 'note' }, async () => {
      for (let round = 0; round < 2; round++) {
        const env = await childEnv()
        expect([env.EXEC_SPEC_CHANGING, env.EXEC_SPEC_NOTE]).toEqual(['plain', 'note'])
      }
      // A credential-looking variable set between two commands.
      process.env.EXEC_SPEC_DB_PASSWORD = 'hunter2'
      expect((await childEnv()).EXEC_SPEC_DB_PASSWORD).toBeUndefined()
      // A value changed in place, to a token.
      process.env.EXEC_SPEC_CHANGING = token
      const changed = await childEnv()
      expect(changed.EXEC_SPEC_CHANGING).toBeUndefined()
      expect(changed.EXEC_SPEC_NOTE).toBe('note')
      // A value changed in place to one of the same length: a switch, then a password.
      process.env.EXEC_SPEC_DB_PASSWORD = 'true'
      expect((await childEnv()).EXEC_SPEC_DB_PASSWORD).toBe('true')
      process.env.EXEC_SPEC_DB_PASSWORD = 'hunt'
      expect((await childEnv()).EXEC_SPEC_DB_PASSWORD).toBeUndefined()
      // A key removed, then the value changed back.
      delete process.env.EXEC_SPEC_NOTE
      process.env.EXEC_SPEC_CHANGING = 'plain'
      const removed = await childEnv()
      expect('EXEC_SPEC_NOTE' in removed).toBe(false)
      expect(removed.EXEC_SPEC_CHANGING).toBe('plain')
      delete process.env.EXEC_SPEC_DB_PASSWORD
    })
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
