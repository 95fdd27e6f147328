'use strict'

// The Cordis service `ctx.shellEnv` running commands: the full loop (a
// contributor plugin, a stand-in bash tool, concurrent calls with and without
// an agent, dispose, hot reload, config update) and the registry API through
// the service (list, catalog, collect, collectAsync, execute).
//
// Once per supported Cordis line (VERSIONS in cordis-helpers.cjs), all the
// real packages, installed side by side (package.json devDependencies):
// - @deepseek-ai/cordis@4.0.4, the harness's own, ESM only, loaded with import();
// - cordis4 = cordis@4.0.0-rc.10, ESM only, loaded with import();
// - cordis3 = cordis@3.18.1, loaded with require() (its CommonJS build).
// No Cordis internals are mocked; commands really run. Runs unchanged under
// `vitest run` (globals: true) and `jest`.

const fs = require('node:fs')
const path = require('node:path')

const { expectCode, agentExecution, trustedScratch } = require('./helpers.cjs')
const { waitFor } = require('./process-helpers.cjs')
const { posix, nodeArgv } = require('./platform.cjs')
const { HOME, VERSIONS, cordisSuite } = require('./cordis-helpers.cjs')

const pkg = require('..')

const PROBE = 'dsh-cordis-probe'

/** A directory holding an executable `dsh-cordis-probe` that prints `PROBE=<tag> <region>`. */
function commandDirectory(parent, tag) {
  const dir = path.join(parent, tag)
  fs.mkdirSync(dir)
  const script = path.join(dir, PROBE)
  fs.writeFileSync(script, `#!/bin/sh\nprintf 'PROBE=%s %s\\n' '${tag}' "\${DSH_DEPLOYMENT_REGION-unset}"\n`)
  fs.chmodSync(script, 0o755)
  return dir
}

/** What the shell prints: its DSH_* variables, PATH, where the probe resolves, and the probe's own line. */
const REPORT = [
  "env | grep '^DSH_'",
  'printf "PATH=%s\\n" "$PATH"',
  `printf "WHICH=%s\\n" "$(command -v ${PROBE} || true)"`,
  `${PROBE} 2>/dev/null || echo PROBE=missing`,
].join('; ')

/** `KEY=value` lines of a report as an object. */
function parseReport(text) {
  const out = {}
  for (const line of text.split('\n')) {
    const at = line.indexOf('=')
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1)
  }
  return out
}

const dshKeys = (report) => Object.keys(report).filter((key) => key.startsWith('DSH_')).sort()

/** The contributor plugin: a key, the tool call it was resolved for, and a command directory. */
function regionPlugin() {
  return {
    name: 'deployment-region',
    inject: ['shellEnv'],
    apply(ctx, config) {
      ctx.shellEnv.register({
        name: 'deployment-region',
        variables: {
          DSH_DEPLOYMENT_REGION: { description: 'Current deployment region.' },
          DSH_DEPLOYMENT_CALL: { description: 'The tool call this value was resolved for.' },
        },
        commandDirectories: [config.bin],
        resolve: (execution) => ({ DSH_DEPLOYMENT_REGION: config.region, DSH_DEPLOYMENT_CALL: execution.toolCallId }),
      })
    },
  }
}

/**
 * Stands in for the bash tool: builds ToolExecution objects and runs commands
 * through ctx.shellEnv.execute. `handle.run` exists while the plugin is active.
 */
function bashToolPlugin(handle) {
  return {
    name: 'bash-tool',
    inject: ['shellEnv'],
    apply(ctx) {
      let calls = 0
      ctx.effect(() => {
        handle.run = async ({ command, sessionId, background = false }) => {
          const toolCallId = `call-${++calls}`
          const execution = sessionId === undefined ? { toolCallId } : agentExecution(sessionId, { toolCallId })
          const spec = background ? { command, onExpiry: 'none' } : { command, timeoutMs: 30_000 }
          const running = await ctx.shellEnv.execute(spec, execution)
          const result = await running.result()
          return { toolCallId, result, report: parseReport(result.stdout.text) }
        }
        return () => {
          handle.run = undefined
        }
      })
    },
  }
}

describe.each(VERSIONS)('Cordis service ctx.shellEnv under %s', (label, host) => {
  const { newRoot, plug, unplug } = cordisSuite(host)
  let tmp

  beforeAll(() => {
    // Command directories live here: somewhere no other user can write.
    tmp = trustedScratch('dsh-cordis-spec-')
  })

  afterAll(() => {
    fs.rmSync(tmp, { recursive: true, force: true })
  })

  // The command directories hold #!/bin/sh probes, and the report is a shell script.
  posix.describe('full loop', () => {
    const STALE = { DSH_SESSION_ID: 'stale-session', DSH_STALE_SENTINEL: 'stale', DSH_HOME: '/stale/dsh-home' }
    let saved

    beforeEach(() => {
      saved = Object.fromEntries(Object.keys(STALE).map((key) => [key, process.env[key]]))
      Object.assign(process.env, STALE)
    })

    afterEach(() => {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key]
        else process.env[key] = value
      }
    })

    it('concurrent parent, background child and no-agent calls each see their own facts; dispose and hot reload', async () => {
      const firstBin = commandDirectory(tmp, 'first')
      const secondBin = commandDirectory(tmp, 'second')
      const root = await newRoot()
      const tool = {}
      const region = regionPlugin()

      await plug(root, pkg, { dshHome: HOME })
      const contributor = await plug(root, region, { region: 'cn-north', bin: firstBin })
      await plug(root, bashToolPlugin(tool))
      expect(typeof tool.run).toBe('function')

      // Parent in the foreground, a child agent in the background (started
      // first and still running while the others finish), and a call with no agent.
      const [child, parent, none] = await Promise.all([
        tool.run({ command: `sleep 0.2; ${REPORT}`, sessionId: 'session-child', background: true }),
        tool.run({ command: REPORT, sessionId: 'session-parent' }),
        tool.run({ command: REPORT }),
      ])

      for (const call of [parent, child, none]) {
        expect(call.result.exitCode).toBe(0)
        expect(call.result.stderr.text).toBe('')
        const { report } = call
        expect(report.DSH_SHELL).toBe('1')
        expect(report.DSH_HOME).toBe(HOME)
        expect(report.DSH_STALE_SENTINEL).toBeUndefined()
        expect(report.DSH_DEPLOYMENT_REGION).toBe('cn-north')
        expect(report.DSH_DEPLOYMENT_CALL).toBe(call.toolCallId)
        expect(report.PATH.split(path.delimiter)[0]).toBe(firstBin)
        expect(report.WHICH).toBe(path.join(firstBin, PROBE))
        expect(report.PROBE).toBe('first cn-north')
      }
      expect(parent.report.DSH_SESSION_ID).toBe('session-parent')
      expect(child.report.DSH_SESSION_ID).toBe('session-child')
      expect(none.report.DSH_SESSION_ID).toBeUndefined()
      expect(dshKeys(none.report)).toEqual(['DSH_DEPLOYMENT_CALL', 'DSH_DEPLOYMENT_REGION', 'DSH_HOME', 'DSH_SHELL'])
      expect(child.result.timedOut).toBe(false)

      // Disposing the contributor plugin removes its key and its directory.
      await unplug(root, contributor)
      const after = await tool.run({ command: REPORT, sessionId: 'session-parent' })
      expect(dshKeys(after.report)).toEqual(['DSH_HOME', 'DSH_SESSION_ID', 'DSH_SHELL'])
      expect(after.report.PATH.split(path.delimiter)).not.toContain(firstBin)
      expect(after.report.WHICH).toBe('')
      expect(after.report.PROBE).toBe('missing')
      expect(root.shellEnv.catalog().commandDirectories).toEqual([])

      // Hot reload: the same plugin with new config registers the new facts.
      await plug(root, region, { region: 'eu-west', bin: secondBin })
      const reloaded = await tool.run({ command: REPORT, sessionId: 'session-parent' })
      expect(reloaded.report.DSH_DEPLOYMENT_REGION).toBe('eu-west')
      expect(reloaded.report.PATH.split(path.delimiter)).not.toContain(firstBin)
      expect(reloaded.report.WHICH).toBe(path.join(secondBin, PROBE))
      expect(reloaded.report.PROBE).toBe('second eu-west')
      expect(reloaded.report.DSH_SESSION_ID).toBe('session-parent')
      expect(reloaded.report.DSH_STALE_SENTINEL).toBeUndefined()
    })

    it('a config update of the contributor restarts it with the new value', async () => {
      const bin = commandDirectory(tmp, 'update')
      const root = await newRoot()
      const tool = {}
      await plug(root, pkg, { dshHome: HOME })
      const { fork } = await plug(root, regionPlugin(), { region: 'cn-north', bin })
      await plug(root, bashToolPlugin(tool))
      expect((await tool.run({ command: REPORT })).report.DSH_DEPLOYMENT_REGION).toBe('cn-north')

      await fork.update({ region: 'ap-south', bin })
      await host.settle(root)
      // @deepseek-ai/cordis restarts the fiber after update() returns: wait for the new registration.
      await waitFor(() => root.shellEnv.list().length > 0, 'the restarted contributor')
      const updated = await tool.run({ command: REPORT })
      expect(updated.report.DSH_DEPLOYMENT_REGION).toBe('ap-south')
      expect(updated.report.PROBE).toBe('update ap-south')
      expect(root.shellEnv.list().map((entry) => entry.contributor)).toEqual(['deployment-region', 'deployment-region'])
    })
  })

  describe('the registry API through the service', () => {
    it('list, catalog, collect, collectAsync and dshHome; a profile from Config', async () => {
      const bin = commandDirectory(tmp, 'api')
      const profileDir = path.join(tmp, 'profile')
      const root = await newRoot()
      await plug(root, pkg, { dshHome: HOME, profile: { name: 'work', dir: profileDir } })
      await plug(root, regionPlugin(), { region: 'cn-north', bin })
      await plug(root, {
        name: 'async-zeta',
        inject: ['shellEnv'],
        apply(ctx) {
          ctx.shellEnv.register({
            name: 'zeta',
            variables: { DSH_ZETA: { description: 'Resolved asynchronously.' } },
            resolve: async (execution) => ({ DSH_ZETA: execution.agent ? 'agent' : 'none' }),
          })
        },
      })

      const service = root.shellEnv
      expect(service.dshHome).toBe(HOME)
      expect(service.list()).toEqual([
        { contributor: 'deployment-region', description: 'The tool call this value was resolved for.', key: 'DSH_DEPLOYMENT_CALL' },
        { contributor: 'deployment-region', description: 'Current deployment region.', key: 'DSH_DEPLOYMENT_REGION' },
        { contributor: 'zeta', description: 'Resolved asynchronously.', key: 'DSH_ZETA' },
      ])

      const catalog = service.catalog()
      const owners = Object.fromEntries(catalog.variables.map((entry) => [entry.key, [entry.owner, entry.when]]))
      expect(owners).toEqual({
        DSH_DEPLOYMENT_CALL: ['deployment-region', 'resolver'],
        DSH_DEPLOYMENT_REGION: ['deployment-region', 'resolver'],
        DSH_HOME: ['built-in', 'always'],
        DSH_PROFILE: ['built-in', 'profile'],
        DSH_PROFILE_DIR: ['built-in', 'profile'],
        DSH_SESSION_ID: ['built-in', 'agent'],
        DSH_SHELL: ['built-in', 'always'],
        DSH_ZETA: ['zeta', 'resolver'],
      })
      expect(catalog.commandDirectories).toEqual([{ contributor: 'deployment-region', directories: [bin] }])

      const execution = agentExecution('session-api', { toolCallId: 'call-api' })
      const expected = {
        DSH_DEPLOYMENT_CALL: 'call-api',
        DSH_DEPLOYMENT_REGION: 'cn-north',
        DSH_HOME: HOME,
        DSH_PROFILE: 'work',
        DSH_PROFILE_DIR: profileDir,
        DSH_SESSION_ID: 'session-api',
        DSH_SHELL: '1',
        DSH_ZETA: 'agent',
        PATH: `${bin}${path.delimiter}/usr/bin`,
      }
      expect(await service.collectAsync(execution, { inheritedPath: '/usr/bin' })).toEqual(expected)
      // The synchronous collect refuses the async resolver, as the registry does.
      let syncError
      try {
        service.collect(execution)
      } catch (error) {
        syncError = error
      }
      expectCode(syncError, 'ERR_SHELL_ENV_ASYNC_RESOLVER')
    })

    it('execute: the execution defaults to spec.execution, then none; the managed environment cannot be passed in', async () => {
      const root = await newRoot()
      await plug(root, pkg, { dshHome: HOME })
      const service = root.shellEnv
      const print = nodeArgv("process.stdout.write(`${process.env.DSH_SESSION_ID ?? 'none'}|${process.env.DSH_HOME}`)")

      // The whole outcome, so that a run that prints nothing says how it ended.
      const outcome = async (execution) => {
        const { stdout, stderr, exitCode, signal } = await execution.result()
        return { stdout: stdout.text, stderr: stderr.text, exitCode, signal }
      }
      const printed = (stdout) => ({ stdout, stderr: '', exitCode: 0, signal: null })
      const viaSpec = await service.execute({ command: print, execution: agentExecution('from-spec') })
      expect(await outcome(viaSpec)).toEqual(printed(`from-spec|${HOME}`))
      const viaArgument = await service.execute(
        { command: print, execution: agentExecution('from-spec') },
        agentExecution('from-argument'),
      )
      expect(await outcome(viaArgument)).toEqual(printed(`from-argument|${HOME}`))
      const noAgent = await service.execute({ command: print })
      expect(await outcome(noAgent)).toEqual(printed(`none|${HOME}`))

      for (const spec of [
        { command: 'true', dshEnv: { DSH_HOME: '/elsewhere' } },
        { command: 'true', registry: new pkg.ShellEnvRegistry() },
      ]) {
        let error
        await service.execute(spec).then(
          () => {},
          (caught) => {
            error = caught
          },
        )
        expectCode(error, 'ERR_SHELL_EXEC_INVALID_SPEC', 'dshEnv')
      }
    })
  })
})
