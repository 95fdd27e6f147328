// Compositions of the published harness (0.1.0-rc.8) for the executor specs:
// the model's bash tool, the jobs service and its tools, this package as
// `ctx.shellEnv`, and a `ctx.shell` executor under test. ES modules, as the
// harness's packages are; loaded one at a time (Jest's module loader fails
// concurrent imports of shared modules).

import os from 'node:os'

/** The harness packages, each imported once. */
export async function loadHarness() {
  const cordis = await import('@deepseek-ai/cordis')
  const prompt = await import('@deepseek-ai/dsh-system-prompt')
  const tools = await import('@deepseek-ai/dsh-tools')
  const jobs = await import('@deepseek-ai/dsh-jobs-local')
  const toolJobs = await import('@deepseek-ai/dsh-tool-jobs')
  const toolBash = await import('@deepseek-ai/dsh-tool-bash')
  const shellEnv = await import('@deepseek-ai/dsh-shell-env')
  return {
    Context: cordis.Context,
    SystemPrompt: prompt.default,
    ToolRuntime: tools.default,
    LocalJobRegistry: jobs.default,
    toolJobs,
    toolBash,
    shellEnv,
  }
}

/**
 * A composition plugin holding the bash tool over `executor` (a plugin and its
 * config): what a harness composition looks like. `parts.shellEnvConfig`
 * configures this package's registry.
 */
export function composition(parts, executor, executorConfig, shellEnvConfig = { dshHome: os.tmpdir() }) {
  return {
    name: 'composition',
    async apply(ctx) {
      await ctx.plugin(parts.SystemPrompt)
      await ctx.plugin(parts.ToolRuntime)
      await ctx.plugin(parts.LocalJobRegistry)
      await ctx.plugin(executor, executorConfig)
      await ctx.plugin(parts.shellEnv, shellEnvConfig)
      await ctx.plugin(parts.toolBash)
      await ctx.plugin(parts.toolJobs)
    },
  }
}

/** The context a composition plugin's services are reachable from, once it started. */
export async function started(root, plugin) {
  const fiber = root.plugin(plugin)
  await fiber
  // The composition's apply plugs its parts asynchronously.
  for (let tries = 0; tries < 200 && fiber.ctx.get('tools')?.get('job_output') === undefined; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return fiber
}

/** A bash tool call as the agent loop makes it; `agent` is `{ session: { header } }` or undefined. */
export function callTool(ctx, name, args, { agent, signal = new AbortController().signal } = {}) {
  return ctx.get('tools').execute({
    callId: `call-${Math.random().toString(36).slice(2)}`,
    name,
    arguments: args,
    ...(agent === undefined ? {} : { agent }),
    signal,
  })
}

/** An agent the bash tool accepts: a session header with an id and a cwd. */
export const agent = (id, cwd = os.tmpdir()) => ({ session: { header: { id, cwd } } })

/** `KEY=value` lines as an object. */
export function variables(text) {
  const out = {}
  for (const line of text.split('\n')) {
    const at = line.indexOf('=')
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1)
  }
  return out
}

/**
 * The cases every Rust-spawned way of running the published bash tool passes
 * (this package's executor, or @deepseek-ai/dsh-bash-local over this
 * package's ctx.subprocess), on the report of
 * fixtures/harness/tool-bash-calls.mjs that `calls()` returns; `home` is its
 * DSH_HOME; `native` when the calls ran through this package's executor.
 * Defines the test cases where it is called.
 */
export function toolCallCases(calls, home, { native = false } = {}) {
  it('a foreground call: the managed DSH_* values, none inherited, and the terminal overrides', () => {
    expect(calls().foreground.isError).toBe(false)
    expect(variables(calls().foreground.text)).toEqual({ DSH_HOME: home, DSH_SESSION_ID: 'session-fg', DSH_SHELL: '1', PAGER: 'cat', TERM: 'dumb' })
  })

  it('a background call (@deepseek-ai/dsh-jobs-local): the job runs, its output is read through job_output, without a session when there is no agent', () => {
    expect(calls().background.text).toMatch(/^started background job /)
    const text = calls().jobOutput.text
    expect(variables(text.split('[stderr]')[0])).toEqual({ DSH_HOME: home, DSH_SHELL: '1' })
    expect(text).toContain('[stderr]\noops\n')
    expect(text).toContain('[status: completed, exit code: 0]')
  })

  it('a non-zero exit, a timeout, an abort and output over the cap render as the tool renders them', () => {
    const { exit, timeout, abort, big } = calls()
    expect(exit.text).toBe('out\n[exit code: 3]')
    expect(timeout.text).toBe('(no output)\n[timed out after 200ms]\n[killed by signal: SIGTERM]')
    expect(abort.isError).toBe(true)
    expect(abort.text).toMatch(/abort/i)
    const notice = /\n\[output truncated; full output: (.+)\]$/.exec(big.text)
    expect(notice).not.toBeNull()
    expect(big.text.endsWith(`2000\n${notice[0]}`)).toBe(true)
  })

  it('a command that daemonizes (setsid -f, a perl double fork) leaves nothing running once its call returned or timed out', () => {
    const { escape, escapeTimeout, escapees } = calls()
    // This package's executor says what it ended (a setsid daemon and a perl
    // double fork, whose middle process may still be exiting then: 2 or 3);
    // the reference executor over ctx.subprocess does not.
    if (native) {
      expect(escape.text).toMatch(/^left\n\[stderr\]\n\[ended [23] background processes when the command exited; use the jobs tool to keep one running\]\n$/)
    } else {
      expect(escape.text).toBe('left\n')
    }
    expect(escapeTimeout.text).toContain('[timed out after 1000ms]')
    expect(escapees.map(({ file }) => file).sort()).toEqual(['exit-perl', 'exit-setsid', 'timeout-perl', 'timeout-setsid'])
    expect(escapees.filter(({ alive }) => alive)).toEqual([])
  })
}
