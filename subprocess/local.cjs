'use strict'
// require('@deepseek-ai/dsh-shell-env/subprocess-local'): see esm-only.cjs.
module.exports = require('../executor/esm-only.cjs').load('subprocess-local', 'subprocess/local.mjs')
