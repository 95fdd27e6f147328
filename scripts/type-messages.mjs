#!/usr/bin/env node
// The messages of type errors, for npm run test:types: compiles a project
// that is meant to fail and checks that each line after an `// error: TEXT`
// comment fails with a diagnostic containing TEXT (its whole chain, as tsc
// prints it), and that no other line fails. `@ts-expect-error` proves only
// that a line fails; this proves the user reads the right reason.
//
//   node scripts/type-messages.mjs COMPILER TSCONFIG   (COMPILER: typescript, typescript57)

import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** `{ file, line, text }` of each diagnostic in tsc's plain output, continuation lines joined. */
export function diagnostics(output) {
  const found = []
  for (const line of output.split('\n')) {
    const head = /^(.+?)\((\d+),\d+\): error (TS\d+: .*)$/.exec(line)
    if (head) found.push({ file: path.resolve(ROOT, head[1]), line: Number(head[2]), text: head[3] })
    else if (found.length > 0 && /^\s+\S/.test(line)) found[found.length - 1].text += `\n${line.trim()}`
  }
  return found
}

/** `{ file, line, text }` for each `// error: TEXT` comment of `file`: the line after it must fail so. */
export function expectations(file) {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((text, index) => {
      const expected = /^\s*\/\/ error: (.+)$/.exec(text)
      return expected ? [{ file, line: index + 2, text: expected[1] }] : []
    })
}

function main() {
  const [compiler, project] = process.argv.slice(2)
  if (!compiler || !project) throw new Error('usage: type-messages.mjs COMPILER TSCONFIG')
  const tsconfig = path.resolve(ROOT, project)
  const files = JSON.parse(fs.readFileSync(tsconfig, 'utf8').replace(/^\s*\/\/.*$/gm, '')).files.map((name) => path.resolve(path.dirname(tsconfig), name))
  const run = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', compiler, 'bin', 'tsc'), '-p', tsconfig, '--pretty', 'false'], { cwd: ROOT, encoding: 'utf8' })
  const found = diagnostics(run.stdout)
  const expected = files.flatMap(expectations)
  const problems = []
  for (const want of expected) {
    const at = found.filter(({ file, line }) => file === want.file && line === want.line)
    if (at.length === 0) problems.push(`${path.relative(ROOT, want.file)}:${want.line}: compiles, expected: ${want.text}`)
    else if (!at.some(({ text }) => text.includes(want.text))) {
      problems.push(`${path.relative(ROOT, want.file)}:${want.line}: expected: ${want.text}\n  got: ${at.map(({ text }) => text.replace(/\n/g, '\n       ')).join('\n  and: ')}`)
    }
  }
  for (const got of found) {
    if (!expected.some(({ file, line }) => file === got.file && line === got.line)) problems.push(`${path.relative(ROOT, got.file)}:${got.line}: unexpected: ${got.text}`)
  }
  if (problems.length > 0) {
    console.error(`${compiler}: ${problems.length} type error message(s) differ:\n${problems.join('\n')}`)
    process.exit(1)
  }
  console.log(`${compiler}: ${expected.length} type errors say what they should`)
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) main()
