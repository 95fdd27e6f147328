// Checks that Linux ELF files load on an old glibc: none may need a glibc
// symbol version newer than --max (default 2.28). A statically linked
// executable needs none. Prints what each file needs; exits 1 on a failure.
// Usage: node scripts/check-glibc.mjs [--max 2.28] FILE...   (needs readelf)
import { execFileSync } from 'node:child_process'
import { parseArgs } from 'node:util'

const { values, positionals } = parseArgs({ options: { max: { type: 'string', default: '2.28' } }, allowPositionals: true })
const parse = (version) => version.split('.').map(Number)
const newer = (a, b) => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0)
  return false
}

/** The newest GLIBC_x.y a file needs (`null`: none), and whether it asks for a program interpreter. */
function glibcNeeds(file) {
  const versions = execFileSync('readelf', ['--version-info', '--wide', file], { encoding: 'utf8' })
  const headers = execFileSync('readelf', ['--program-headers', '--wide', file], { encoding: 'utf8' })
  const needed = [...versions.matchAll(/Name: GLIBC_([\d.]+)/g)].map((match) => match[1])
  const newest = needed.reduce((best, version) => (best === null || newer(parse(version), parse(best)) ? version : best), null)
  return { newest, interpreter: headers.includes('Requesting program interpreter') }
}

if (positionals.length === 0) {
  console.error('usage: node scripts/check-glibc.mjs [--max 2.28] FILE...')
  process.exit(2)
}
let failed = false
for (const file of positionals) {
  const { newest, interpreter } = glibcNeeds(file)
  const tooNew = newest !== null && newer(parse(newest), parse(values.max))
  failed ||= tooNew
  const what = newest ? `needs GLIBC_${newest}` : interpreter ? 'needs no glibc symbol version' : 'is statically linked'
  console.log(`${file}: ${what}${tooNew ? ` (newer than ${values.max})` : ''}`)
}
process.exit(failed ? 1 : 0)
