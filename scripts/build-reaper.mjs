// Builds `dsh-shell-env-reaper` (see crates/core/src/bin/) in release mode
// and copies it next to the addon, where the addon looks for it at run time.
// Usage: node scripts/build-reaper.mjs [--target TRIPLE] [--out DIR]
import { spawnSync } from 'node:child_process'
import { copyFileSync, chmodSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({ options: { target: { type: 'string' }, out: { type: 'string', default: '.' } } })
const target = values.target ? ['--target', values.target] : []
const cargo = spawnSync('cargo', ['build', '--release', '-p', 'dsh-shell-env-core', '--bin', 'dsh-shell-env-reaper', ...target], {
  stdio: 'inherit',
})
if (cargo.status !== 0) process.exit(cargo.status ?? 1)
const name = 'dsh-shell-env-reaper' + (process.platform === 'win32' ? '.exe' : '')
const built = join('target', ...(values.target ? [values.target] : []), 'release', name)
const copied = join(values.out, name)
copyFileSync(built, copied)
chmodSync(copied, 0o755)
