#!/usr/bin/env bash
# The JS suites under wine: Jest (default) or Vitest run by the Windows
# node.exe of scripts/test-cross.sh, with the addon it built for
# x86_64-pc-windows-gnu, so that the specs' platform gates
# (__test__/platform.cjs) and their portable commands are exercised on
# Windows without a Windows machine. Run `npm run test:cross` once first: it
# makes the wine prefix, target/wine/node and target/wine/addon.
#
#   bash scripts/test-wine-suites.sh [jest|vitest] [spec file...]
#
# The runners' own native parts in node_modules are Linux builds, and npm
# refuses to install the win32 ones here, so their win32-x64-msvc packages are
# packed and unpacked into an overlay (target/wine/overlay/node_modules, found
# through NODE_PATH; package.json and the lock file are left alone): the
# resolver of Jest (unrs-resolver), and rolldown and lightningcss for Vitest.
# The addon goes there too, as the package binding.js looks for on win32
# (@deepseek-ai/dsh-shell-env-win32-x64-msvc): NAPI_RS_NATIVE_LIBRARY_PATH
# would also redirect unrs-resolver's own napi-rs loader to it.
#
# Wine's gaps show up as failures that a Windows runner does not have: no
# junctions (fs.symlinkSync(…, 'junction')), and no bash.exe or pwsh. node.exe
# crashes writing to a Unix pipe, so the run's output goes to a file
# (target/wine/logs/suites-<runner>.log), printed at the end. Jest runs in band.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

runner=${1:-jest}
[ $# -gt 0 ] && shift
case $runner in
  jest | vitest) ;;
  *)
    echo "usage: bash scripts/test-wine-suites.sh [jest|vitest] [spec file...]" >&2
    exit 2
    ;;
esac

work=$root/target/wine
exe=${NODE_EXE:-$work/node/package/bin/node.exe}
addon=$(ls "$work"/addon/*.win32-x64-gnu.node 2>/dev/null | head -n 1 || true)
if [ ! -f "$work/prefix/.dsh-ready" ] || [ ! -f "$exe" ] || [ -z "$addon" ]; then
  echo "test-wine-suites: run 'npm run test:cross' first (it makes target/wine: the prefix, node.exe and the windows-gnu addon)" >&2
  exit 1
fi
export WINEPREFIX=$work/prefix WINEDEBUG=-all WINEDLLOVERRIDES=mscoree,mshtml=
unset NAPI_RS_NATIVE_LIBRARY_PATH

overlay=$work/overlay/node_modules
version() { node -p "require('./node_modules/$1/package.json').version"; }

# overlay_package NAME VERSION: the npm package NAME@VERSION unpacked into the overlay.
overlay_package() {
  local name=$1 want=$2 dir=$overlay/$1
  if [ -f "$dir/package.json" ] && [ "$(node -p "require('$dir/package.json').version")" = "$want" ]; then
    return 0
  fi
  local packs=$work/overlay/packs
  mkdir -p "$packs" "$dir"
  rm -rf "${dir:?}"/*
  local tarball
  tarball=$(cd "$packs" && npm pack -q "$name@$want" | tail -n 1)
  tar xzf "$packs/$tarball" -C "$dir" --strip-components=1
}

# Both runners' bindings whichever runs: the specs start nested Jest and Vitest runs.
overlay_package @unrs/resolver-binding-win32-x64-msvc "$(version unrs-resolver)"
overlay_package @rolldown/binding-win32-x64-msvc "$(version rolldown)"
overlay_package lightningcss-win32-x64-msvc "$(version lightningcss)"

# The addon under the name and version binding.js asks for on win32 (msvc).
pkg=$overlay/@deepseek-ai/dsh-shell-env-win32-x64-msvc
mkdir -p "$pkg"
cp "$addon" "$pkg/dsh-shell-env.win32-x64-msvc.node"
printf '{"name":"@deepseek-ai/dsh-shell-env-win32-x64-msvc","version":"%s","main":"dsh-shell-env.win32-x64-msvc.node"}\n' \
  "$(node -p "require('./package.json').version")" >"$pkg/package.json"

NODE_PATH=$(winepath -w "$overlay")
export NODE_PATH
mkdir -p "$work/logs"
log=$work/logs/suites-$runner.log
if [ "$runner" = jest ]; then
  args=(--experimental-vm-modules --disable-warning=ExperimentalWarning node_modules/jest/bin/jest.js --runInBand "$@")
else
  args=(node_modules/vitest/vitest.mjs run "$@")
fi
status=0
wine "$exe" "${args[@]}" >"$log" 2>&1 || status=$?
cat "$log"
echo "test-wine-suites: $runner exited $status (output in ${log#"$root"/})"
exit "$status"
