#!/usr/bin/env bash
# `npm run package`: builds the .debs for this machine's architecture (the SQLite addon is
# native) with dpkg-deb, and prints their paths, the gateway's last:
#   wattshift-hub_*.deb  the partner's fleet hub (`wattshift hub`, docs/fleet.md): its bundle,
#                        dist/hub.js, beside the gateway's in /opt/wattshift; needs the same
#                        version of wattshift, whose command loads it.
#   wattshift_*.deb      the gateway: the program in /opt/wattshift with its production
#                        dependencies, the `wattshift` command, the systemd unit and the
#                        documentation; postinst creates the user and the directories
#                        (packaging/setup-host.sh, the same as scripts/install.sh). It carries the
#                        sandbox and simulators (dist/sim.js, `wattshift sandbox|sim|demo`) to try
#                        a home without hardware; the daemon never loads them.
#   scripts/package-deb.sh [OUTDIR]      (default: the checkout's directory)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath "${1:-$SRC}")
VERSION=$(node -p "require('$SRC/package.json').version")
ARCH=$(dpkg --print-architecture)
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
# The stage is the package's root entry: dpkg gives / the mode it finds there (mktemp makes 0700).
chmod 0755 "$STAGE"

app="$STAGE/opt/wattshift"
install -d "$app" "$STAGE/usr/bin" "$STAGE/usr/lib/systemd/system" "$STAGE/usr/share/doc/wattshift" "$STAGE/DEBIAN"
# Built straight into the package (which holds package.json, profiles/ and tariffs/), not the checkout's dist/.
node "$SRC/scripts/build.mjs" --outdir "$app/dist"
cp -a "$SRC/profiles" "$SRC/tariffs" "$SRC/packaging" "$SRC/package.json" "$SRC/package-lock.json" "$SRC/config.example.yaml" "$app/"
rm -rf "$app/packaging/deb"
# Its contents: node_modules may be a symlink (a worktree sharing another checkout's install).
install -d "$app/node_modules" && cp -a "$SRC/node_modules/." "$app/node_modules/"
(cd "$app" && npm prune --omit=dev --no-audit --no-fund >/dev/null)
# Only what runs: the SQLite addon without its sources and build objects, serialport's prebuilt
# binding for this platform only, and no source maps (the unit does not enable them; the bundle
# keeps its names, so stack traces stay readable).
sqlite="$app/node_modules/better-sqlite3"
mv "$sqlite/build/Release/better_sqlite3.node" "$STAGE/better_sqlite3.node"
rm -rf "$sqlite/build" "$sqlite/deps" "$sqlite/src" "$sqlite/binding.gyp"
install -D -m 0755 "$STAGE/better_sqlite3.node" "$sqlite/build/Release/better_sqlite3.node" && rm "$STAGE/better_sqlite3.node"
platform=$(node -p 'process.platform + "-" + process.arch')
find "$app/node_modules" -maxdepth 4 -path '*/prebuilds/*' -type d ! -name "$platform" -prune -exec rm -rf {} +
find "$app" -name '*.map' -type f -delete
find "$app/node_modules" -type d -empty -delete
install -m 0755 "$SRC/packaging/wattshift" "$STAGE/usr/bin/wattshift"
install -m 0644 "$SRC/systemd/wattshift.service" "$STAGE/usr/lib/systemd/system/wattshift.service"
install -m 0644 "$SRC/README.md" "$SRC/CHANGELOG.md" "$SRC"/docs/*.md "$SRC/config.example.yaml" "$STAGE/usr/share/doc/wattshift/"
install -m 0755 "$SRC"/packaging/deb/postinst "$SRC"/packaging/deb/prerm "$SRC"/packaging/deb/postrm "$STAGE/DEBIAN/"
# The hub's bundle goes to its own package.
HUB=$(mktemp -d)
trap 'rm -rf "$STAGE" "$HUB"' EXIT
chmod 0755 "$HUB"
install -d "$HUB/opt/wattshift/dist/chunks" "$HUB/usr/share/doc/wattshift-hub" "$HUB/DEBIAN"
mv "$app"/dist/hub.js* "$HUB/opt/wattshift/dist/"
mv "$app"/dist/chunks/hub-* "$HUB/opt/wattshift/dist/chunks/"
install -m 0644 "$SRC/docs/fleet.md" "$SRC/config.hub.example.yaml" "$HUB/usr/share/doc/wattshift-hub/"
cat > "$HUB/DEBIAN/control" <<CONTROL
Package: wattshift-hub
Version: $VERSION
Architecture: $ARCH
Maintainer: wattshift maintainers <wattshift@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$HUB" | cut -f1)
Depends: wattshift (= $VERSION)
Section: misc
Priority: optional
Description: partner-side fleet hub for wattshift gateways
 Holds the Energy Coordination API credentials for a fleet of wattshift
 gateways in fleet mode, fans out API events to them over MQTT and relays
 their reports; runs as \`wattshift hub\` on PostgreSQL and an MQTT 5 broker.
CONTROL
hub_deb="$OUT/wattshift-hub_${VERSION}_${ARCH}.deb"
dpkg-deb --root-owner-group --build "$HUB" "$hub_deb" >/dev/null
echo "$hub_deb"

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
