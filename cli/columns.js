'use strict'
// The column layouts of the tables the command prints (see table.js), shared
// with `npm run demo`. Values, descriptions and reasons give up width first.

/** Variable names are never cut: `DSH_…KEN` could be any of several keys. */
const VARIABLE = { title: 'VARIABLE', keep: true }
const VALUE = { title: 'VALUE', flex: true, min: 20 }

module.exports = {
  /** `env`: a snapshot with owners. */
  snapshot: [VARIABLE, VALUE, { title: 'OWNER' }],
  /** `explain`: the child environment with sources. */
  environment: [VARIABLE, VALUE, { title: 'SOURCE', keep: true }],
  /** `explain`: removed variables and why. */
  removed: [VARIABLE, { title: 'REASON', flex: true, overflow: 'wrap', min: 30 }],
  /** `catalog`: what a call can receive. */
  catalog: [VARIABLE, { title: 'OWNER' }, { title: 'WHEN' }, { title: 'DESCRIPTION', flex: true, overflow: 'wrap', min: 12 }],
  /** `catalog`: command directories. */
  directories: [{ title: 'DIRECTORY', flex: true, min: 20 }, { title: 'CONTRIBUTOR' }],
  /** `limits`: each limit's mechanism here, and what a command can do against it. */
  limits: [{ title: 'OPTION', keep: true }, { title: 'ENFORCED BY', flex: true, overflow: 'wrap', min: 20 }, { title: 'TAMPERING', keep: true }],
}
