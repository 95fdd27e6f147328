// The plain-JS registry `collect()` is measured against: the algorithm of the
// TypeScript `dsh-shell-env@0.1.0-rc.8` this package replaces, written the
// straightforward way. Contributors are sorted by name on every call, each resolver's result is
// validated with `Object.entries` against its declaration, and the snapshot is
// a frozen object with sorted keys. Same inputs, same outputs as the native
// `ShellEnvRegistry#collect` (the bench asserts deep equality before timing).
// `collectAsync()` awaits each resolver's answer before the next runs.

const KEY_RULE = /^DSH_[A-Z][A-Z0-9_]*$/
const RESERVED = new Set(['DSH_HOME', 'DSH_SHELL', 'DSH_SESSION_ID', 'DSH_PROFILE', 'DSH_PROFILE_DIR'])

function fail(code, message) {
  const error = new Error(message)
  error.code = code
  return error
}

export class PlainShellEnvRegistry {
  #contributors = new Map()
  #owners = new Map()

  /** `dshHome` must already be absolute; `profile` is `{ name, dir }` or undefined. */
  constructor({ dshHome, profile }) {
    this.dshHome = dshHome
    this.profile = profile
  }

  register(contributor) {
    const { name, variables, commandDirectories = [], resolve } = contributor
    if (typeof name !== 'string' || name.trim() === '') throw fail('ERR_SHELL_ENV_INVALID_NAME', 'invalid contributor name')
    if (this.#contributors.has(name)) throw fail('ERR_SHELL_ENV_DUPLICATE_CONTRIBUTOR', `duplicate contributor ${name}`)
    if (typeof resolve !== 'function') throw fail('ERR_SHELL_ENV_INVALID_CONTRIBUTOR', `${name}: resolve must be a function`)
    for (const [key, declaration] of Object.entries(variables)) {
      if (!KEY_RULE.test(key)) throw fail('ERR_SHELL_ENV_INVALID_KEY', `${name}: invalid key ${key}`)
      if (RESERVED.has(key)) throw fail('ERR_SHELL_ENV_RESERVED_KEY', `${name}: reserved key ${key}`)
      if (typeof declaration?.description !== 'string' || declaration.description.trim() === '') {
        throw fail('ERR_SHELL_ENV_MISSING_DESCRIPTION', `${name}: ${key} has no description`)
      }
      const owner = this.#owners.get(key)
      if (owner !== undefined) throw fail('ERR_SHELL_ENV_DUPLICATE_KEY', `${key} is declared by ${owner} and ${name}`)
    }
    for (const directory of commandDirectories) {
      if (typeof directory !== 'string' || !directory.startsWith('/') || directory.includes('\0') || directory.includes(':')) {
        throw fail('ERR_SHELL_ENV_INVALID_DIRECTORY', `${name}: invalid command directory ${directory}`)
      }
    }
    for (const key of Object.keys(variables)) this.#owners.set(key, name)
    const entry = { name, variables, commandDirectories: [...commandDirectories], resolve }
    this.#contributors.set(name, entry)
    return () => {
      if (this.#contributors.get(name) !== entry) return
      this.#contributors.delete(name)
      for (const key of Object.keys(variables)) this.#owners.delete(key)
    }
  }

  collect(execution, { inheritedPath = process.env.PATH } = {}) {
    const { values, contributors } = this.#begin(execution)
    for (const contributor of contributors) {
      const result = this.#resolve(contributor, execution)
      if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
        throw fail('ERR_SHELL_ENV_ASYNC_RESOLVER', `${contributor.name} returned a promise`)
      }
      this.#accept(values, contributor, result)
    }
    return this.#finish(values, contributors, inheritedPath)
  }

  /** The same, awaiting each resolver's answer before the next runs. */
  async collectAsync(execution, { inheritedPath = process.env.PATH } = {}) {
    const { values, contributors } = this.#begin(execution)
    for (const contributor of contributors) {
      let result
      try {
        result = await contributor.resolve(execution)
      } catch (cause) {
        throw Object.assign(fail('ERR_SHELL_ENV_RESOLVER_FAILED', `${contributor.name} threw`), { cause })
      }
      this.#accept(values, contributor, result)
    }
    return this.#finish(values, contributors, inheritedPath)
  }

  #begin(execution) {
    if (execution === null || typeof execution !== 'object') {
      throw fail('ERR_SHELL_ENV_INVALID_EXECUTION', 'execution must be an object')
    }
    const values = { DSH_HOME: this.dshHome, DSH_SHELL: '1' }
    if (execution.agent !== undefined && execution.agent !== null) {
      const id = execution.agent.session?.header?.id
      if (typeof id !== 'string') throw fail('ERR_SHELL_ENV_NON_STRING_VALUE', 'DSH_SESSION_ID must be a string')
      values.DSH_SESSION_ID = id
    }
    if (this.profile !== undefined) {
      values.DSH_PROFILE = this.profile.name
      values.DSH_PROFILE_DIR = this.profile.dir
    }
    // Sorted by name on every call, as the original did.
    const contributors = [...this.#contributors.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    return { values, contributors }
  }

  #resolve(contributor, execution) {
    try {
      return contributor.resolve(execution)
    } catch (cause) {
      throw Object.assign(fail('ERR_SHELL_ENV_RESOLVER_FAILED', `${contributor.name} threw`), { cause })
    }
  }

  #accept(values, contributor, result) {
    if (result === null || typeof result !== 'object' || Array.isArray(result)) {
      throw fail('ERR_SHELL_ENV_INVALID_RESULT', `${contributor.name} returned a non-object`)
    }
    for (const [key, value] of Object.entries(result)) {
      if (!Object.hasOwn(contributor.variables, key)) {
        throw fail('ERR_SHELL_ENV_UNDECLARED_KEY', `${contributor.name} returned undeclared ${key}`)
      }
      if (typeof value !== 'string') throw fail('ERR_SHELL_ENV_NON_STRING_VALUE', `${contributor.name}: ${key} is not a string`)
      if (value.includes('\0')) throw fail('ERR_SHELL_ENV_INVALID_VALUE', `${contributor.name}: ${key} holds NUL`)
      values[key] = value
    }
  }

  #finish(values, contributors, inheritedPath) {
    const directories = []
    const seen = new Set()
    for (const contributor of contributors) {
      for (const directory of contributor.commandDirectories) {
        if (!seen.has(directory)) {
          seen.add(directory)
          directories.push(directory)
        }
      }
    }
    if (directories.length > 0) {
      values.PATH = inheritedPath ? `${directories.join(':')}:${inheritedPath}` : directories.join(':')
    }
    const snapshot = {}
    for (const key of Object.keys(values).sort()) snapshot[key] = values[key]
    return Object.freeze(snapshot)
  }
}
