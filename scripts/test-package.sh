#!/usr/bin/env bash
# The package as a user installs it (npm run test:package), on Linux x64:
#  1. build the linux-x64-gnu addon as the release pipeline does
#     (cargo-zigbuild against glibc 2.17) and the supervisor, and check that
#     neither needs a glibc newer than 2.17;
#  2. assemble the linux-x64-gnu platform package (scripts/assemble-platforms.mjs,
#     through `napi artifacts`) and pack it; stage and pack the main package
#     (scripts/stage-package.mjs);
#  3. check the packed manifests (no install-time script, only shipped files)
#     and the packed types with @arethetypeswrong/cli;
#  4. install both tarballs into a fresh consumer folder, and from there:
#     require, import, the TypeScript types (tsc --strict, node16 and
#     bundler), the command line and the smoke test (a real execute());
#     then, with the harness packages they import, every example of the
#     README and docs/ (scripts/manual-examples.mjs);
#  5. install the main tarball alone: loading it fails with the error that
#     names the platform package it needs.
# Elsewhere it says so and does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# Run as `npm run test:package`, npm hands this repository's settings down as
# npm_config_* variables (.npmrc's legacy-peer-deps among them); a user's
# install sees none of them.
while IFS= read -r name; do unset "$name"; done < <(env | sed -n 's/^\(npm_config_[^=]*\)=.*/\1/p')

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "test:package: skipped (it builds and installs the linux-x64-gnu package)"
  exit 0
fi

# The built files stay inside the project, where `napi artifacts` works; the
# consumers go outside it, so that nothing resolves from this repository.
build=$root/target/package-test
work=$(mktemp -d "${TMPDIR:-/tmp}/dsh-package-test-XXXXXX")
trap 'rm -rf "$work" "$build"' EXIT
rm -rf "$build"
target=x86_64-unknown-linux-gnu
artifacts=$build/artifacts/bindings-$target
mkdir -p "$artifacts" "$build/npm" "$work/packs"

step() { printf '\n== %s\n' "$*"; }

step "build $target against glibc 2.17, and the supervisor"
# As the release pipeline builds it: cargo-zigbuild with a glibc version
# suffix. Zig comes from PyPI (ziglang) and cargo-zigbuild from crates.io;
# either is installed under target/ when it is missing.
if ! command -v zig >/dev/null && ! python3 -m ziglang version >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check --target "$root/target/tools/python" ziglang
  export PYTHONPATH="$root/target/tools/python${PYTHONPATH:+:$PYTHONPATH}"
fi
if ! command -v cargo-zigbuild >/dev/null; then
  export PATH="$root/target/tools/bin:$PATH"
  command -v cargo-zigbuild >/dev/null || cargo install --quiet --locked --root "$root/target/tools" cargo-zigbuild
fi
npx napi build --platform --release --target "$target.2.17" --cross-compile \
  --target-dir target/package --output-dir "$artifacts" --no-js --dts ../binding-types.d.ts
node scripts/build-supervisor.mjs --target "$target" --out "$artifacts"
node scripts/check-glibc.mjs --max 2.17 "$artifacts"/*.node "$artifacts/dsh-shell-env-supervisor"

step "assemble and pack the platform package, stage and pack the main package"
cp -r npm/linux-x64-gnu "$build/npm/"
node scripts/assemble-platforms.mjs --artifacts "$build/artifacts" --npm-dir "$build/npm" --targets "$target"
npm pack "$build/npm/linux-x64-gnu" --pack-destination "$work/packs" --silent
node scripts/stage-package.mjs "$work/staging" >/dev/null
npm pack "$work/staging" --pack-destination "$work/packs" --silent
main=$(ls "$work"/packs/deepseek-ai-dsh-shell-env-0*.tgz)
platform=$(ls "$work"/packs/deepseek-ai-dsh-shell-env-linux-x64-gnu-*.tgz)

step "the packed manifests and files"
node - "$main" "$platform" <<'JS'
const { execFileSync } = require('node:child_process')
const [main, platform] = process.argv.slice(2)
const list = (tgz) => execFileSync('tar', ['tzf', tgz], { encoding: 'utf8' }).trim().split('\n').map((f) => f.replace(/^package\//, ''))
const manifest = (tgz) => JSON.parse(execFileSync('tar', ['xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }))
const fail = (message) => { console.error(message); process.exit(1) }
const m = manifest(main)
const lifecycle = ['preinstall', 'install', 'postinstall', 'prepare', 'prepack', 'postpack', 'prepublish']
if (m.scripts && Object.keys(m.scripts).some((s) => lifecycle.includes(s))) fail(`install-time scripts: ${JSON.stringify(m.scripts)}`)
if (m.devDependencies) fail('devDependencies in the published manifest')
if (m.optionalDependencies?.['@deepseek-ai/dsh-shell-env-linux-x64-gnu'] !== m.version) fail('no optional dependency on the platform package')
const files = list(main)
// The manual's parts in docs/ ship with the README that links to them; docs/performance.md does not.
const unexpected = files.filter((f) => f === 'docs/performance.md' || /(^|\/)(__test__|crates|src|target|bench|demo|scripts|fuzz|npm)\/|\.node$|\.rs$|supervisor/.test(f))
if (unexpected.length) fail(`files a user does not need: ${unexpected.join(', ')}`)
const shipped = list(platform).sort()
const wanted = ['README.md', 'dsh-shell-env-supervisor', 'dsh-shell-env.linux-x64-gnu.node', 'package.json']
if (JSON.stringify(shipped) !== JSON.stringify(wanted)) fail(`platform package files: ${shipped.join(', ')}`)
console.log(`main: ${files.length} files, no install-time script; platform: ${shipped.join(', ')}`)
JS
# node16 profile: the package needs Node 20 (no node10 resolution). The
# executors (./bash-local, ./pwsh-local) and the subprocess runtime
# (./subprocess-local) are ES modules only, as the harness they plug into is,
# so a require() of them is expected to need import().
npx attw "$main" --profile node16 --ignore-rules cjs-resolves-to-esm

step "install both tarballs into a fresh consumer"
consumer=$work/consumer
mkdir -p "$consumer"
cd "$consumer"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent "$main" "$platform"
node -e "const p = require('@deepseek-ai/dsh-shell-env'); if (typeof p.execute !== 'function') process.exit(1); console.log('require: ok')"
node --input-type=module -e "import { execute } from '@deepseek-ai/dsh-shell-env'; if (typeof execute !== 'function') process.exit(1); console.log('import: ok')"
cat > consumer.mts <<'TS'
import { ShellEnvRegistry, execute, type ShellRunResult } from '@deepseek-ai/dsh-shell-env'
const registry = new ShellEnvRegistry({ dshHome: '/tmp/dsh' })
registry.register({
  name: 'example',
  variables: { DSH_EXAMPLE: { description: 'An example.' } },
  resolve: () => ({ DSH_EXAMPLE: 'yes' }),
})
const result: ShellRunResult = await (await execute({ command: 'true', registry, execution: {} })).result()
export const code: number | null = result.exitCode
TS
cat > consumer.cts <<'TS'
import pkg = require('@deepseek-ai/dsh-shell-env')
export const prefix: 'DSH_' = pkg.DSH_ENV_PREFIX
TS
for resolution in node16 bundler; do
  module=$([ "$resolution" = node16 ] && echo node16 || echo esnext)
  node "$root/node_modules/typescript/bin/tsc" --strict --noEmit --types node --typeRoots "$root/node_modules/@types" \
    --module "$module" --moduleResolution "$resolution" --target es2022 consumer.mts $([ "$resolution" = node16 ] && echo consumer.cts)
  echo "tsc --strict, moduleResolution $resolution: ok"
done
npx dsh-shell-env --version
npx dsh-shell-env env --home /tmp/dsh >/dev/null && echo "command line: ok"
node "$root/scripts/smoke.mjs" --from "$consumer"
# The executors need the harness packages they plug into (optional peers).
npm install --no-audit --no-fund --silent @deepseek-ai/cordis@4.0.4 @deepseek-ai/dsh-shell@0.1.0-rc.8 \
  @deepseek-ai/dsh-settings@0.1.0-rc.8 @deepseek-ai/dsh-subprocess@0.1.0-rc.8 @deepseek-ai/schemastery
node --input-type=module -e "import bash from '@deepseek-ai/dsh-shell-env/bash-local'; import pwsh from '@deepseek-ai/dsh-shell-env/pwsh-local'; import runtime from '@deepseek-ai/dsh-shell-env/subprocess-local'; if (typeof bash !== 'function' || typeof pwsh !== 'function' || typeof runtime !== 'function') process.exit(1); console.log('import of the executors and the subprocess runtime, with the harness installed: ok')"

step "the manual's examples, from the installed tarballs"
# What the README and docs/ import beside the package: the harness's tool
# runtime, jobs and tools, and its sandboxing executor (bubblewrap).
npm install --no-audit --no-fund --silent @deepseek-ai/dsh-system-prompt@0.1.0-rc.8 @deepseek-ai/dsh-tools@0.1.0-rc.8 \
  @deepseek-ai/dsh-jobs-local@0.1.0-rc.8 @deepseek-ai/dsh-tool-bash@0.1.0-rc.8 @deepseek-ai/dsh-tool-jobs@0.1.0-rc.8 \
  @deepseek-ai/dsh-bash-sandbox@0.1.0-rc.8 @deepseek-ai/dsh-sandbox-local@0.1.0-rc.8 @deepseek-ai/dsh-sandbox-policy@0.1.0-rc.8
node "$root/scripts/manual-examples.mjs" --from "$consumer"

step "without the platform package, loading says what is missing"
bare=$work/bare
mkdir -p "$bare"
cd "$bare"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent --omit=optional "$main"
if node -e "require('@deepseek-ai/dsh-shell-env')" 2>"$bare/error.txt"; then
  echo "loaded without a binary"; exit 1
fi
grep -q 'ERR_SHELL_ENV_NATIVE_BINARY_MISSING' "$bare/error.txt"
grep -q 'It needs the package @deepseek-ai/dsh-shell-env-linux-x64-gnu' "$bare/error.txt"
grep -q 'linux-x64-gnu (glibc' "$bare/error.txt"
grep -q 'To fix it: npm install @deepseek-ai/dsh-shell-env-linux-x64-gnu@' "$bare/error.txt"
! grep -q 'npm has a bug' "$bare/error.txt"
cat "$bare/error.txt"
# Every entry point says it in the same three lines: the command line too, even for --help.
for args in --help --version env; do
  if npx dsh-shell-env $args 2>"$bare/cli.txt"; then echo "dsh-shell-env $args ran without a binary"; exit 1; fi
  [ "$(wc -l <"$bare/cli.txt")" -eq 3 ] || { cat "$bare/cli.txt"; exit 1; }
  grep -q 'ERR_SHELL_ENV_NATIVE_BINARY_MISSING' "$bare/cli.txt"
done
echo "the command line without a binary: three lines"
# import, and the executors and the subprocess runtime with the harness peers
# they import first: the same three lines, nothing else of the package's.
npm install --no-audit --no-fund --silent --omit=optional "$main" @deepseek-ai/cordis@4.0.4 @deepseek-ai/dsh-shell@0.1.0-rc.8 \
  @deepseek-ai/dsh-settings@0.1.0-rc.8 @deepseek-ai/dsh-subprocess@0.1.0-rc.8 @deepseek-ai/schemastery
for entry in '' /bash-local /pwsh-local /subprocess-local; do
  if node --input-type=module -e "import '@deepseek-ai/dsh-shell-env$entry'" 2>"$bare/import.txt"; then
    echo "import of @deepseek-ai/dsh-shell-env$entry loaded without a binary"; exit 1
  fi
  grep -q 'no native binary for linux-x64-gnu .* (ERR_SHELL_ENV_NATIVE_BINARY_MISSING)' "$bare/import.txt"
  grep -q '^To fix it: npm install @deepseek-ai/dsh-shell-env-linux-x64-gnu@' "$bare/import.txt"
  [ "$(grep -c 'dsh-shell-env' "$bare/import.txt")" -eq 3 ] || { cat "$bare/import.txt"; exit 1; }
done
echo "import of the package, its executors and its subprocess runtime without a binary: the three lines"
echo "test:package: ok"
