'use strict'

// The bad-input matrix, the rows of CASES that run commands (run by
// bad-input-execute.spec.cjs, counted by bad-input-matrix.spec.cjs):
// execute(spec), buildEnvironment(spec, parentEnv), the ShellExecution handle
// and the Cordis service ctx.shellEnv under both supported Cordis lines. A
// command these rows hand over leaves a marker file behind if it ever runs.
// The row format and the helpers are in bad-input-helpers.cjs.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { types } = require('node:util')

const { contributor, agentExecution } = require('./helpers.cjs')
const { WINDOWS, posix, argMax, nodeArgv } = require('./platform.cjs')
const {
  HOME,
  MiB,
  LONE_HIGH,
  LONE_LOW,
  cordis,
  revoked,
  throwingGetter,
  throwingTrap,
  ownProto,
  shapeRegistry,
  pastArgMax,
  adder,
  INVALID_NAME,
  INVALID_KEY,
  INVALID_OPTION,
  INVALID_EXECUTION,
  INVALID_RESULT,
  INVALID_VALUE,
  RESOLVER_FAILED,
  INVALID_THIS,
  isTypeError,
  CORDIS_LINES,
} = require('./bad-input-helpers.cjs')

const { ShellEnvRegistry, ShellExecution, execute, buildEnvironment } = require('..')

// Made at load time: the tables below name marker files in it.
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'dsh-bad-input-'))
const markers = []

/** A shell command that would leave a marker file behind if it ever ran. */
function markCommand() {
  const marker = path.join(TMP, `marker-${markers.length}`)
  markers.push(marker)
  return `touch '${marker}'`
}

const TOUCH = ['/usr/bin/touch', '/bin/touch'].find((file) => fs.existsSync(file))

/** An argv command that would leave a marker file behind if it ever ran. */
function markArgv() {
  const marker = path.join(TMP, `marker-${markers.length}`)
  markers.push(marker)
  return WINDOWS ? nodeArgv('require("node:fs").writeFileSync(process.argv[1], "")', marker) : [TOUCH, marker]
}

const CASES = []
const add = adder(CASES)

const INVALID_SPEC = 'ERR_SHELL_EXEC_INVALID_SPEC'
const SPAWN_FAILED = 'ERR_SHELL_EXEC_SPAWN_FAILED'

const isE2big = (cause) => types.isNativeError(cause) && cause.code === 'E2BIG' && cause.syscall === 'spawn' && cause.errno < 0

// execute(spec) -----------------------------------------------------------------------------------
{
  const exec = add('execute', 'rejects')
  const run = (overrides) => execute({ command: markCommand(), ...overrides })
  for (const [title, spec] of [
    ['undefined', undefined],
    ['null', null],
    ['a number', 1],
    ['a string', 'echo hi'],
    ['a symbol', Symbol('spec')],
    ['an array', ['touch', '/tmp/x']],
    ['a Map', new Map([['command', 'true']])],
    ['a function', () => {}],
  ]) {
    exec(`spec ${title}`, () => execute(spec), INVALID_SPEC, { mentions: ['spec'] })
  }
  exec('spec a revoked Proxy', () => execute(revoked({ command: markCommand() })), INVALID_SPEC, { cause: isTypeError })
  exec('spec a Proxy whose get trap throws', (t) => execute(throwingTrap(t, { command: markCommand() }, 'get')), INVALID_SPEC, { cause: 'thrown' })
  exec('a command getter that throws', (t) => execute(throwingGetter(t, {}, 'command')), INVALID_SPEC, { cause: 'thrown' })
  exec('an env getter that throws a number', (t) => execute(throwingGetter(t, { command: markCommand() }, 'env', 42)), INVALID_SPEC, {
    cause: 'thrown',
  })
  for (const [title, command, field] of [
    ['missing', undefined, 'command'],
    ['null', null, 'command'],
    ['a number', 42, 'command'],
    ['an object', { program: 'true' }, 'command'],
    ['an empty array', [], 'command'],
    ['[""]', [''], 'command[0]'],
    ['an array with a number', ['touch', 5], 'command[1]'],
    ['an array with null', ['touch', null], 'command[1]'],
    ['an array with a hole', ['touch', , 'x'], 'command[1]'], // eslint-disable-line no-sparse-arrays
    ['a script with NUL', 'touch /tmp/x\0; true', 'command'],
    ['an argument with NUL', ['touch', '/tmp/x\0'], 'command[1]'],
    ['a script with a lone surrogate', `echo ${LONE_HIGH}`, 'command'],
    ['an argument with a lone surrogate', ['echo', LONE_LOW], 'command[1]'],
  ]) {
    exec(`command ${title}`, () => execute({ command }), INVALID_SPEC, { mentions: [field] })
  }
  exec('a command element getter that throws', (t) => execute({ command: throwingGetter(t, ['touch', 'x'], 1) }), INVALID_SPEC, {
    cause: 'thrown',
  })
  for (const [title, overrides, field] of [
    ['shell a relative path', { shell: 'bin/zsh' }, 'shell'],
    ['shell a number', { shell: 5 }, 'shell'],
    ['shell with NUL', { shell: '/bin/sh\0' }, 'shell'],
    ['shell with a lone surrogate', { shell: `/bin/${LONE_HIGH}sh` }, 'shell'],
    ['shell with an argv command', { shell: 'sh', command: markArgv() }, 'shell'],
    ['workdir a number', { workdir: 5 }, 'workdir'],
    ['workdir empty', { workdir: '' }, 'workdir'],
    ['workdir with NUL', { workdir: '/tmp\0' }, 'workdir'],
    ['workdir with a lone surrogate', { workdir: `/tmp/${LONE_LOW}` }, 'workdir'],
    ['timeoutMs a string', { timeoutMs: '100' }, 'timeoutMs'],
    ['timeoutMs an object', { timeoutMs: { ms: 100 } }, 'timeoutMs'],
    ['timeoutMs NaN', { timeoutMs: NaN }, 'timeoutMs'],
    ['timeoutMs a bigint', { timeoutMs: 100n }, 'timeoutMs'],
    ['graceMs negative', { graceMs: -1 }, 'graceMs'],
    ['stdoutMaxBytes fractional', { stdoutMaxBytes: 0.5 }, 'stdoutMaxBytes'],
    ['spillMaxBytes Infinity', { spillMaxBytes: Infinity }, 'spillMaxBytes'],
    ['onExpiry unknown', { onExpiry: 'never' }, 'onExpiry'],
    ['stdin a number', { stdin: 5 }, 'stdin'],
    ['stdin an array of bytes', { stdin: [104, 105] }, 'stdin'],
    ['stdin a Uint16Array', { stdin: new Uint16Array([1]) }, 'stdin'],
    ['stdin text with a lone surrogate', { stdin: `half ${LONE_HIGH}` }, 'stdin'],
    ['env a string', { env: 'A=1' }, 'env'],
    ['env an array', { env: ['A=1'] }, 'env'],
    ['env a Map', { env: new Map([['A', '1']]) }, 'env'],
    ['env a function', { env: () => ({ A: '1' }) }, 'env'],
    ['env a Date', { env: new Date(0) }, 'env'],
    ['env null', { env: null }, 'env'],
    ['an env value that is a number', { env: { BAD_INPUT: 1 } }, 'env.BAD_INPUT'],
    ['an env value that is null', { env: { BAD_INPUT: null } }, 'env.BAD_INPUT'],
    ['an env value that is an object', { env: { BAD_INPUT: { value: 'x' } } }, 'env.BAD_INPUT'],
    ['an env value that is a symbol', { env: { BAD_INPUT: Symbol('x') } }, 'env.BAD_INPUT'],
    ['an env value with NUL', { env: { BAD_INPUT: 'a\0b' } }, 'env.BAD_INPUT'],
    ['an env value with a lone surrogate', { env: { BAD_INPUT: `a${LONE_HIGH}` } }, 'env.BAD_INPUT'],
    ['an empty env name', { env: { '': 'x' } }, 'env.'],
    ['an env name with =', { env: { 'A=B': 'x' } }, 'env.A=B'],
    ['an env name with NUL', { env: { 'A\0B': 'x' } }, 'env.A'],
    ['an env name with a lone surrogate', { env: { [`A${LONE_LOW}`]: 'x' } }, 'env.A'],
    ['a symbol env name', { env: { [Symbol('BAD_INPUT')]: 'x' } }, 'env[Symbol(BAD_INPUT)]'],
    ['dshEnv an array', { dshEnv: [] }, 'dshEnv'],
    ['dshEnv a Map', { dshEnv: new Map() }, 'dshEnv'],
    ['dshEnv a non-managed key', { dshEnv: { HOME: '/evil' } }, 'dshEnv.HOME'],
    ['dshEnv an own __proto__ key', { dshEnv: ownProto('x') }, 'dshEnv.__proto__'],
    ['dshEnv a constructor key', { dshEnv: { constructor: 'x' } }, 'dshEnv.constructor'],
    ['dshEnv a number value', { dshEnv: { DSH_X: 1 } }, 'dshEnv.DSH_X'],
    ['dshEnv a value with NUL', { dshEnv: { DSH_X: '\0' } }, 'dshEnv.DSH_X'],
    ['dshEnv a value with a lone surrogate', { dshEnv: { DSH_X: LONE_LOW } }, 'dshEnv.DSH_X'],
    ['dshEnv a symbol key', { dshEnv: { [Symbol('DSH_X')]: 'x' } }, 'dshEnv[Symbol(DSH_X)]'],
    ['terminalEnv true', { terminalEnv: true }, 'terminalEnv'],
    ['terminalEnv an array', { terminalEnv: [] }, 'terminalEnv'],
    ['terminalEnv a number value', { terminalEnv: { TERM: 1 } }, 'terminalEnv.TERM'],
    ['terminalEnv a name with =', { terminalEnv: { 'A=B': 'x' } }, 'terminalEnv.A=B'],
    ['terminalEnv a lone surrogate', { terminalEnv: { TERM: LONE_HIGH } }, 'terminalEnv.TERM'],
    ['scrub a string', { scrub: 'core' }, 'scrub'],
    ['scrub an array', { scrub: ['core'] }, 'scrub'],
    ['scrub a Map', { scrub: new Map([['inherit', 'none']]) }, 'scrub'],
    ['scrub.inherit unknown', { scrub: { inherit: 'some' } }, 'scrub.inherit'],
    ['scrub.inherit a number', { scrub: { inherit: 0 } }, 'scrub.inherit'],
    ['scrub.exclude a string', { scrub: { exclude: '*KEY*' } }, 'scrub.exclude'],
    ['scrub.exclude with a number', { scrub: { exclude: [5] } }, 'scrub.exclude[0]'],
    ['scrub.exclude with an empty glob', { scrub: { exclude: [''] } }, 'scrub.exclude[0]'],
    ['scrub.exclude with NUL', { scrub: { exclude: ['*', 'A\0'] } }, 'scrub.exclude[1]'],
    ['scrub.includeOnly with a lone surrogate', { scrub: { includeOnly: [`P${LONE_HIGH}`] } }, 'scrub.includeOnly[0]'],
    ['scrub.hardening a string', { scrub: { hardening: 'yes' } }, 'scrub.hardening'],
    ['onOutput a string', { onOutput: 'console.log' }, 'onOutput'],
    ['signal a look-alike', { signal: { aborted: false } }, 'signal'],
    ['signal an AbortController', { signal: new AbortController() }, 'signal'],
    ['registry a plain object', { registry: { collect: () => ({}) } }, 'registry'],
    ['registry a look-alike inheriting ShellEnvRegistry.prototype', { registry: Object.create(ShellEnvRegistry.prototype) }, 'registry'],
    ['registry together with dshEnv', { registry: new ShellEnvRegistry({ dshHome: HOME }), dshEnv: {} }, 'registry'],
  ]) {
    exec(title, () => run(overrides), INVALID_SPEC, { mentions: [field] })
  }
  // A limit out of range is refused with the field, its minimum and why
  // (the least that starts a command's shell), whatever the host enforces.
  for (const [title, limits, field, least] of [
    ['limits a number', 64, 'limits', undefined],
    ['limits an array', [64], 'limits', undefined],
    ['limits.processes 0', { processes: 0 }, 'limits.processes', "from 1 to 2^53 - 1 (got 0); 1 because a command's shell is one process"],
    ['limits.processes fractional', { processes: 7.5 }, 'limits.processes', 'each thread counts as one'],
    ['limits.processes negative', { processes: -1 }, 'limits.processes', 'from 1'],
    ['limits.processes a string', { processes: '8' }, 'limits.processes', undefined],
    ['limits.memoryBytes below 1 MiB', { memoryBytes: 1024 }, 'limits.memoryBytes', '1048576 because'],
    ['limits.memoryBytes past 2^53', { memoryBytes: 2 ** 60 }, 'limits.memoryBytes', 'to 2^53 - 1'],
    ['limits.cpuSeconds 0', { cpuSeconds: 0 }, 'limits.cpuSeconds', '1 because'],
    ['limits.fileBytes NaN', { fileBytes: NaN }, 'limits.fileBytes', '1 because'],
    ['limits.openFiles 2', { openFiles: 2 }, 'limits.openFiles', '3 because stdin, stdout and stderr'],
    ['an unknown limit', { memory: 1 }, 'limits.memory', undefined],
  ]) {
    exec(title, () => run({ limits }), INVALID_SPEC, { mentions: least === undefined ? [field] : [field, least] })
  }
  exec('a scrub getter that throws', (t) => run({ scrub: throwingGetter(t, {}, 'inherit') }), INVALID_SPEC, { cause: 'thrown' })
  exec('env a Proxy whose ownKeys trap throws', (t) => run({ env: throwingTrap(t, {}, 'ownKeys') }), INVALID_SPEC, { cause: 'thrown' })
  exec('env a revoked Proxy', () => run({ env: revoked() }), INVALID_SPEC, { cause: isTypeError })
  exec('an env value getter that throws', (t) => run({ env: throwingGetter(t, {}, 'BAD_INPUT') }), INVALID_SPEC, { cause: 'thrown' })
  exec('signal a revoked Proxy', () => run({ signal: revoked() }), INVALID_SPEC, { cause: isTypeError })
  exec('workdir missing', () => run({ workdir: path.join(os.tmpdir(), 'dsh-bad-input-no-such-dir') }), 'ERR_SHELL_EXEC_INVALID_WORKDIR')
  exec('workdir a file', () => run({ workdir: __filename }), 'ERR_SHELL_EXEC_INVALID_WORKDIR')
  exec('spillDir missing', () => run({ spillDir: path.join(os.tmpdir(), 'dsh-bad-input-no-such-spill-dir') }), 'ERR_SHELL_EXEC_INVALID_SPILL_DIR')
  exec('spillDir a file', () => run({ spillDir: __filename }), 'ERR_SHELL_EXEC_INVALID_SPILL_DIR')
  exec('a program that does not exist', () => execute({ command: ['/nonexistent/dsh-bad-input'] }), SPAWN_FAILED, {
    cause: (cause) => types.isNativeError(cause) && cause.code === 'ENOENT',
  })
  exec('a program that is not executable', () => execute({ command: [__filename] }), SPAWN_FAILED, {
    cause: (cause) => types.isNativeError(cause) && cause.code === 'EACCES',
    gate: posix,
  })

  // Past the kernel's limits: refused by execve itself, reported as E2BIG.
  exec('env larger than ARG_MAX in total', () => run({ env: pastArgMax() }), SPAWN_FAILED, { cause: isE2big, gate: argMax })
  exec('an env value of 1 MiB (over MAX_ARG_STRLEN)', () => run({ env: { BAD_INPUT: 'x'.repeat(MiB) } }), SPAWN_FAILED, { cause: isE2big, gate: argMax })
  exec('an env name of 1 MiB', () => run({ env: { ['N'.repeat(MiB)]: 'x' } }), SPAWN_FAILED, { cause: isE2big, gate: argMax })
  exec('a 1 MiB script', () => execute({ command: `${markCommand()} #${'x'.repeat(MiB)}` }), SPAWN_FAILED, { cause: isE2big, gate: argMax })
  exec('a 1 MiB argument', () => execute({ command: [...markArgv(), 'x'.repeat(MiB)] }), SPAWN_FAILED, { cause: isE2big, gate: argMax })
  // No silent defaults: a field the spec does not have is refused, not ignored.
  exec('cwd instead of workdir', () => run({ cwd: '/tmp' }), INVALID_SPEC, { mentions: ['cwd', 'did you mean workdir'] })
  exec('timeout instead of timeoutMs', () => run({ timeout: 100 }), INVALID_SPEC, { mentions: ['timeout', 'did you mean timeoutMs'] })
  exec('an unknown field on the prototype', () => execute(Object.create({ colour: 'red' }, { command: { value: markCommand(), enumerable: true } })), INVALID_SPEC, {
    mentions: ['colour', 'the fields are'],
  })
  exec('an unknown scrub field', () => run({ scrub: { hardenning: true } }), INVALID_SPEC, { mentions: ['scrub.hardenning'] })
  exec('execution without registry', () => run({ execution: { agent: { session: { header: { id: 's' } } } } }), INVALID_SPEC, {
    mentions: ['execution', 'registry'],
  })
  exec('scrub.exclude a string', () => run({ scrub: { exclude: 'KEY' } }), INVALID_SPEC, { mentions: ['must be an array of strings (got string)'] })
  exec(
    'a contributor value of 1 MiB collected right before the spawn',
    () => run({ registry: shapeRegistry({ DSH_V: 'x'.repeat(MiB) }), execution: {} }),
    SPAWN_FAILED,
    { cause: isE2big, gate: argMax },
  )

  // Collection right before the spawn fails with the registry's codes.
  exec('registry + an execution that is a number', () => run({ registry: shapeRegistry({}), execution: 5 }), INVALID_EXECUTION)
  exec('registry + a resolver returning a Map', () => run({ registry: shapeRegistry(new Map()), execution: {} }), INVALID_RESULT)
  exec('registry + a resolver returning a lone surrogate', () => run({ registry: shapeRegistry({ DSH_V: LONE_LOW }) }), INVALID_VALUE)
  exec('registry + a resolver that throws', (t) => run({ registry: shapeRegistry(undefined, { resolve: () => { throw t.boom() } }) }), RESOLVER_FAILED, {
    cause: 'thrown',
  })
  exec('registry + an execution.agent getter that throws', (t) => run({ registry: shapeRegistry({}), execution: throwingGetter(t, {}, 'agent') }), INVALID_EXECUTION, {
    cause: 'thrown',
  })
}

// buildEnvironment(spec, parentEnv) -----------------------------------------------------------------
{
  const build = add('buildEnvironment', 'throws')
  for (const [title, spec] of [
    ['undefined', undefined],
    ['null', null],
    ['a string', 'env'],
    ['an array', [{}]],
    ['a Map', new Map()],
  ]) {
    build(`spec ${title}`, () => buildEnvironment(spec), INVALID_SPEC, { mentions: ['spec'] })
  }
  for (const [title, spec, field] of [
    ['env a number', { env: 5 }, 'env'],
    ['an env value that is a number', { env: { X: 5 } }, 'env.X'],
    ['an env value with NUL', { env: { X: '\0' } }, 'env.X'],
    ['an env value with a lone surrogate', { env: { X: LONE_HIGH } }, 'env.X'],
    ['a symbol env name', { env: { [Symbol('X')]: 'x' } }, 'env[Symbol(X)]'],
    ['dshEnv a non-managed key', { dshEnv: { HOME: '/' } }, 'dshEnv.HOME'],
    ['scrub.inherit unknown', { scrub: { inherit: 'x' } }, 'scrub.inherit'],
    ['a field the spec does not have', { cwd: '/tmp' }, 'cwd'],
    ['scrub.defaultExclude a string', { scrub: { defaultExclude: 'no' } }, 'scrub.defaultExclude'],
    ['registry, which buildEnvironment does not read', { registry: {} }, 'registry'],
    ['execution, which buildEnvironment does not read', { execution: {} }, 'execution'],
    ['terminalEnv a number value', { terminalEnv: { TERM: 1 } }, 'terminalEnv.TERM'],
  ]) {
    build(title, () => buildEnvironment(spec, {}), INVALID_SPEC, { mentions: [field] })
  }
  build('spec a revoked Proxy', () => buildEnvironment(revoked()), INVALID_SPEC, { cause: isTypeError })
  build('an env getter that throws', (t) => buildEnvironment(throwingGetter(t, {}, 'env'), {}), INVALID_SPEC, { cause: 'thrown' })
  for (const [title, parentEnv] of [
    ['a number', 5],
    ['a string', 'PATH=/bin'],
    ['an array', ['PATH=/bin']],
    ['a Map', new Map([['PATH', '/bin']])],
  ]) {
    build(`parentEnv ${title}`, () => buildEnvironment({}, parentEnv), INVALID_SPEC, { mentions: ['parentEnv'] })
  }
  build('a parentEnv getter that throws', (t) => buildEnvironment({}, throwingGetter(t, {}, 'PATH')), INVALID_SPEC, {
    mentions: ['parentEnv'],
    cause: 'thrown',
  })
  build('parentEnv a revoked Proxy', () => buildEnvironment({}, revoked()), INVALID_SPEC, { mentions: ['parentEnv'], cause: isTypeError })
}

// The ShellExecution handle -------------------------------------------------------------------------
{
  const handle = add('ShellExecution', 'throws')
  handle('new ShellExecution()', () => new ShellExecution(), 'ERR_ILLEGAL_CONSTRUCTOR')
  handle('new ShellExecution(a look-alike native)', () => new ShellExecution({ wait: () => Promise.resolve({}) }), 'ERR_ILLEGAL_CONSTRUCTOR')
  for (const [receiverTitle, receiver] of [
    ['a plain object', () => ({})],
    ['null', () => null],
    ['a look-alike inheriting ShellExecution.prototype', () => Object.create(ShellExecution.prototype)],
  ]) {
    for (const method of ['kill', 'readOutput', 'ref', 'unref', 'hasRef']) {
      handle(`${method}() on ${receiverTitle}`, () => ShellExecution.prototype[method].call(receiver()), INVALID_THIS, { mentions: [method] })
    }
    for (const getter of ['pid', 'status', 'exitCode', 'signal']) {
      handle(
        `the ${getter} getter on ${receiverTitle}`,
        () => Object.getOwnPropertyDescriptor(ShellExecution.prototype, getter).get.call(receiver()),
        INVALID_THIS,
        { mentions: [getter] },
      )
    }
    add('ShellExecution', 'rejects')(`result() on ${receiverTitle} rejects`, () => ShellExecution.prototype.result.call(receiver()), INVALID_THIS)
  }
}

// The Cordis service ctx.shellEnv (cordis 3.18 and 4.0 RC, real Contexts) ----------------------------
for (const [line] of CORDIS_LINES) {
  const service = () => cordis[line].service
  const sync = add(`${line} ctx.shellEnv`, 'throws')
  const async = add(`${line} ctx.shellEnv`, 'rejects')
  sync('register(null)', () => service().register(null), INVALID_NAME)
  sync('register() with a lower-case key', () => service().register(contributor('cordis-bad', ['dsh_lower'])), INVALID_KEY)
  sync('register() with a name getter that throws', (t) => service().register(throwingGetter(t, contributor('x', []), 'name')), INVALID_NAME, {
    cause: 'thrown',
  })
  sync('register() of a name the service already holds', () => service().register(contributor('cordis-base', ['DSH_CORDIS_OTHER'])), 'ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR')
  sync('collect(null)', () => service().collect(null), INVALID_EXECUTION)
  sync('collect({}, 5)', () => service().collect({}, 5), INVALID_OPTION)
  sync('collect() of a lone-surrogate session id', () => service().collect(agentExecution(LONE_HIGH)), INVALID_EXECUTION)
  async('collectAsync("x")', () => service().collectAsync('x'), INVALID_EXECUTION)
  async('collectAsync({}, { timeoutMs: -1 })', () => service().collectAsync({}, { timeoutMs: -1 }), INVALID_OPTION)
  async('execute(null)', () => service().execute(null), INVALID_SPEC)
  async('execute() with a getter that throws', (t) => service().execute(throwingGetter(t, { command: markCommand() }, 'dshEnv')), INVALID_SPEC, {
    cause: 'thrown',
  })
  async('execute() with a revoked Proxy', () => service().execute(revoked({ command: markCommand() })), INVALID_SPEC, { cause: isTypeError })
  async('execute() with an env getter that throws', (t) => service().execute(throwingGetter(t, { command: markCommand() }, 'env')), INVALID_SPEC, {
    cause: 'thrown',
  })
  async('execute() with dshEnv', () => service().execute({ command: markCommand(), dshEnv: {} }), INVALID_SPEC)
  async('execute() with an execution that is a number', () => service().execute({ command: markCommand() }, 5), INVALID_EXECUTION)
  async('execute() with a lone surrogate in env', () => service().execute({ command: markCommand(), env: { X: LONE_LOW } }), INVALID_SPEC, {
    mentions: ['env.X'],
  })
  async('execute() with env past ARG_MAX', () => service().execute({ command: markCommand(), env: pastArgMax() }), SPAWN_FAILED, {
    cause: isE2big, gate: argMax,
  })
}

module.exports = { CASES, TMP, markers }
