// Stages the main package for `npm pack` or `npm publish`: the files its
// manifest lists, and a manifest without the contributors' scripts (no
// install-time build) and dev dependencies, with an optional dependency on
// each platform package (what `napi pre-publish` adds). The release job
// publishes what this stages; the package test packs it.
// Usage: node scripts/stage-package.mjs OUT_DIR
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const out = resolve(process.argv[2] ?? 'staging')
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

/** The npm/ directory name of a target triple, as napi-rs names platform packages. */
function platformOf(triple) {
  const parts = triple.split('-')
  const cpu = { x86_64: 'x64', aarch64: 'arm64' }[parts[0]] ?? parts[0]
  if (parts[1] === 'apple') return `darwin-${cpu}`
  if (parts[1] === 'pc' && parts[2] === 'windows') return `win32-${cpu}-${parts[3]}`
  return `${parts[2]}-${cpu}-${parts[3]}`
}

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
for (const entry of [...manifest.files, 'README.md', 'LICENSE']) {
  cpSync(join(ROOT, entry), join(out, entry), { recursive: true })
}
const { scripts: _scripts, devDependencies: _dev, ...published } = manifest
published.optionalDependencies = Object.fromEntries(
  manifest.napi.targets.map((triple) => [`${manifest.name}-${platformOf(triple)}`, manifest.version]),
)
writeFileSync(join(out, 'package.json'), `${JSON.stringify(published, null, 2)}\n`)
console.log(out)
