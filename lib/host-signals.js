'use strict'
// Commands run in process groups of their own, so a terminal's Ctrl-C never
// reaches them, and a host that dies of a signal runs no exit hook: without
// this, stopping the host with SIGINT, SIGTERM or SIGHUP would leave its
// commands running. While commands run, the main thread listens for those
// signals. When one arrives and nothing else listens for it, every command's
// group is ended (SIGKILL, as at exit) and the spill files removed, and the
// host then dies of the same signal, as it would have. Any other listener
// (signal-exit's aside, see below) decides for itself what the signal means:
// a graceful shutdown ends in process.exit(), whose hook ends the groups.
// Workers cannot listen for signals; their commands are covered while the
// main thread runs one.
//
// A host that exits while one of its commands still runs (process.exit(), a
// test runner ending its worker process with SIGTERM) ends the command with
// it; what `onHostExit` registers says so first, one line per command.

// Node's own timers: a test runner's fake timers (Jest's legacy ones have no
// `refresh()`) must neither break `done` nor keep listeners from going.
const { setTimeout } = require('node:timers')
const { isMainThread } = require('node:worker_threads')

const binding = require('./native.js')

/** @type {NodeJS.Signals[]} */
const SIGNALS = isMainThread && process.platform !== 'win32' ? ['SIGINT', 'SIGTERM', 'SIGHUP'] : []

// Node's own global and `process`: under Jest a test file's `process` is a
// copy whose listeners never hear a signal.
const hostGlobal = SIGNALS.length > 0 ? binding.hostGlobal() : globalThis
/** @type {NodeJS.Process & { __signal_exit_emitter__?: { count?: number } }} */
const host = hostGlobal.process

// Every copy of this package in the process (a test runner's per-file module
// registry, two versions in one dependency tree) adds a listener of its own.
// They know each other by this mark, which holds that copy's way to end its
// commands, so only a listener from elsewhere counts as someone else's choice.
const MARK = Symbol.for('@deepseek-ai/dsh-shell-env.endAllCommands')
/** The same listeners' way to report that copy's running commands. */
const REPORT = Symbol.for('@deepseek-ai/dsh-shell-env.reportRunning')

/** How long listeners stay after the last command ends. */
const IDLE_MS = 250

let running = 0
let listening = false
let idleTimer = null
/** What reports the commands still running as the host goes (execute.js), once. */
let reportOnExit = () => {}

/** Registers `report`, called once as the host exits or dies of a signal this package handles. */
function onHostExit(report) {
  let reported = false
  reportOnExit = () => {
    if (reported) return
    reported = true
    report()
  }
}

function onExit() {
  reportOnExit()
}

/** @param {NodeJS.Signals} signal */
function onSignal(signal) {
  // Listeners are read before anyone else's runs: this one is added first in
  // line, because a `process.once` listener is gone by the time it is called.
  const listeners = host.listeners(signal)
  const foreign = listeners.filter((listener) => !listener[MARK]).length
  if (foreign > signalExitListeners()) return
  // Every copy says what of its own still runs, before any ends.
  for (const listener of listeners) listener[REPORT]?.()
  for (const endAll of new Set(listeners.filter((listener) => listener[MARK]).map((listener) => listener[MARK]))) {
    endAll()
  }
  for (const name of SIGNALS) {
    for (const listener of host.listeners(name)) if (listener[MARK]) host.removeListener(name, listener)
  }
  listening = false
  // With no listener left, Node restores the default action. Where
  // signal-exit still listens, it hears this, runs its exit handlers and
  // raises the signal again itself.
  host.kill(host.pid, signal)
}
onSignal[MARK] = binding.endAllCommands
onSignal[REPORT] = () => reportOnExit()

/**
 * The listeners signal-exit (execa's, and many tools') has on each signal of
 * Node's own `process`: one per loaded copy, counted where each version
 * keeps its count (v4 on the global of its realm, v3 on `process`); copies in
 * a test file's sandbox listen on its `process` copy and do not count. It
 * steps aside for any other listener, as this does, so each would leave the
 * signal to the other; its listeners count as cooperating instead, and it
 * runs its handlers once these have gone.
 */
function signalExitListeners() {
  const count = (emitter) => (typeof emitter?.count === 'number' ? emitter.count : 0)
  return count(hostGlobal[Symbol.for('signal-exit emitter')]) + count(host.__signal_exit_emitter__)
}

function stopListening() {
  for (const signal of SIGNALS) host.removeListener(signal, onSignal)
  host.removeListener('exit', onExit)
  listening = false
}

/** A command is starting; listen from now on. */
function commandStarting() {
  running += 1
  if (!listening) {
    for (const signal of SIGNALS) host.prependListener(signal, onSignal)
    host.on('exit', onExit)
    listening = true
  }
}

/** A command is over (or never started); stop listening once none runs. */
function commandEnded() {
  running -= 1
  if (running === 0 && listening) {
    // One timer, re-armed: a loop of commands neither adds and removes
    // listeners nor schedules anything new for each command.
    if (idleTimer === null) idleTimer = setTimeout(stopIfIdle, IDLE_MS).unref()
    else idleTimer.refresh()
  }
}

function stopIfIdle() {
  if (running === 0 && listening) stopListening()
}

module.exports = { commandStarting, commandEnded, onHostExit }
