// A composition that loads the harness's bash or pwsh tool but not this
// package's plugin gets no tool at all: Cordis keeps a plugin whose `inject`
// names a missing service pending, silently, and the model's calls fail with
// `unknown tool "bash"`. The executors and the subprocess runtime look once,
// shortly after they start, and say so.

/** How long after the provider starts the composition is looked at. */
export const SETTLE_MS = 1000

/**
 * The names of the plugins of `ctx`'s registry still pending for want of
 * `shellEnv`; empty when the service is there or the registry cannot be read
 * (a Cordis line without `ctx.registry.values()` or fiber states).
 */
export function waitingForShellEnv(ctx) {
  if (ctx.get('shellEnv') !== undefined) return []
  const runtimes = ctx.registry?.values?.()
  if (runtimes === undefined) return []
  const waiting = []
  for (const runtime of runtimes) {
    for (const fiber of runtime.fibers ?? []) {
      // FiberState.PENDING is 0 in every Cordis 4 line.
      if (fiber.state === 0 && fiber.inject !== undefined && Object.hasOwn(fiber.inject, 'shellEnv')) {
        waiting.push(runtime.name ?? 'a plugin')
      }
    }
  }
  return [...new Set(waiting)]
}

/**
 * Warns once (`DSH_SHELL_ENV_SERVICE_MISSING`) when, `SETTLE_MS` after
 * `provider` (the executor or runtime, for the message) started in `ctx`,
 * plugins still wait for `ctx.shellEnv`. The timer ends with the provider's
 * fiber and never keeps the process alive.
 */
export function warnIfShellEnvMissing(ctx, provider) {
  ctx.effect(() => {
    const timer = setTimeout(() => {
      const waiting = waitingForShellEnv(ctx)
      if (waiting.length === 0) return
      process.emitWarning(
        `${waiting.join(', ')} ${waiting.length === 1 ? 'waits' : 'wait'} for ctx.shellEnv, which no plugin provides, ` +
          `so ${provider} runs no command for ${waiting.length === 1 ? 'it' : 'them'}: load this package's plugin ` +
          `(await ctx.plugin(shellEnv, { dshHome }) with import * as shellEnv from '@deepseek-ai/dsh-shell-env')`,
        { type: 'DshShellEnvWarning', code: 'DSH_SHELL_ENV_SERVICE_MISSING' },
      )
    }, SETTLE_MS)
    timer.unref()
    return () => clearTimeout(timer)
  }, 'shell-env-missing')
}
