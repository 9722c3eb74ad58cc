#!/usr/bin/env bash
# Installs wattshift on a Debian / Raspberry Pi OS host. Safe to run again: every step checks
# what is already there. Run as root from a built checkout (npm ci && npm run build).
set -euo pipefail

PREFIX=/opt/wattshift
CONF_DIR=/etc/wattshift
UNIT=/etc/systemd/system/wattshift.service
SRC=$(cd "$(dirname "$0")/.." && pwd)

[ "$(id -u)" = 0 ] || { echo "install.sh: run as root" >&2; exit 1; }
[ -f "$SRC/dist/main.js" ] || { echo "install.sh: build first (npm ci && npm run build)" >&2; exit 1; }

# nodejs (its ICU carries the time zones; no tzdata needed).
missing=()
command -v node >/dev/null 2>&1 || missing+=(nodejs)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || { echo "install.sh: Node 20 or newer is needed, found $(node --version)" >&2; exit 1; }

getent group wattshift >/dev/null || groupadd --system wattshift
getent passwd wattshift >/dev/null || useradd --system --gid wattshift --groups dialout \
  --home-dir /var/lib/wattshift --no-create-home --shell /usr/sbin/nologin wattshift

install -d -m 0755 "$PREFIX"
# Copy the built program, its data and its production dependencies; the native addons were built
# for this host. dist/ and profiles/ are replaced whole: chunk names change from build to build.
rm -rf "$PREFIX/dist" "$PREFIX/profiles"
cp -a "$SRC/dist" "$SRC/profiles" "$SRC/package.json" "$SRC/package-lock.json" "$PREFIX/"
[ -d "$SRC/node_modules" ] && cp -a "$SRC/node_modules" "$PREFIX/"
(cd "$PREFIX" && npm prune --omit=dev --no-audit --no-fund >/dev/null)

install -d -m 0750 -g wattshift "$CONF_DIR"
install -d -m 0700 "$CONF_DIR/credentials"
# Never overwrite a config the operator has edited.
[ -f "$CONF_DIR/config.yaml" ] || install -m 0640 -g wattshift "$SRC/config.example.yaml" "$CONF_DIR/config.yaml"
[ -f "$CONF_DIR/credentials/spark-client-secret" ] || install -m 0600 /dev/null "$CONF_DIR/credentials/spark-client-secret"

install -m 0644 "$SRC/systemd/wattshift.service" "$UNIT"
systemctl daemon-reload 2>/dev/null || true

cat <<MSG
wattshift is installed in $PREFIX.
Next:
  1. edit $CONF_DIR/config.yaml and put the client secret in $CONF_DIR/credentials/spark-client-secret
  2. node $PREFIX/dist/main.js check --config $CONF_DIR/config.yaml
  3. node $PREFIX/dist/main.js register --config $CONF_DIR/config.yaml
  4. systemctl enable --now wattshift
MSG
