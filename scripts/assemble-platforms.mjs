// Puts built binaries into their platform packages (npm/<platform>/): the
// addons through `napi artifacts`, and beside each Linux addon the supervisor
// built with it. ARTIFACTS holds one directory per target (as the release
// job downloads them), each with `dsh-shell-env.<platform>.node` and, for
// Linux, `dsh-shell-env-supervisor`. With --targets, only those targets are
// expected (the package test builds one).
// Usage: node scripts/assemble-platforms.mjs --artifacts DIR --npm-dir DIR [--targets T1,T2]
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const { values } = parseArgs({
  options: { artifacts: { type: 'string' }, 'npm-dir': { type: 'string' }, targets: { type: 'string' } },
})
if (!values.artifacts || !values['npm-dir']) {
  console.error('usage: node scripts/assemble-platforms.mjs --artifacts DIR --npm-dir DIR [--targets T1,T2]')
  process.exit(2)
}
const artifacts = resolve(values.artifacts)
const npmDir = resolve(values['npm-dir'])
const { napi } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

const args = ['artifacts', '--cwd', ROOT, '--output-dir', artifacts, '--npm-dir', npmDir]
if (values.targets) {
  const config = join(mkdtempSync(join(tmpdir(), 'dsh-napi-config-')), 'napi.json')
  writeFileSync(config, JSON.stringify({ ...napi, targets: values.targets.split(',') }))
  args.push('--config-path', config)
}
const napiCli = join(ROOT, 'node_modules', '.bin', 'napi')
const collected = spawnSync(napiCli, args, { stdio: 'inherit' })
if (collected.status !== 0) process.exit(collected.status ?? 1)

/** Every directory under `dir`, itself included. */
function* directories(dir) {
  yield dir
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) yield* directories(join(dir, entry.name))
}

let missing = false
for (const dir of directories(artifacts)) {
  for (const file of readdirSync(dir)) {
    const platform = /^dsh-shell-env\.(linux-[^.]+)\.node$/.exec(file)?.[1]
    if (!platform) continue
    const supervisor = join(dir, 'dsh-shell-env-supervisor')
    if (!existsSync(supervisor)) {
      console.error(`no dsh-shell-env-supervisor beside ${join(dir, file)}`)
      missing = true
      continue
    }
    const destination = join(npmDir, platform, 'dsh-shell-env-supervisor')
    copyFileSync(supervisor, destination)
    chmodSync(destination, 0o755)
    console.log(`${destination}`)
  }
}
process.exit(missing ? 1 : 0)
