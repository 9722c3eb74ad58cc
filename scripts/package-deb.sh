#!/usr/bin/env bash
# `npm run package`: builds a .deb for this machine's architecture (the SQLite addon is
# native) with dpkg-deb: the program in /opt/wattshift with its production dependencies, the
# `wattshift` command, the systemd unit and the documentation; postinst creates the user and the
# directories (packaging/setup-host.sh, the same as scripts/install.sh).
#   scripts/package-deb.sh [OUTDIR]      (default: the checkout's directory)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath "${1:-$SRC}")
VERSION=$(node -p "require('$SRC/package.json').version")
ARCH=$(dpkg --print-architecture)
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT

app="$STAGE/opt/wattshift"
install -d "$app" "$STAGE/usr/bin" "$STAGE/lib/systemd/system" "$STAGE/usr/share/doc/wattshift" "$STAGE/DEBIAN"
# Built straight into the package (which holds package.json, profiles/ and tariffs/), not the checkout's dist/.
node "$SRC/scripts/build.mjs" --outdir "$app/dist"
cp -a "$SRC/profiles" "$SRC/tariffs" "$SRC/packaging" "$SRC/package.json" "$SRC/package-lock.json" "$SRC/config.example.yaml" "$app/"
rm -rf "$app/packaging/deb"
# Its contents: node_modules may be a symlink (a worktree sharing another checkout's install).
install -d "$app/node_modules" && cp -a "$SRC/node_modules/." "$app/node_modules/"
(cd "$app" && npm prune --omit=dev --no-audit --no-fund >/dev/null && find node_modules -type d -empty -delete)
install -m 0755 "$SRC/packaging/wattshift" "$STAGE/usr/bin/wattshift"
install -m 0644 "$SRC/systemd/wattshift.service" "$STAGE/lib/systemd/system/wattshift.service"
install -m 0644 "$SRC/README.md" "$SRC/CHANGELOG.md" "$SRC"/docs/*.md "$SRC/config.example.yaml" "$STAGE/usr/share/doc/wattshift/"
install -m 0755 "$SRC"/packaging/deb/postinst "$SRC"/packaging/deb/prerm "$SRC"/packaging/deb/postrm "$STAGE/DEBIAN/"
size=$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)
cat > "$STAGE/DEBIAN/control" <<CONTROL
Package: wattshift
Version: $VERSION
Architecture: $ARCH
Maintainer: wattshift maintainers <wattshift@localhost>
Installed-Size: $size
Depends: tzdata, adduser | passwd, systemd
Recommends: nodejs (>= 20.18.1)
Section: misc
Priority: optional
Description: home-energy controller for the Energy Coordination API
 Plans a hot water tank and an EV charger into cheap and incentivised hours,
 drives them over Modbus and MQTT, meters into SQLite, uploads usage reports
 and shares its state with Home Assistant. Needs Node.js 20.18.1 or newer.
CONTROL
deb="$OUT/wattshift_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group --build "$STAGE" "$deb" >/dev/null
echo "$deb"
