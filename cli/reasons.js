'use strict'
// Why buildEnvironment() removed a variable, in words, as the core defines
// them. Shared by the `dsh-shell-env explain` command and `npm run demo`.

const { removalReasons } = require('../lib/native.js')

const REASONS = Object.freeze(Object.fromEntries(removalReasons().map(({ reason, description }) => [reason, description])))

/** `reason: explanation`, or the bare reason when it is unknown. */
function describeReason(reason) {
  return REASONS[reason] ? `${reason}: ${REASONS[reason]}` : reason
}

module.exports = { REASONS, describeReason }
