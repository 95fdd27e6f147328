#!/usr/bin/env bash
# The type tests (npm run test:types): `tsc --strict` with lib checks. The
# upstream-cordis tests run with TypeScript 7; the harness-facing ones also
# with TypeScript 5.7, the oldest the harness's own declarations compile with.
set -euo pipefail
cd "$(dirname "$0")/.."

run() {
  local compiler=$1 project=$2
  echo "tsc ($compiler) -p $project"
  node "node_modules/$compiler/bin/tsc" -p "$project"
}

for project in tsconfig.json tsconfig.cordis4.json tsconfig.node16.json tsconfig.bundler.json; do
  run typescript "__test__/types/$project"
done
for project in tsconfig.node16.json tsconfig.bundler.json; do
  run typescript57 "__test__/types/$project"
done
# What a mistake is told, with both: TypeScript 7 reports only the last
# overload of a call that matches none.
for compiler in typescript typescript57; do
  echo "type messages ($compiler)"
  node scripts/type-messages.mjs "$compiler" __test__/types/tsconfig.messages.json
done
