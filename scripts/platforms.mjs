// What napi-rs calls a target's platform: the suffix of its platform package
// (`linux-x64-gnu`, `darwin-arm64`, …) and the os, cpu and libc that package
// declares. Shared by the release scripts and their spec.

/** @param {string} triple a Rust target triple, e.g. `aarch64-unknown-linux-musl` */
export function platformOf(triple) {
  const [arch, vendor, system, abi] = triple.split('-')
  const cpu = { x86_64: 'x64', aarch64: 'arm64' }[arch] ?? arch
  if (vendor === 'apple') return { name: `darwin-${cpu}`, os: 'darwin', cpu, libc: undefined }
  if (system === 'windows') return { name: `win32-${cpu}-${abi}`, os: 'win32', cpu, libc: undefined }
  return { name: `${system}-${cpu}-${abi}`, os: system, cpu, libc: abi === 'gnu' ? 'glibc' : 'musl' }
}
