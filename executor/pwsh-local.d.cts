// require('@deepseek-ai/dsh-shell-env/pwsh-local'): the ES module's exports, where Node can
// require ES modules (see executor/esm-only.cjs).
declare const esm: typeof import('./pwsh-local.mjs')
export = esm
