#!/bin/sh
# Exits 0 when NODE (default: the node on the PATH) is 20.18.1 or newer, the oldest wattshift runs
# on (undici's floor). Shared by setup-host.sh and scripts/install.sh.
#   node-ok.sh [NODE]
NODE=${1:-$(command -v node || true)}
[ -n "$NODE" ] && "$NODE" -e "const [a,b,c]=process.versions.node.split('.').map(Number); process.exit(a>20||(a===20&&(b>18||(b===18&&c>=1)))?0:1)"
