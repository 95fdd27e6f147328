#!/usr/bin/env node
// Every fenced block of the manual (README.md and docs/*.md), by its label:
// - `cjs`, `mjs`: a program, run with node as written; it must exit 0;
// - `ts`: an ES module in TypeScript, checked with `tsc --strict` and then
//   run (as the JavaScript tsc emits);
// - `console`: a terminal session, replayed line by line in bash inside
//   bubblewrap, where the paths it shows exist (/tmp/doc is the current
//   directory, /opt and /srv are scratch directories, HOME=/home/ada) and
//   `dsh-shell-env` is on PATH; the output must match byte for byte;
// - `jsonc`: the shape of the `--json` output named in the line before it;
//   the real output must have the same keys in the same order;
// - `sh`: commands for a user's or a contributor's shell, checked with
//   `bash -n`; every `npm run X` must name a script of package.json and every
//   `node FILE` an existing file.
// A block right after `<!-- file: PATH -->` is a file the document's session
// uses: it is written there (relative paths under /tmp/doc) and not run.
//
// The suite runs them from this repository (__test__/manual.spec.mjs); the
// package test runs them from a project that installed the packed tarballs:
//   node scripts/manual-examples.mjs --from DIR   (DIR resolves the package)

import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** The documents of the manual, relative to the repository. */
export function manualDocuments(root = ROOT) {
  const docs = fs.existsSync(path.join(root, 'docs')) ? fs.readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).sort() : []
  return ['README.md', ...docs.map((name) => `docs/${name}`)]
}

/** The labels a block may have. */
export const LABELS = ['cjs', 'mjs', 'ts', 'console', 'jsonc', 'sh', 'js']

/**
 * The fenced blocks of one document: `{ document, line, label, code, file,
 * before }`, `file` the path a `<!-- file: … -->` line gives it, `before`
 * the last non-empty line of prose above it.
 */
export function blocksOf(document, root = ROOT) {
  const lines = fs.readFileSync(path.join(root, document), 'utf8').split('\n')
  const blocks = []
  let open = null
  let file = null
  let before = ''
  lines.forEach((text, index) => {
    if (open) {
      if (/^```\s*$/.test(text)) {
        blocks.push(open)
        open = null
      } else {
        open.code += `${text}\n`
      }
      return
    }
    const fence = /^```(\S*)\s*$/.exec(text)
    if (fence) {
      open = { document, line: index + 1, label: fence[1], code: '', file, before }
      file = null
      return
    }
    const named = /^<!-- file: (\S+) -->$/.exec(text)
    if (named) file = named[1]
    else if (text.trim() !== '') {
      before = text
      file = null
    }
  })
  if (open) throw new Error(`${document}:${open.line}: a block that is never closed`)
  return blocks
}

/** Where a block is, for messages. */
export const where = (block) => `${block.document}:${block.line}`

function run(command, args, options) {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 120_000, ...options })
  if (result.error) throw result.error
  return result
}

function failed(block, what, result) {
  return new Error(`${where(block)}: ${what} (exit ${result.status}${result.signal ? `, ${result.signal}` : ''})\n${result.stdout}${result.stderr}`)
}

/** A scratch directory under `base`, from which the package resolves. */
export function scratch(base) {
  return fs.mkdtempSync(path.join(path.resolve(base), '.manual-examples-'))
}

/**
 * What a program's `console.log(…) // shown` lines say it prints, as one
 * pattern: each shown text in order, `…` standing for anything.
 */
export function shownOutput(code) {
  const shown = [...code.matchAll(/console\.log\(.*\) \/\/ (.+)$/gm)].map(([, text]) => text)
  const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(shown.map((text) => text.split(/\s*…\s*/).map(escape).join('[^]*')).join('[^]*'))
}

function checkShown(block, result) {
  if (!shownOutput(block.code).test(result.stdout)) throw failed(block, 'the example printed something else than its comments show', result)
}

/** Runs a `cjs` or `mjs` block in `dir`; throws with its output when it fails. */
export function runProgram(block, dir) {
  const file = path.join(dir, `example-${block.line}.${block.label}`)
  fs.writeFileSync(file, block.code)
  const result = run(process.execPath, [file], { cwd: dir })
  if (result.status !== 0) throw failed(block, 'the example failed', result)
  checkShown(block, result)
  return result
}

/**
 * Checks the `ts` blocks with `tsc --strict` (each is a module of its own)
 * and runs each as emitted; `tsc` is the compiler's entry script, `typeRoots`
 * where `@types/node` is.
 */
export function runTypeScript(blocks, dir, tsc, typeRoots = path.join(ROOT, 'node_modules', '@types')) {
  if (blocks.length === 0) return
  const sources = blocks.map((block) => {
    const name = `${path.basename(block.document, '.md')}-${block.line}`
    fs.writeFileSync(path.join(dir, `${name}.mts`), block.code)
    return { block, name }
  })
  const out = path.join(dir, 'emitted')
  const args = [tsc, '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--types', 'node', '--typeRoots', typeRoots, '--skipLibCheck', '--outDir', out, '--rootDir', dir, ...sources.map(({ name }) => `${name}.mts`)]
  const checked = run(process.execPath, args, { cwd: dir })
  if (checked.status !== 0) throw new Error(`the manual's TypeScript examples do not compile:\n${checked.stdout}${checked.stderr}`)
  for (const { block, name } of sources) {
    const result = run(process.execPath, [path.join(out, `${name}.mjs`)], { cwd: dir })
    if (result.status !== 0) throw failed(block, 'the example failed', result)
    checkShown(block, result)
  }
}

/** Checks an `sh` block: bash syntax, and the scripts and files it names exist. */
export function checkShell(block, root = ROOT) {
  const syntax = run('bash', ['-n'], { input: block.code })
  if (syntax.status !== 0) throw failed(block, 'not valid bash', syntax)
  const scripts = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts
  for (const [, script] of block.code.matchAll(/npm run (\S+)/g)) {
    if (!(script in scripts)) throw new Error(`${where(block)}: npm run ${script}: no such script in package.json`)
  }
  for (const [, file] of block.code.matchAll(/(?:^|\s)node (\S+\.m?js)\b/g)) {
    if (!fs.existsSync(path.join(root, file))) throw new Error(`${where(block)}: node ${file}: no such file`)
  }
}

/** The places a session sees, made in `dir`. */
function sessionPlaces(dir) {
  const places = { doc: path.join(dir, 'doc'), opt: path.join(dir, 'opt'), srv: path.join(dir, 'srv'), bin: path.join(dir, 'bin') }
  for (const place of Object.values(places)) fs.mkdirSync(place, { recursive: true, mode: 0o755 })
  return places
}

/** Writes a document's file blocks into the session's places. */
function writeFiles(blocks, places) {
  for (const block of blocks.filter((b) => b.file !== null)) {
    const mapped = block.file.startsWith('/opt/') ? path.join(places.opt, block.file.slice(5))
      : block.file.startsWith('/srv/') ? path.join(places.srv, block.file.slice(5))
      : path.join(places.doc, block.file)
    fs.mkdirSync(path.dirname(mapped), { recursive: true, mode: 0o755 })
    fs.writeFileSync(mapped, block.code, { mode: block.code.startsWith('#!') ? 0o755 : 0o644 })
  }
}

/**
 * Runs `script` in bash inside bubblewrap, as a user of the session sees the
 * machine; `cli` is the path of the package's `dsh-shell-env` command.
 */
function inSession(places, cli, script) {
  const node = path.dirname(process.execPath)
  // The project the command is installed in stays where it is (under /tmp, too).
  const project = cli.includes(`${path.sep}node_modules${path.sep}`) ? cli.slice(0, cli.indexOf(`${path.sep}node_modules${path.sep}`)) : path.resolve(path.dirname(cli), '..')
  fs.writeFileSync(path.join(places.bin, 'dsh-shell-env'), `#!/bin/sh\nexec /tmp/.node/${path.basename(process.execPath)} ${JSON.stringify(cli)} "$@"\n`, { mode: 0o755 })
  const args = [
    '--dev-bind', '/', '/', '--tmpfs', '/tmp', '--ro-bind', project, project, '--ro-bind', node, '/tmp/.node', '--bind', places.doc, '/tmp/doc',
    '--bind', places.opt, '/opt', '--bind', places.srv, '/srv', '--ro-bind', places.bin, '/usr/local/bin',
    '--chdir', '/tmp/doc', '--die-with-parent', '--',
    '/usr/bin/env', '-i', 'HOME=/home/ada', 'USER=ada', 'LANG=C.UTF-8', 'SHELL=/bin/bash', 'PATH=/usr/local/bin:/usr/bin:/bin',
    'bash', '--norc', '--noprofile', '-c', script,
  ]
  return run('bwrap', args, {})
}

/** The commands of a `console` block, each with the output it shows. */
export function sessionSteps(block) {
  const steps = []
  for (const line of block.code.replace(/\n$/, '').split('\n')) {
    if (line.startsWith('$ ')) steps.push({ command: line.slice(2), output: '' })
    else if (steps.length === 0) throw new Error(`${where(block)}: a session starts with a "$ " line`)
    else steps[steps.length - 1].output += `${line}\n`
  }
  return steps
}

/**
 * Replays a `console` block; returns `{ step, expected, actual }` for the
 * first command whose output differs, or `null`. Earlier commands of the
 * block (an `export`) stay in effect for later ones.
 */
export function replaySession(block, fileBlocks, dir, cli) {
  const places = sessionPlaces(dir)
  writeFiles(fileBlocks, places)
  const steps = sessionSteps(block)
  const marker = '\u0001step\u0001'
  const script = steps.map(({ command }) => `printf '${marker}\\n'; { ${command}
} 2>&1`).join('\n')
  const result = inSession(places, cli, script)
  const outputs = result.stdout.split(`${marker}\n`).slice(1)
  for (const [index, step] of steps.entries()) {
    if (outputs[index] !== step.output) return { step: step.command, expected: step.output, actual: outputs[index] ?? `(not reached)\n${result.stderr}` }
  }
  return null
}

/** Keys in order, recursively; an array as its first element. */
function shape(value) {
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])]
  if (value === null || typeof value !== 'object') return typeof value
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shape(inner)]))
}

/** Where `documented` names keys the real output lacks or orders differently. */
function shapeDifferences(documented, real, at = '') {
  if (Array.isArray(documented)) return documented.length === 0 || real.length === 0 ? [] : shapeDifferences(documented[0], real[0], `${at}[0]`)
  if (typeof documented !== 'object') return []
  if (typeof real !== 'object') return [`${at}: an object in the manual, ${real} in the output`]
  const keys = Object.keys(documented)
  const order = Object.keys(real).filter((key) => keys.includes(key))
  const missing = keys.filter((key) => !(key in real))
  if (missing.length > 0) return [`${at}: ${missing.join(', ')} not in the output`]
  if (order.join() !== keys.join()) return [`${at}: keys in the output come as ${order.join(', ')}`]
  return keys.flatMap((key) => shapeDifferences(documented[key], real[key], `${at}.${key}`))
}

/** JSON with `//` comments (outside strings) and trailing commas. */
function parseJsonc(text) {
  const plain = text.replace(/("(?:[^"\\]|\\.)*")|\/\/[^\n]*/g, (match, string) => string ?? '').replace(/,(\s*[\]}])/g, '$1')
  return JSON.parse(plain)
}

/**
 * Checks a `jsonc` block against the output of the command the line before
 * it names (`dsh-shell-env env --json`), with the document's files.
 */
export function checkShape(block, fileBlocks, dir, cli) {
  const named = /`dsh-shell-env (\w+) --json`/.exec(block.before)
  if (!named) throw new Error(`${where(block)}: the line before a jsonc block names its command (\`dsh-shell-env X --json\`)`)
  const session = named[1] === 'catalog' ? '' : ' --session session-42'
  const places = sessionPlaces(dir)
  writeFiles(fileBlocks, places)
  const result = inSession(places, cli, `dsh-shell-env ${named[1]} --json --home /srv/dsh${session} --plugin ./region.js`)
  if (result.status !== 0) throw failed(block, `dsh-shell-env ${named[1]} --json failed`, result)
  const differences = shapeDifferences(shape(parseJsonc(block.code)), shape(JSON.parse(result.stdout)))
  if (differences.length > 0) throw new Error(`${where(block)}: ${differences.join('; ')}`)
}

/** Whether bubblewrap can make a session here. */
export function sessionsWork() {
  return run('bwrap', ['--dev-bind', '/', '/', '--tmpfs', '/tmp', '--', '/bin/true'], {}).status === 0
}

/**
 * Everything above, for every document, from `from` (a directory whose
 * node_modules holds the package): the package test's entry.
 */
async function main() {
  const from = process.argv[process.argv.indexOf('--from') + 1]
  if (!process.argv.includes('--from') || !from) throw new Error('usage: manual-examples.mjs --from DIR')
  const require = (await import('node:module')).createRequire(path.join(path.resolve(from), 'index.js'))
  // The manual as installed (README.md and the docs/ that ship), and the package's own command.
  const installed = path.dirname(require.resolve('@deepseek-ai/dsh-shell-env/package.json'))
  const cli = path.join(installed, 'bin', 'dsh-shell-env.js')
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const dir = scratch(path.resolve(from))
  let count = 0
  try {
    for (const document of manualDocuments(installed)) {
      const blocks = blocksOf(document, installed)
      const files = blocks.filter((block) => block.file !== null)
      for (const block of blocks.filter((b) => b.file === null)) {
        if (block.label === 'cjs' || block.label === 'mjs') runProgram(block, dir)
        else if (block.label === 'sh') checkShell(block)
        else if (block.label === 'console') {
          const difference = replaySession(block, files, fs.mkdtempSync(path.join(dir, 'session-')), cli)
          if (difference) throw new Error(`${where(block)}: $ ${difference.step}\nexpected:\n${difference.expected}actual:\n${difference.actual}`)
        } else if (block.label === 'jsonc') checkShape(block, files, fs.mkdtempSync(path.join(dir, 'session-')), cli)
        else if (block.label !== 'ts') throw new Error(`${where(block)}: a block labelled ${JSON.stringify(block.label)}`)
        count += block.label === 'ts' ? 0 : 1
      }
      const ts = blocks.filter((b) => b.file === null && b.label === 'ts')
      runTypeScript(ts, dir, tsc)
      count += ts.length
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  console.log(`the manual's examples: ${count} blocks ran as written`)
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error.message)
    process.exit(1)
  })
}
