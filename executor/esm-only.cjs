'use strict'
// The `require` condition of the ES-module-only subpaths (./bash-local,
// ./pwsh-local, ./subprocess-local): where Node can require an ES module
// (20.19, 22.12 and later), it does; elsewhere it says so instead of Node's
// ERR_PACKAGE_PATH_NOT_EXPORTED, which names no cause.

const path = require('node:path')

/** The ES module behind `subpath`, loaded with require() where Node can. */
function load(subpath, file) {
  if (process.features?.require_module) return require(path.join(__dirname, '..', file))
  const message =
    `@deepseek-ai/dsh-shell-env/${subpath} is an ES module, as the harness it plugs into is: ` +
    `load it with import('@deepseek-ai/dsh-shell-env/${subpath}') (require() loads it on Node 20.19, 22.12 and later)`
  throw Object.assign(new Error(message), { code: 'ERR_REQUIRE_ESM' })
}

module.exports = { load }
