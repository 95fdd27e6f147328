// Who owns the native executors' processes: the composition an executor was
// loaded into (the parent of its fiber), not the executor's own fiber. A
// reload of the executor, or of the plugin that started a process, leaves a
// background process running; the composition's teardown stops every one
// (SIGTERM, then SIGKILL after the grace), waits until each group is gone,
// and then removes the spill files their results named.

import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { removeSpillFile } = require('../lib/index.js')

/** One owner per composition fiber, shared by every executor loaded there. */
const owners = new WeakMap()

/** The owner for an executor constructed with `ctx`. */
export function ownerOf(ctx, label) {
  // Cordis 4: a plugin's fiber knows the context it was plugged into.
  const composition = ctx.fiber?.parent ?? ctx
  const key = composition.fiber ?? composition
  let owner = owners.get(key)
  if (owner === undefined || owner.closed) {
    const created = new ProcessOwner()
    owners.set(key, created)
    composition.effect(() => () => created.close(), `${label}: the composition's shell processes`)
    owner = created
  }
  return owner
}

/** The processes and spill files of one composition. */
export class ProcessOwner {
  /** Set once teardown began: what starts from now on is stopped at once. */
  closed = false
  #spawning = new Set()
  #live = new Set()
  #spillFiles = new Set()

  /** Tracks a spawn under way, so that teardown waits for it too. */
  spawning(promise) {
    this.#spawning.add(promise)
    const settled = () => this.#spawning.delete(promise)
    promise.then(settled, settled)
    return promise
  }

  /**
   * Owns `execution` until its group is gone, and its result's spill files
   * until teardown. Resolves to the result.
   */
  async adopt(execution) {
    this.#live.add(execution)
    if (this.closed) execution.kill()
    let result
    try {
      result = await execution.result()
    } finally {
      this.#live.delete(execution)
    }
    for (const stream of [result.stdout, result.stderr]) {
      if (stream.spillPath) this.#spillFiles.add(stream.spillPath)
    }
    if (this.closed) this.#removeSpillFiles()
    return result
  }

  /** Teardown: stops every process, waits for each group, removes the spill files. */
  async close() {
    this.closed = true
    for (const execution of this.#live) execution.kill()
    await Promise.allSettled([...this.#spawning])
    await Promise.allSettled([...this.#live].map((execution) => execution.done))
    this.#removeSpillFiles()
  }

  #removeSpillFiles() {
    for (const path of this.#spillFiles) removeSpillFile(path)
    this.#spillFiles.clear()
  }
}
