'use strict'
// require('@deepseek-ai/dsh-shell-env/pwsh-local'): see esm-only.cjs.
module.exports = require('./esm-only.cjs').load('pwsh-local', 'executor/pwsh-local.mjs')
