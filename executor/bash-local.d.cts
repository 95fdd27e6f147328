// require('@deepseek-ai/dsh-shell-env/bash-local'): the ES module's exports, where Node can
// require ES modules (see executor/esm-only.cjs).
declare const esm: typeof import('./bash-local.mjs')
export = esm
