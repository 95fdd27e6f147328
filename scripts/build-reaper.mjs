// Builds `dsh-shell-env-reaper` (crates/core/src/bin/) in release mode and
// copies it next to the addon, where the addon looks for it at run time.
// Linux builds link statically: nothing to load at each start (about half of
// what the reaper adds to a spawn), and no glibc version to match.
// Usage: node scripts/build-reaper.mjs [--target TRIPLE] [--out DIR]
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({ options: { target: { type: 'string' }, out: { type: 'string', default: '.' } } })
const linux = values.target ? values.target.includes('-linux-') : process.platform === 'linux'
const args = ['rustc', '--release', '-p', 'dsh-shell-env-core', '--bin', 'dsh-shell-env-reaper']
if (values.target) args.push('--target', values.target)
if (linux) args.push('--', '-C', 'target-feature=+crt-static')
const cargo = spawnSync('cargo', args, { stdio: 'inherit' })
if (cargo.status !== 0) process.exit(cargo.status ?? 1)
const windows = values.target ? values.target.includes('-windows-') : process.platform === 'win32'
const name = `dsh-shell-env-reaper${windows ? '.exe' : ''}`
const built = join('target', ...(values.target ? [values.target] : []), 'release', name)
const copied = join(values.out, name)
copyFileSync(built, copied)
chmodSync(copied, 0o755)
