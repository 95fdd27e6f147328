'use strict'
// What the package knows of Cordis. `cordis` is an optional peer dependency:
// this file never loads it. It speaks the protocol that the supported lines
// (`@deepseek-ai/cordis` 4.0, `cordis` 4.0 RC and 3.18) share:
// - a context carries `Symbol.for('cordis.is')`;
// - `ctx.provide(name)` then `ctx.set(name, value)` installs a service for the
//   lifetime of the fiber that provides it;
// - a value carrying `Symbol.for('cordis.tracker')` is handed out as a proxy
//   whose `ctx` is the *caller's* context, so `this.ctx.effect(...)` inside a
//   method ties the effect to the plugin that called it;
// - a plugin's `Config` is a Standard Schema (`~standard`) for cordis 4, and
//   is called as a function by cordis 3.

const Schema = require('schemastery')

/** The plugin's name, as the original package has it. */
const name = 'shell-env'
/** The plugin needs no other service. */
const inject = []
/** The service name: `ctx.shellEnv`. */
const SERVICE = 'shellEnv'

const kIsContext = Symbol.for('cordis.is')
const kTracker = Symbol.for('cordis.tracker')

/**
 * Whether `value` is a Cordis context of any supported line. A value that
 * throws when looked at (a revoked Proxy) is not one; the registry's own
 * validation reports it.
 */
function isContext(value) {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false
  try {
    return Boolean(value[kIsContext])
  } catch {
    return false
  }
}

/**
 * Installs `service` as `ctx.shellEnv` for the lifetime of `ctx`'s fiber, and
 * marks it so that Cordis hands each caller a view whose `ctx` is its own.
 */
function provide(ctx, service) {
  Object.defineProperty(service, kTracker, { value: { associate: SERVICE, property: 'ctx' } })
  ctx.provide(SERVICE)
  ctx.set(SERVICE, service)
}

/**
 * The config schema, for tools that read it (descriptions, the catalog) and
 * for Cordis, which validates a plugin's config before constructing it.
 * Validation itself is the registry's own (coded errors naming the field,
 * unknown fields refused), so Cordis 4's Standard Schema step passes the
 * config through unchanged instead of failing first with an uncoded error.
 * Cordis 3 calls the schema as a function: there a wrongly typed field is
 * refused by schemastery before the registry sees it.
 */
const Config = Schema.object({
  dshHome: Schema.string().description('Absolute Harness home exposed as DSH_HOME; default $DSH_HOME, then ~/.dsh.'),
  profile: Schema.object({
    name: Schema.string().required().description('Profile name, exposed as DSH_PROFILE.'),
    dir: Schema.string().required().description('Absolute profile directory, exposed as DSH_PROFILE_DIR.'),
  })
    .default(undefined)
    .description('The profile the harness was launched with; adds DSH_PROFILE and DSH_PROFILE_DIR.'),
})
Object.defineProperty(Config, '~standard', {
  value: Object.freeze({ version: 1, vendor: 'dsh-shell-env', validate: (value) => ({ value }) }),
})

module.exports = { name, inject, Config, SERVICE, isContext, provide }
