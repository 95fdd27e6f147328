// Builds `dsh-shell-env-supervisor` (crates/core/src/bin/) in release mode and
// copies it next to the addon (or to --out), where the addon looks for it.
// It is linked statically: nothing to load when a host starts it, and no
// libc to match, so one build serves the glibc and the musl package of an
// architecture. For the host's architecture it is a static glibc build with
// the host's toolchain; for another one (the release pipeline's arm64 builds
// on x64), a static musl build through cargo-zigbuild. Other systems have no
// supervisor: nothing is built there.
// Usage: node scripts/build-supervisor.mjs [--target TRIPLE] [--out DIR]
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values } = parseArgs({ options: { target: { type: 'string' }, out: { type: 'string', default: '.' } } })
const linux = values.target ? values.target.includes('-linux-') : process.platform === 'linux'
if (!linux) process.exit(0)

const hostArch = { x64: 'x86_64', arm64: 'aarch64' }[process.arch] ?? process.arch
const arch = values.target?.split('-')[0] ?? hostArch
const bin = ['-p', 'dsh-shell-env-core', '--bin', 'dsh-shell-env-supervisor']
const native = arch === hostArch && process.platform === 'linux'
const target = native ? `${arch}-unknown-linux-gnu` : `${arch}-unknown-linux-musl`
const args = native
  ? ['rustc', '--release', '--target', target, ...bin, '--', '-C', 'target-feature=+crt-static']
  : ['zigbuild', '--release', '--target', target, ...bin]
const cargo = spawnSync('cargo', args, { stdio: 'inherit' })
if (cargo.status !== 0) process.exit(cargo.status ?? 1)
const copied = join(values.out, 'dsh-shell-env-supervisor')
// Through a new file renamed into place: a supervisor still running from the
// old one keeps it (overwriting a running program fails with ETXTBSY).
const fresh = `${copied}.new`
copyFileSync(join('target', target, 'release', 'dsh-shell-env-supervisor'), fresh)
chmodSync(fresh, 0o755)
renameSync(fresh, copied)
