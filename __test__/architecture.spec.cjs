'use strict'

// ARCHITECTURE.md draws four module graphs as text (`module -> what it
// uses`): the core crate's modules, the binding's, the process module's and
// the supervisor program's. Each is checked here against the code's own
// paths (`use crate::…`, `super::…`, `crate::x::y(…)`), tests left out, so
// that a new dependency shows up as a failing line here until the document
// says it too.

const fs = require('node:fs')
const path = require('node:path')

const { ROOT } = require('./helpers.cjs')

const CORE = path.join(ROOT, 'crates/core/src')
const BINDING = path.join(ROOT, 'src')

/** Every `.rs` file under `dir` that is not a test (`tests/`, `tests.rs`, `*_tests.rs`). */
function sourceFiles(dir) {
  const files = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'tests' && entry.name !== 'bin') files.push(...sourceFiles(file))
    } else if (entry.name.endsWith('.rs') && entry.name !== 'tests.rs' && !entry.name.endsWith('_tests.rs')) {
      files.push(file)
    }
  }
  return files
}

/** A file's code without comments, string literals and its test modules (`#[cfg(test)]` or `#[cfg(all(test…` before a `mod`). */
function codeOf(file) {
  let text = fs.readFileSync(file, 'utf8')
  text = text.replace(/\/\/[^\n]*/g, '').replace(/"(?:\\.|[^"\\])*"/g, '""')
  const lines = text.split('\n')
  const kept = []
  for (let i = 0; i < lines.length; i++) {
    const testAttribute = /^\s*#\[cfg\((all\()?test\b/.test(lines[i]) && /^\s*(pub(\([a-z]+\))? )?mod \w+/.test(lines[i + 1] ?? '')
    if (!testAttribute) {
      kept.push(lines[i])
      continue
    }
    // Skip the module: to the line where its braces close.
    let depth = 0
    let opened = false
    for (i = i + 1; i < lines.length; i++) {
      for (const char of lines[i]) {
        if (char === '{') (depth++, (opened = true))
        if (char === '}') depth--
      }
      if (opened && depth === 0) break
      if (!opened && lines[i].trim().endsWith(';')) break
    }
  }
  return kept.join('\n')
}

/** `a::{b, c::{d, e}}` as its paths: `a::b`, `a::c::d`, `a::c::e`. */
function expand(tree) {
  const open = tree.indexOf('{')
  if (open < 0) return [tree.replace(/\s+as\s+\w+$/, '').trim()]
  const prefix = tree.slice(0, open)
  const inner = tree.slice(open + 1, tree.lastIndexOf('}'))
  const parts = []
  let depth = 0
  let start = 0
  for (let i = 0; i < inner.length; i++) {
    if (inner[i] === '{') depth++
    if (inner[i] === '}') depth--
    if (inner[i] === ',' && depth === 0) (parts.push(inner.slice(start, i)), (start = i + 1))
  }
  parts.push(inner.slice(start))
  return parts.map((part) => part.trim()).filter(Boolean).flatMap((part) => expand(prefix + part))
}

/** The module path of `file` under `root` (`process/platform/unix.rs` → `['process', 'platform', 'unix']`). */
function modulePath(root, file) {
  const parts = path.relative(root, file).replace(/\.rs$/, '').split(path.sep)
  if (parts.at(-1) === 'mod' || parts.at(-1) === 'lib') parts.pop()
  return parts
}

/**
 * Every module path `file` (module `self`) names: `crate::`, `super::` and
 * `self::` paths, in `use` and in code, and `use` of a child module it
 * declares (`mod unix;` … `use unix::*`). Paths inside an inline module
 * (`mod unix { … }`) are read from that module.
 */
function pathsNamed(file, self) {
  const code = codeOf(file)
  const children = new Set([...code.matchAll(/^\s*(?:pub(?:\([a-z]+\))? )?mod (\w+);/gm)].map(([, name]) => name))
  const named = []
  // The inline modules open at each line, innermost last, with the depth each opened at.
  const inline = []
  let depth = 0
  for (const line of code.split('\n')) {
    const opens = /^\s*(?:pub(?:\([a-z]+\))? )?mod (\w+) \{/.exec(line)
    if (opens) inline.push({ name: opens[1], depth })
    const here = [...self, ...inline.map((module) => module.name)]
    for (const [, tree] of line.matchAll(/\buse\s+(\w+::[^;]+);/g)) {
      for (const path of expand(tree.replace(/\s+/g, ' '))) {
        const first = path.split('::')[0]
        if (['crate', 'super', 'self'].includes(first)) named.push({ path, here })
        else if (children.has(first)) named.push({ path: `self::${path}`, here })
      }
    }
    for (const [whole] of line.matchAll(/\b(?:crate|super|self)(?:::\w+)+/g)) named.push({ path: whole, here })
    for (const char of line) {
      if (char === '{') depth++
      if (char === '}') {
        depth--
        if (inline.length && depth === inline.at(-1).depth) inline.pop()
      }
    }
  }
  return named.map(({ path, here }) => {
    const segments = path.split('::').map((segment) => segment.trim())
    // `crate` is the root; `self` this module; each `super` its parent.
    let base = segments[0] === 'crate' ? [] : [...here]
    let rest = segments[0] === 'crate' || segments[0] === 'self' ? segments.slice(1) : segments
    while (rest[0] === 'super') {
      base = base.slice(0, -1)
      rest = rest.slice(1)
    }
    return [...base, ...rest]
  })
}

/**
 * The graph of `root`'s modules under `within` (a module path prefix), each
 * node named by `nodeOf(absolute path)` (or `null` for a path outside it).
 */
function graph(root, within, nodeOf) {
  const edges = new Map()
  for (const file of sourceFiles(path.join(root, ...within))) {
    const self = modulePath(root, file)
    const from = nodeOf(self, true)
    if (from === null) continue
    if (!edges.has(from)) edges.set(from, new Set())
    for (const named of pathsNamed(file, self)) {
      const to = nodeOf(named, false)
      if (to !== null && to !== from) edges.get(from).add(to)
    }
  }
  return new Map([...edges].map(([from, to]) => [from, [...to].sort()]).sort(([a], [b]) => (a < b ? -1 : 1)))
}

/** The block of `module -> uses` lines that follows `heading` in ARCHITECTURE.md. */
function documented(heading) {
  const text = fs.readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8')
  // A heading may wrap: newlines read as spaces (one character each, so indices hold).
  const at = text.replace(/\n/g, ' ').indexOf(heading)
  if (at < 0) throw new Error(`ARCHITECTURE.md has no "${heading}"`)
  const block = text.slice(text.indexOf('```text', at) + 7, text.indexOf('```', text.indexOf('```text', at) + 7))
  return new Map(
    block
      .trim()
      .split('\n')
      .map((line) => {
        const [from, uses] = line.split('->').map((part) => part.trim())
        return [from, uses === '(none)' ? [] : uses.split(/[\s,]+/).filter(Boolean).sort()]
      }),
  )
}

/** The top-level modules of a crate's source root (a file or a directory each). */
function topModules(root) {
  return new Set(
    fs
      .readdirSync(root, { withFileTypes: true })
      .map((entry) => entry.name.replace(/\.rs$/, ''))
      .filter((name) => !['lib', 'main', 'bin', 'test_paths'].includes(name)),
  )
}

/** One cycle of `edges` (a map of sets) as its nodes in order, or `[]` without one. */
function cycleIn(edges) {
  const state = new Map()
  const trail = []
  const visit = (node) => {
    state.set(node, 'open')
    trail.push(node)
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === 'open') return [...trail.slice(trail.indexOf(next)), next]
      if (!state.has(next)) {
        const found = visit(next)
        if (found.length) return found
      }
    }
    trail.pop()
    state.set(node, 'done')
    return []
  }
  for (const node of edges.keys()) {
    if (state.has(node)) continue
    const found = visit(node)
    if (found.length) return found
  }
  return []
}

/** A graph as sorted lines, `from -> to to` (`(none)` for none): a failure then shows the lines that differ. */
function lines(edges) {
  return [...Object.entries(edges)].map(([from, to]) => `${from} -> ${to.length ? to.join(' ') : '(none)'}`).sort()
}

describe('ARCHITECTURE.md draws the module graphs as the code has them', () => {
  it("the core crate's modules", () => {
    const modules = topModules(CORE)
    const nodeOf = (named) => (modules.has(named[0]) ? named[0] : null)
    expect(lines(Object.fromEntries(graph(CORE, [], nodeOf)))).toEqual(lines(Object.fromEntries(documented("The core's modules and what each uses"))))
  })

  it("the binding's modules", () => {
    const modules = topModules(BINDING)
    const nodeOf = (named) => (modules.has(named[0]) ? named[0] : null)
    expect(lines(Object.fromEntries(graph(BINDING, [], nodeOf)))).toEqual(lines(Object.fromEntries(documented("The binding's:"))))
  })

  it("the process module's modules (platform files apart)", () => {
    const platform = new Set(
      fs
        .readdirSync(path.join(CORE, 'process/platform'))
        .map((name) => name.replace(/\.rs$/, ''))
        .filter((name) => name !== 'mod'),
    )
    // `no_supervisor.rs` is declared as `platform::supervisor` where there is no supervisor.
    const modules = new Set(fs.readdirSync(path.join(CORE, 'process')).map((name) => name.replace(/\.rs$/, '')))
    // What `process/mod.rs` re-exports (`pub use spec::{ProcessSpec, …}`) is its module's.
    const reexported = new Map()
    for (const [, tree] of codeOf(path.join(CORE, 'process/mod.rs')).matchAll(/^pub use ([^;]+);/gm)) {
      for (const item of expand(tree.replace(/\s+/g, ' '))) reexported.set(item.split('::').at(-1), item.split('::')[0])
    }
    // An item declared in `process/mod.rs` itself is no module's.
    const nodeOf = (named, isFile) => {
      if (named[0] !== 'process' || named.length < 2) return isFile ? 'mod' : null
      if (!modules.has(named[1]) && reexported.has(named[1])) named = ['process', reexported.get(named[1]), ...named.slice(2)]
      if (named[1] !== 'platform') return modules.has(named[1]) ? named[1] : null
      if (named.length > 2 && platform.has(named[2])) return `platform::${named[2]}`
      return 'platform'
    }
    const actual = Object.fromEntries(graph(CORE, ['process'], nodeOf))
    const drawn = Object.fromEntries(documented('The modules and what each uses (`mod` is `process/mod.rs`'))
    // `mod` declares and re-exports every module: drawn as such, not listed.
    expect(drawn.mod).toEqual(['(every', 'module)'])
    delete actual.mod
    delete drawn.mod
    expect(lines(actual)).toEqual(lines(drawn))
    // No cycles, with the platform files as one floor: the platform is the ground floor of the lifecycle.
    const folded = new Map()
    for (const [from, to] of Object.entries(actual)) {
      const floor = (name) => name.replace(/^platform::.*/, 'platform')
      if (!folded.has(floor(from))) folded.set(floor(from), new Set())
      for (const used of to) if (floor(used) !== floor(from)) folded.get(floor(from)).add(floor(used))
    }
    expect(cycleIn(folded)).toEqual([])
  })

  it("the supervisor program's modules", () => {
    const modules = new Set(fs.readdirSync(path.join(CORE, 'supervisor')).map((name) => name.replace(/\.rs$/, '')))
    modules.delete('mod')
    const nodeOf = (named, isFile) => {
      if (named[0] !== 'supervisor') return null
      if (named.length < 2 || !modules.has(named[1])) return isFile ? null : null
      return named[1]
    }
    expect(lines(Object.fromEntries(graph(CORE, ['supervisor'], nodeOf)))).toEqual(lines(Object.fromEntries(documented("The supervisor program's own modules:"))))
  })
})
