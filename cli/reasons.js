'use strict'
// Why buildEnvironment() removed an inherited variable, in words. Shared by the
// `dsh-shell-env explain` command and `npm run demo`.

const { defaultExclude } = require('../binding.js')

const REASONS = Object.freeze({
  'managed-prefix': 'inherited DSH_* value; the current one is set fresh',
  inherit: 'not kept by scrub.inherit',
  exclude: `name looks secret (${defaultExclude().join(', ')})`,
  hardening: 'could run code before the command',
  'include-only': 'not in scrub.includeOnly',
  'explicit-unset': 'unset by the caller',
})

/** `reason: explanation`, or the bare reason when it is unknown. */
function describeReason(reason) {
  return REASONS[reason] ? `${reason}: ${REASONS[reason]}` : reason
}

module.exports = { REASONS, describeReason }
