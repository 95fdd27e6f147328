// The manual (README.md and docs/): every example runs as written, in the
// module system it is labelled with, and prints what its comments show;
// every terminal session replays byte for byte; every link a package user
// follows leads to a file that ships and a heading that exists. The runner
// is scripts/manual-examples.mjs, which the package test also runs from the
// installed tarballs.
// Runs unchanged under `vitest run` (globals: true) and `jest`.

import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

import {
  LABELS,
  blocksOf,
  checkShape,
  checkShell,
  manualDocuments,
  replaySession,
  runProgram,
  runTypeScript,
  scratch,
  sessionsWork,
  where,
} from '../scripts/manual-examples.mjs'

const require = createRequire(import.meta.url)
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const CLI = path.join(ROOT, 'bin', 'dsh-shell-env.js')
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
const { gate, posix } = require('./platform.cjs')
const SLOW = 120_000

const documents = manualDocuments()
const blocks = documents.flatMap((document) => blocksOf(document))
const runnable = (label) => blocks.filter((block) => block.file === null && block.label === label)
const filesOf = (document) => blocks.filter((block) => block.document === document && block.file !== null)
const sessions = gate(process.platform === 'linux' && sessionsWork(), 'bubblewrap replays the sessions (Linux)')

let dir
beforeAll(() => {
  dir = scratch(path.join(ROOT, 'target'))
})
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('every block of the manual', () => {
  it('has a label that says how it runs, and a session starts with a command', () => {
    const unlabelled = blocks.filter((block) => !LABELS.includes(block.label)).map(where)
    expect(unlabelled).toEqual([])
    // `js` is only for files a session loads (`<!-- file: … -->`): a program says cjs or mjs.
    expect(blocks.filter((block) => block.label === 'js' && block.file === null).map(where)).toEqual([])
    for (const block of runnable('console')) expect(block.code.startsWith('$ ')).toBe(true)
  })

  posix.describe.each(runnable('cjs').concat(runnable('mjs')).map((block) => [where(block), block]))('%s', (_, block) => {
    it('runs as written and prints what its comments show', () => {
      runProgram(block, dir)
    }, SLOW)
  })

  posix.it('the TypeScript examples compile with tsc --strict, run, and print what their comments show', () => {
    expect(runnable('ts').length).toBeGreaterThan(0)
    runTypeScript(runnable('ts'), dir, TSC)
  }, SLOW)

  it.each(runnable('sh').map((block) => [where(block), block]))('%s: shell commands that parse, naming scripts and files that exist', (_, block) => {
    checkShell(block)
  })

  sessions.describe.each(runnable('console').map((block) => [where(block), block]))('%s', (_, block) => {
    it('replays byte for byte in a session with the files its document shows', () => {
      const difference = replaySession(block, filesOf(block.document), fs.mkdtempSync(path.join(dir, 'session-')), CLI)
      expect(difference).toBeNull()
    }, SLOW)
  })

  sessions.describe.each(runnable('jsonc').map((block) => [where(block), block]))('%s', (_, block) => {
    it('documents the keys of the real --json output, in its order', () => {
      checkShape(block, filesOf(block.document), fs.mkdtempSync(path.join(dir, 'session-')), CLI)
    }, SLOW)
  })
})

describe('the replay itself', () => {
  sessions.it('fails on a session whose output differs', () => {
    const block = { document: 'docs/cli.md', line: 0, label: 'console', code: '$ dsh-shell-env get DSH_SHELL\n2\n', file: null, before: '' }
    const difference = replaySession(block, [], fs.mkdtempSync(path.join(dir, 'session-')), CLI)
    expect(difference).toEqual({ step: 'dsh-shell-env get DSH_SHELL', expected: '2\n', actual: '1\n' })
  }, SLOW)

  posix.it('fails on a program that prints something else than its comments show', () => {
    const block = { document: 'README.md', line: 0, label: 'mjs', code: "console.log(1 + 1) // 3\n", file: null, before: '' }
    expect(() => runProgram(block, dir)).toThrow(/printed something else than its comments show/)
  })
})

/** GitHub's anchor for a heading. */
const anchor = (heading) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')

/** The anchors of a document's headings. */
const anchorsOf = (file) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => anchor(line.replace(/^#+ /, '')))

describe('links a package user follows', () => {
  const shipped = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).files
  const ships = (file) => shipped.some((entry) => file === entry || file.startsWith(`${entry}/`))
  const linking = documents.filter(ships).concat(['README.md'])

  it.each(linking.map((document) => [document]))('%s: every relative link leads to a shipped file and an existing heading', (document) => {
    const text = fs.readFileSync(path.join(ROOT, document), 'utf8')
    const broken = []
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue
      const [file, hash] = target.split('#')
      const resolved = file === '' ? document : path.posix.normalize(path.posix.join(path.posix.dirname(document), file))
      if (!ships(resolved) && resolved !== 'README.md') broken.push(`${target}: ${resolved} is not in the package`)
      else if (!fs.existsSync(path.join(ROOT, resolved))) broken.push(`${target}: no such file`)
      else if (hash !== undefined && !anchorsOf(path.join(ROOT, resolved)).includes(hash)) broken.push(`${target}: no such heading`)
    }
    expect(broken).toEqual([])
  })
})
