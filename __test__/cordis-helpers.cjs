'use strict'

// Shared by the Cordis service specs (cordis-*.spec.cjs): the supported Cordis
// lines, the home every service there is configured with (a path only: nothing
// creates it, so the files share it), the plugins that register contributors,
// and cordisSuite(), the per-file state of one line's suite: its hooks (load
// the line, capture cordis 3's logger, stop the roots after each test) and
// newRoot, plug and unplug. Not a spec file (no `.spec.`), so the runners do
// not collect it. cordisSuite() runs inside a `describe`, where the runner's
// hooks are global.

const os = require('node:os')
const path = require('node:path')

const HOME = path.resolve(os.tmpdir(), 'dsh-cordis-spec-home')

/** One row per supported Cordis line: label, loader, and how it reports plugin state. */
const CORDIS_4 = { start: async () => {}, settle: async () => {}, stop: async () => {} }
const VERSIONS = [
  ['@deepseek-ai/cordis@4.0.4', { ...CORDIS_4, load: async () => import('@deepseek-ai/cordis') }],
  ['cordis@4.0.0-rc.10', { ...CORDIS_4, load: async () => import('cordis4') }],
  [
    'cordis@3.18.1',
    {
      load: async () => require('cordis3'),
      async start(root) {
        await root.start()
      },
      // cordis 3 runs `apply` in tasks; flush() waits for all of them.
      settle: (root) => root.events.flush(),
      async stop(root) {
        await root.stop()
      },
    },
  ],
]

/** A plugin that registers `contributors` in order from its apply. */
function registeringPlugin(pluginName, contributors, sink = {}) {
  return {
    name: pluginName,
    inject: ['shellEnv'],
    apply(ctx) {
      sink.disposers = contributors.map((contributor) => ctx.shellEnv.register(contributor))
    },
  }
}

function keyContributor(contributorName, key, value = 'v') {
  return {
    name: contributorName,
    variables: { [key]: { description: `${key} from ${contributorName}` } },
    resolve: () => ({ [key]: value }),
  }
}

/**
 * The per-file state of a `Cordis service ctx.shellEnv under %s` suite, for the
 * line `host` (a row of VERSIONS), registered in the calling describe:
 * beforeAll loads the line and captures cordis 3's logger (afterAll gives it
 * back), afterEach stops every root newRoot made. Returns newRoot, plug,
 * unplug, `cordis` (the loaded Cordis, from beforeAll on) and `logged` (the
 * records cordis 3's logger printed).
 */
function cordisSuite(host) {
  const roots = []
  let restoreLogger = () => {}
  const suite = { cordis: undefined, logged: [], newRoot, plug, unplug }

  beforeAll(async () => {
    const cordis = await host.load()
    suite.cordis = cordis
    if (cordis.Logger && Array.isArray(cordis.Logger.targets)) {
      // cordis 3 prints plugin errors through its logger (reggol): capture them.
      const targets = cordis.Logger.targets.splice(0, Infinity, { colors: 0, record: (record) => suite.logged.push(record) })
      restoreLogger = () => cordis.Logger.targets.splice(0, Infinity, ...targets)
    }
  })

  afterAll(() => {
    restoreLogger()
  })

  async function newRoot() {
    const root = new suite.cordis.Context()
    roots.push(root)
    await host.start(root)
    return root
  }

  /** Plugs `plugin` and waits until Cordis settled it; never rejects. */
  async function plug(root, plugin, config) {
    const fork = root.plugin(plugin, config)
    await host.settle(root)
    // cordis 4: the fork is a thenable settling once loaded (rejecting on failure).
    if (typeof fork.then === 'function') await Promise.resolve(fork).catch(() => {})
    return { fork }
  }

  async function unplug(root, { fork }) {
    await fork.dispose()
    await host.settle(root)
  }

  afterEach(async () => {
    for (const root of roots.splice(0)) await host.stop(root)
  })

  return suite
}

module.exports = { HOME, VERSIONS, registeringPlugin, keyContributor, cordisSuite }
