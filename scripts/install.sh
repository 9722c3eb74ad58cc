#!/usr/bin/env bash
# Installs wattshift on a Debian / Raspberry Pi OS host from a built checkout (npm ci && npm run
# build). Safe to run again: every step checks what is already there. Run as root. The same host
# set-up runs from the .deb (npm run package); see docs/install.md.
set -euo pipefail

PREFIX=/opt/wattshift
UNIT=/etc/systemd/system/wattshift.service
SRC=$(cd "$(dirname "$0")/.." && pwd)

[ "$(id -u)" = 0 ] || { echo "install.sh: run as root (sudo scripts/install.sh)" >&2; exit 1; }
[ -f "$SRC/dist/main.js" ] || { echo "install.sh: build first (npm ci && npm run build)" >&2; exit 1; }

# Node.js 20.18.1 or newer: from the distribution where it has it (Debian 13, Raspberry Pi OS based on
# it); Debian 12's nodejs is 18, which cannot run wattshift, so it is not installed.
if ! "$SRC/packaging/node-ok.sh"; then
  apt-get update
  candidate=$(apt-cache policy nodejs | awk '/Candidate:/ {print $2}')
  if [ -n "$candidate" ] && [ "$candidate" != "(none)" ] && dpkg --compare-versions "$candidate" ge 20.18.1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs
  else
    echo "install.sh: wattshift needs Node.js 20.18.1 or newer; this distribution offers nodejs ${candidate:-none}." >&2
    echo "  Install Node 20 or 22 another way (docs/install.md names the options), then run this again." >&2
    exit 1
  fi
fi

install -d -m 0755 "$PREFIX"
# dist/, profiles/ and tariffs/ are replaced whole: chunk names change from build to build. The native
# addons in node_modules were built for this host by npm ci.
rm -rf "$PREFIX/dist" "$PREFIX/profiles" "$PREFIX/tariffs" "$PREFIX/packaging"
cp -a "$SRC/dist" "$SRC/profiles" "$SRC/tariffs" "$SRC/packaging" "$SRC/package.json" "$SRC/package-lock.json" "$SRC/config.example.yaml" "$PREFIX/"
[ -d "$SRC/node_modules" ] && install -d "$PREFIX/node_modules" && cp -a "$SRC/node_modules/." "$PREFIX/node_modules/"
(cd "$PREFIX" && npm prune --omit=dev --no-audit --no-fund >/dev/null)

install -m 0755 "$SRC/packaging/wattshift" /usr/bin/wattshift
install -d -m 0755 /usr/share/doc/wattshift
install -m 0644 "$SRC/README.md" "$SRC"/docs/*.md /usr/share/doc/wattshift/
install -m 0644 "$SRC/systemd/wattshift.service" "$UNIT"
"$PREFIX/packaging/setup-host.sh" "$PREFIX" "$UNIT"

cat <<MSG
wattshift is installed in $PREFIX; the command is wattshift (run it with sudo).
Next:
  1. edit /etc/wattshift/config.yaml; put the client secret in /etc/wattshift/credentials/spark-client-secret
  2. sudo wattshift check
  3. sudo wattshift register
  4. sudo systemctl enable --now wattshift
  5. sudo wattshift status
MSG
