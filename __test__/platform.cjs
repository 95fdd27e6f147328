'use strict'

// What a spec needs of the platform it runs on, as named gates. Plain
// CommonJS so that Vitest (globals: true), Jest and the ES module specs load
// the very same file. Each gate is `{ describe, it, test, runs, reason }`:
// `describe`, `it` and `test` are the runner's own where the platform has
// what the gate names, and their `.skip` variants elsewhere (both runners
// have `.skip`, `.skip.each` and `describe.skip.each`; Jest has no `skipIf`),
// so a skipped case is listed under its own name. `reason` says what is
// missing where it is skipped.
//
//   const { signals } = require('./platform.cjs')
//   signals.it('a TERM-ignoring command is killed after the grace', …)
//
// A case that needs a platform only for its command is better made portable
// (`nodeArgv`, `portable.print`) than gated.

const fs = require('node:fs')

const WINDOWS = process.platform === 'win32'
const LINUX = process.platform === 'linux'

/** A gate: the runner's functions when `runs`, their `.skip` variants otherwise. */
function gate(runs, reason) {
  const pick = (fn) => (runs ? fn : fn.skip)
  return { runs, reason, describe: pick(describe), it: pick(it), test: pick(test) }
}

const strace = LINUX && ['/usr/bin/strace', '/bin/strace'].some((file) => fs.existsSync(file))

/**
 * bash, /bin/sh and the POSIX utilities (`env`, `sleep`, `touch`, `seq`,
 * `cat`, …), shell scripts run through their `#!` line, and POSIX file modes:
 * none of them is part of Windows.
 */
const posix = gate(!WINDOWS, 'bash, /bin/sh, POSIX utilities, #! scripts and file modes')

/**
 * POSIX process groups and signals: SIGTERM then SIGKILL to a group, a
 * command's `trap`, death by a signal, the guardian and the reaper. Windows
 * ends a command's Job Object instead (docs/process.md, "Windows"), which
 * scripts/smoke-windows.cjs and the core's tests cover there.
 */
const signals = gate(!WINDOWS, 'POSIX process groups and signals')

/** Linux /proc: process states, zombies, a process's children, descriptors, threads and environment. */
const proc = gate(LINUX, 'Linux /proc')

/** Linux pidfds and the waiter-thread fallback when pidfd_open fails. */
const pidfd = gate(LINUX, 'Linux pidfds')

/**
 * strace fault injection (Linux). Without strace the cases are skipped,
 * except in CI, where a missing strace is a failure.
 */
const straceInjection = gate(LINUX && (strace || Boolean(process.env.CI)), 'strace fault injection (Linux, strace installed)')

/** The ELF binaries and readelf of the glibc check (Linux). */
const elf = gate(LINUX, 'ELF binaries and readelf (Linux)')

/** The kernel's ARG_MAX and MAX_ARG_STRLEN, which execve reports as E2BIG. */
const argMax = gate(!WINDOWS, 'the POSIX ARG_MAX and MAX_ARG_STRLEN limits (E2BIG)')

/**
 * Windows PowerShell and PowerShell 7 (`powershell`, `pwsh`), which every
 * Windows runner of the release pipeline has and wine has not (the wine
 * runner, scripts/test-wine-suites.sh, sets WINEPREFIX).
 */
const powershell = gate(WINDOWS && !process.env.WINEPREFIX, 'Windows PowerShell and pwsh (a Windows machine; wine has neither)')

/**
 * A pseudo console (ConPTY): a command on a terminal on Windows. Wine 8 has
 * one too, but connects only what a command writes to its console itself
 * (`CONOUT$`) to it: the cases with ordinary commands are `consoleCommands`.
 */
const conpty = gate(WINDOWS, 'a Windows pseudo console (ConPTY)')

/**
 * Ordinary console programs (`cmd`, `pwsh`) on a pseudo console, whose
 * standard handles are the console: a Windows machine (under wine they do
 * not reach the pseudo console, and there is no pwsh).
 */
const consoleCommands = gate(WINDOWS && !process.env.WINEPREFIX, 'ordinary commands on a pseudo console (a Windows machine; under wine their output does not reach it)')

/** `[node, '-e', script]`: an argv command that runs the same on every platform. */
const nodeArgv = (script, ...args) => [process.execPath, '-e', script, ...args]

/**
 * Spec fields running a command through the platform's own shell: `sh`-style
 * scripts under bash on POSIX, `cmd.exe /d /s /c` on Windows.
 */
const portable = {
  /** Prints the value of variable `name` (nothing when it is unset), without a newline. */
  print(name) {
    return WINDOWS ? { command: nodeArgv(`process.stdout.write(process.env[${JSON.stringify(name)}] ?? '')`) } : { command: `printf %s "$${name}"` }
  },
}

/** A Python 3 interpreter on PATH (`python3`, else `python`), for language-path cases. */
const PYTHON = WINDOWS
  ? undefined
  : ['python3', 'python'].find((name) => require('node:child_process').spawnSync(name, ['-c', 'import sys; sys.exit(sys.version_info[0] != 3)']).status === 0)
const python = gate(PYTHON !== undefined, 'a Python 3 interpreter on PATH')

module.exports = { WINDOWS, LINUX, PYTHON, python, gate, posix, signals, proc, pidfd, straceInjection, elf, argMax, powershell, conpty, consoleCommands, nodeArgv, portable }
