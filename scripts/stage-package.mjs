// Stages the main package for `npm pack` or `npm publish`: the files its
// manifest lists, and a manifest without the contributors' scripts (no
// install-time build) and dev dependencies, with an optional dependency on
// each platform package (what `napi pre-publish` adds). The release job
// publishes what this stages; the package test packs it.
// Usage: node scripts/stage-package.mjs OUT_DIR
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { platformOf } from './platforms.mjs'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const out = resolve(process.argv[2] ?? 'staging')
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
for (const entry of [...manifest.files, 'README.md', 'LICENSE']) {
  cpSync(join(ROOT, entry), join(out, entry), { recursive: true })
}
const { scripts: _scripts, devDependencies: _dev, ...published } = manifest
published.optionalDependencies = Object.fromEntries(
  manifest.napi.targets.map((triple) => [`${manifest.name}-${platformOf(triple).name}`, manifest.version]),
)
writeFileSync(join(out, 'package.json'), `${JSON.stringify(published, null, 2)}\n`)
console.log(out)
