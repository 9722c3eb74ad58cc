#!/usr/bin/env bash
# `npm run package`: builds the .debs for this machine's architecture (the SQLite addon is
# native) with dpkg-deb, and prints their paths, the gateway's last:
#   wattshift-hub_*.deb  the partner's fleet hub (`wattshift hub`, docs/fleet.md): its bundle,
#                        dist/hub.js, beside the gateway's in /opt/wattshift; needs the same
#                        version of wattshift, whose command loads it.
#   wattshift-sim_*.deb  the API sandbox, the device simulators and the demo (`wattshift
#                        sandbox|sim|demo`), to try a home without hardware: dist/sim.js, the
#                        same way.
#   wattshift_*.deb      the gateway: the program in /opt/wattshift with its production
#                        dependencies, the `wattshift` command, the systemd unit and the
#                        documentation; postinst creates the user and the directories
#                        (packaging/setup-host.sh, the same as scripts/install.sh).
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
# The hub's and the simulation's bundles go to packages of their own, which need this version of
# the gateway's (whose command loads them).
PARTS=$(mktemp -d)
trap 'rm -rf "$STAGE" "$PARTS"' EXIT
# part_deb NAME BUNDLE DESCRIPTION DOC...: moves dist/BUNDLE.js and chunks/BUNDLE-* out of the
# gateway's stage into package NAME, builds it and prints its path.
part_deb() {
  local name=$1 bundle=$2 description=$3 root="$PARTS/$1"
  shift 3
  install -d -m 0755 "$root" "$root/opt/wattshift/dist/chunks" "$root/usr/share/doc/$name" "$root/DEBIAN"
  mv "$app/dist/$bundle.js"* "$root/opt/wattshift/dist/"
  mv "$app/dist/chunks/$bundle-"* "$root/opt/wattshift/dist/chunks/"
  install -m 0644 "$@" "$root/usr/share/doc/$name/"
  cat > "$root/DEBIAN/control" <<CONTROL
Package: $name
Version: $VERSION
Architecture: $ARCH
Maintainer: wattshift maintainers <wattshift@localhost>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: wattshift (= $VERSION)
Section: misc
Priority: optional
Description: $description
CONTROL
  local out="$OUT/${name}_${VERSION}_${ARCH}.deb"
  dpkg-deb --root-owner-group --build "$root" "$out" >/dev/null
  echo "$out"
}
part_deb wattshift-hub hub "partner-side fleet hub for wattshift gateways
 Holds the Energy Coordination API credentials for a fleet of wattshift
 gateways in fleet mode, fans out API events to them over MQTT and relays
 their reports; runs as \`wattshift hub\` on PostgreSQL and an MQTT 5 broker." \
  "$SRC/docs/fleet.md" "$SRC/config.hub.example.yaml"
part_deb wattshift-sim sim "API sandbox, device simulators and demo for wattshift
 A local stand-in for the Energy Coordination API and its forecast service,
 simulated tanks, chargers, meters and rooms, and the demo home; to try
 wattshift without hardware (\`wattshift sandbox|sim|demo\`)." \
  "$SRC/docs/sandbox.md" "$SRC/docs/simulators.md"

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
