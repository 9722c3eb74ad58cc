#!/bin/sh
# Exposure level of the shipped unit by `systemd-analyze security` (offline: no running systemd
# needed). Prints the analyzer's summary line, then one JSON line {"systemdExposure": N | null}.
# Target: below 2.0 ("OK").
set -u
dir=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
unit="$dir/systemd/wattshift.service"
if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "systemd-analyze not found (apt-get install systemd); exposure not measured"
  echo '{"systemdExposure":null}'
  exit 0
fi
out=$(systemd-analyze security --offline=true --no-pager "$unit" 2>&1)
line=$(printf '%s\n' "$out" | grep 'Overall exposure level' | tail -n 1)
level=$(printf '%s\n' "$line" | sed -n 's/.*exposure level for [^:]*: \([0-9][0-9.]*\).*/\1/p')
if [ -z "$level" ]; then
  printf '%s\n' "$out" | tail -n 5
  echo "could not read the exposure level"
  echo '{"systemdExposure":null}'
  exit 0
fi
echo "$line"
echo "{\"systemdExposure\":$level}"
