'use strict'
// Why buildEnvironment() removed a variable, in words. Shared by the
// `dsh-shell-env explain` command and `npm run demo`.

const { defaultExclude } = require('../native.js')

const REASONS = Object.freeze({
  'managed-prefix': 'inherited DSH_* value; the current one is set fresh',
  inherit: 'not kept by scrub.inherit',
  credential: `name looks secret (${defaultExclude().slice(0, 4).join(', ')}, …)`,
  'secret-value': 'value looks like a credential (a URL with a password, a known token shape)',
  exclude: 'matched scrub.exclude',
  hardening: 'could run code before the command',
  'include-only': 'not in scrub.includeOnly',
  'explicit-unset': 'unset by the caller',
  unmanaged: 'a DSH_* entry from env or terminalEnv; only the registry sets managed keys',
})

/** `reason: explanation`, or the bare reason when it is unknown. */
function describeReason(reason) {
  return REASONS[reason] ? `${reason}: ${REASONS[reason]}` : reason
}

module.exports = { REASONS, describeReason }
