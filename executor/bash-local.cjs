'use strict'
// require('@deepseek-ai/dsh-shell-env/bash-local'): see esm-only.cjs.
module.exports = require('./esm-only.cjs').load('bash-local', 'executor/bash-local.mjs')
