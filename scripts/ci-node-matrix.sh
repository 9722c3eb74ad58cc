#!/usr/bin/env bash
# Runs the unit tests on the other Node majors wattshift supports (default 22 and 24; CI's own
# Node, 20, runs every suite). Each Node is the official Linux build from the npm registry's
# `node-linux-<arch>` package, so nothing but the registry is needed. Each gets its own clone of
# this checkout and its own `npm ci`: better-sqlite3 and serialport are native modules, built for
# one Node ABI. They are built without optimisation (-O0 after the packages' own -O3): SQLite's
# single C file takes 45 s of CPU at -O3 and 6 s at -O0 here, and these runs test the runtime
# and the binding, not the speed of the native code.
#
#   scripts/ci-node-matrix.sh [major ...]
#
# The unit tests are the tests beside the code in src/ plus the test/ files that put the
# Node-dependent parts on a real peer: SQLite on disk (native module), HTTP through undici and
# node:http, MQTT, Modbus TCP, OCPP over WebSocket, JWTs, the config loader. The whole homes and
# the fault, week and hostile suites stay on CI's own Node: they test behaviour, not the runtime,
# and would add many minutes per Node.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

[ $# -gt 0 ] || set -- 22 24

unit_tests=(
  src
  test/config.test.ts
  test/store.test.ts
  test/store-open.test.ts
  test/store-crash.test.ts
  test/spark-http.test.ts
  test/spark-oauth.test.ts
  test/sandbox-api.test.ts
  test/mqtt-devices.test.ts
  test/modbus-tcp-server.test.ts
  test/ocpp-charger.test.ts
)

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "node-matrix: no Node package for $(uname -m)" >&2; exit 1 ;;
esac

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

for major in "$@"; do
  start=$SECONDS
  node_home="$scratch/node-$major"
  mkdir -p "$node_home"
  tarball=$(cd "$scratch" && npm pack --silent "node-linux-$arch@$major")
  tar -xzf "$scratch/$tarball" -C "$node_home" --strip-components=1
  rm "$scratch/$tarball"
  clone="$scratch/wattshift-node-$major"
  git clone -q "$repo" "$clone"
  (
    cd "$clone"
    export PATH="$node_home/bin:$PATH"
    # node-gyp builds against the headers the package ships, not a download from nodejs.org.
    export npm_config_nodedir="$node_home"
    export CFLAGS=-O0 CXXFLAGS=-O0
    echo "node-matrix: Node $(node --version) ($node_home/bin/node), npm $(npm --version)"
    npm ci --no-audit --no-fund
    npx vitest run "${unit_tests[@]}"
  )
  echo "node-matrix: Node $major passed in $((SECONDS - start)) s"
  rm -rf "$clone" "$node_home"
done
