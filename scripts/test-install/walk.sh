#!/bin/bash
# The installer's walk of docs/install.md inside the test VM (scripts/test-install/run.ts copies it
# in with the packages and the home's config; wattshift-walk.service starts it once the machine
# has booted). Every command the docs give is run as they give it, by alice, a user with sudo,
# through the function doc (run.ts checks that each command given to it is in docs/install.md);
# other commands of hers go through as_alice. Each step
# is bounded and reports on the second serial port:
#   STEP <phase>/<name> PASS|FAIL <seconds>s [why]
# The walk spans a reboot: the phase is kept in $STATE. It ends with WALK DONE and powers off.
set -u
PAYLOAD=/usr/local/lib/wattshift-walk
STATE=/var/lib/wattshift-walk
LOGS=$STATE/logs
mkdir -p "$STATE" "$LOGS"
[ -c /dev/ttyS1 ] && exec >/dev/ttyS1 2>&1
export PAYLOAD STATE LOGS
phase=$(cat "$STATE/phase" 2>/dev/null || echo 1)
failed=0

# Runs a command as alice, in her home (where she put the packages); doc: one the docs give.
as_alice() { runuser -u alice -- bash -c "cd ~ && $1" </dev/null; }
# The docs' commands get a user's answer to a question: apt asks before it removes or downgrades.
doc() { { yes 2>/dev/null || true; } | runuser -u alice -- bash -c "cd ~ && $1"; }
# Waits up to $1 seconds for a TCP port on 127.0.0.1 to accept.
port_open() { timeout "$1" bash -c "until (exec 3<>/dev/tcp/127.0.0.1/$2) 2>/dev/null; do sleep 1; done"; }
# Waits up to $1 seconds for the service to be active.
service_active() { timeout "$1" bash -c 'until systemctl is-active --quiet wattshift; do sleep 1; done'; }
# The registration and database `wattshift status --json` reports, as one line.
status_facts() { as_alice 'sudo wattshift status --json' | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);console.log(JSON.stringify({database:r.database,registration:r.registration}))})'; }
# Says why a step fails; each step runs with set -e, so `check || why ...` ends it there.
why() { echo "WHY $*"; return 1; }
export -f as_alice doc port_open service_active status_facts why

# step NAME SECONDS FUNCTION: runs FUNCTION bounded, its output indented, and reports.
step() {
  local name="$phase/$1" limit=$2 fn=$3 t0 t1 rc out
  echo "BEGIN $name"
  t0=$(date +%s.%N)
  timeout --kill-after=10 "$limit" bash -c "set -eo pipefail; $fn" >"$LOGS/${1}.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  sed 's/^/    | /' "$LOGS/${1}.log"
  out=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  if [ "$rc" = 0 ]; then
    echo "STEP $name PASS ${out}s"
  else
    local reason
    reason=$(grep '^WHY ' "$LOGS/${1}.log" | tail -n 1 | cut -c5-)
    [ "$rc" = 124 ] && reason="timed out after ${limit}s"
    echo "STEP $name FAIL ${out}s ${reason:-exit $rc}"
    failed=$((failed + 1))
  fi
}

s_booted() { systemctl is-system-running --wait || { systemctl --failed --no-legend; why "is-system-running: $(systemctl is-system-running)"; }; }
s_peers() {
  # Mosquitto from Debian's package; the API sandbox and a simulated tank from wattshift-sim's.
  systemctl enable --now mosquitto && port_open 60 1883 || why "mosquitto is not listening on 1883"
  dpkg-query -W -f='${Status}' wattshift-sim 2>/dev/null | grep -q 'install ok installed' ||
    apt-get install -y -q "$PAYLOAD"/wattshift-sim_*.deb || why "wattshift-sim did not install"
  systemctl reset-failed ws-sandbox ws-tank 2>/dev/null || true
  systemd-run --unit=ws-sandbox --uid=alice --gid=alice wattshift sandbox --port 8080
  systemd-run --unit=ws-tank --uid=alice --gid=alice wattshift sim tank --port 5020
  # Node starts slowly on an emulated CPU, and more so beside the daemon starting at boot.
  port_open 300 8080 || { systemctl status --no-pager ws-sandbox; why "the sandbox is not listening on 8080"; }
  port_open 120 5020 || { systemctl status --no-pager ws-tank; why "the simulated tank is not listening on 5020"; }
}
s_install() {
  cp "$PAYLOAD/$1" ~alice/ && chown alice: ~alice/"$1"
  doc 'sudo apt install ./wattshift_*.deb' || why "apt install failed"
  rm ~alice/"$1"
  dpkg-query -W -f='${Status} ${Version}\n' wattshift | grep '^install ok installed' || why "wattshift is not installed"
  test -f /etc/wattshift/config.yaml || why "no /etc/wattshift/config.yaml"
}
s_configure() {
  # What sudoedit leaves behind: the home's config, and the secret with nothing else in the file.
  as_alice "sudo tee /etc/wattshift/config.yaml < $PAYLOAD/config.yaml > /dev/null"
  as_alice "printf local-secret | sudo tee /etc/wattshift/credentials/spark-client-secret > /dev/null"
  doc 'sudo wattshift check' | tee /tmp/check.out || why "check failed"
  grep -q '/etc/wattshift/config.yaml: ok' /tmp/check.out || why "check did not say ok"
  ! grep -q 'systemd is not running here' /tmp/check.out || why "the wrapper says systemd is not running"
}
s_register() { doc 'sudo wattshift register' || why "register failed"; }
s_enable() {
  doc 'sudo systemctl enable --now wattshift' || why "enable --now failed"
  service_active 60 || why "the service is not active"
  systemctl is-enabled wattshift | grep -qx enabled || why "the service is not enabled"
}
s_status() {
  # The daemon's status server answers once it runs; then a few control ticks for readings.
  port_open 240 8787 || { journalctl -u wattshift -n 40 --no-pager; why "the daemon's status server is not up"; }
  sleep 30
  doc 'sudo wattshift status' | tee /tmp/status.out || why "status failed"
  ! grep -q 'systemd is not running here' /tmp/status.out || why "the wrapper says systemd is not running"
  grep -q 'home-4711' /tmp/status.out || why "status does not show the registration"
  status_facts > "$STATE/facts" && cat "$STATE/facts"
}
s_journal() {
  doc 'sudo journalctl -u wattshift -p warning' 2>&1 | tee /tmp/journal.out
  ! grep -q 'not seeing messages from other users' /tmp/journal.out || why "alice cannot read the service's journal as the docs have her run it"
  grep -q 'wattshift' /tmp/journal.out || grep -q -- '-- No entries --' /tmp/journal.out || why "no journal shown"
  errors=$(journalctl -u wattshift -p err --no-pager -q | wc -l)
  [ "$errors" = 0 ] || why "$errors error lines in the service's journal"
}
s_discovery() {
  # The retained config messages arrive at once; a few tries give a slow machine time to publish.
  for _ in 1 2 3 4 5; do
    mosquitto_sub -h 127.0.0.1 -t 'homeassistant/#' -v -W 15 > /tmp/ha.out || true
    n=$(grep -c '^homeassistant/[^ ]*/config ' /tmp/ha.out || true)
    [ "$n" -gt 0 ] && break
  done
  cut -c1-200 /tmp/ha.out | head -n 20
  echo "$n config messages"
  [ "$n" -gt 0 ] || why "no Home Assistant config message on homeassistant/#"
}
s_back_after_reboot() {
  service_active 180 || why "the service is not active after the reboot"
  [ "$(systemctl show -p NRestarts --value wattshift)" = 0 ] || why "the service restarted after boot"
  port_open 120 8080 && port_open 120 5020 || why "the sandbox or the tank is not back"
  status_facts > /tmp/facts.after && cat /tmp/facts.after
  cmp -s "$STATE/facts" /tmp/facts.after || why "a different database or registration after the reboot: $(cat /tmp/facts.after)"
}
s_remove() {
  doc 'sudo apt remove wattshift' || why "apt remove failed"
  ! systemctl is-active --quiet wattshift || why "the service still runs"
  [ "$(systemctl is-enabled wattshift 2>/dev/null)" != enabled ] || why "the service is still enabled"
  ! test -e /usr/bin/wattshift || why "/usr/bin/wattshift is still there"
  test -f /etc/wattshift/config.yaml || why "remove took the config"
  test -f /var/lib/wattshift/wattshift.db || why "remove took the database"
}
s_upgrade() {
  # The previous release, running on the data this walk made, then the new package over it.
  s_install wattshift_previous.deb
  doc 'sudo systemctl enable --now wattshift' || why "enable --now failed with the previous version"
  # A previous release whose unit Debian 13's node cannot run under is said, not failed: the
  # upgrade is what must bring the service up.
  sleep 10
  if systemctl is-active --quiet wattshift; then before=$(systemctl show -p MainPID --value wattshift)
  else before=none; echo "the previous version does not run here: $(systemctl show -p Result --value wattshift)"; fi
  s_install "$(basename "$(ls "$PAYLOAD"/wattshift_*.deb | grep -v _previous)")"
  service_active 120 || why "the service is not active after the upgrade"
  after=$(systemctl show -p MainPID --value wattshift)
  [ "$before" != "$after" ] || why "the service was not restarted by the upgrade"
  dpkg-query -W -f='${Version}\n' wattshift
  status_facts > /tmp/facts.upgraded && cat /tmp/facts.upgraded
  cmp -s "$STATE/facts" /tmp/facts.upgraded || why "a different database or registration after the upgrade"
}
s_purge() {
  doc 'sudo apt purge wattshift' || why "apt purge failed"
  ! test -e /etc/wattshift || why "/etc/wattshift is still there"
  test -f /var/lib/wattshift/wattshift.db || why "purge took the database"
}
export -f s_booted s_peers s_install s_configure s_register s_enable s_status s_journal s_discovery s_back_after_reboot s_remove s_upgrade s_purge

echo "WALK PHASE $phase"
if [ "$phase" = 1 ]; then
  step booted 300 s_booted
  step install 600 "s_install $(basename "$(ls "$PAYLOAD"/wattshift_*.deb | grep -v _previous)")"
  step peers 480 s_peers
  step configure 300 s_configure
  step register 300 s_register
  step enable 300 s_enable
  step status 300 s_status
  step journal 120 s_journal
  step discovery 120 s_discovery
  echo 2 > "$STATE/phase"
  echo "$failed" > "$STATE/failed"
  echo "WALK REBOOT"
  sync
  systemctl reboot
  exit 0
fi
failed=$(cat "$STATE/failed" 2>/dev/null || echo 0)
step booted 300 s_booted
step peers 480 s_peers
step back-after-reboot 300 s_back_after_reboot
step remove 300 s_remove
step upgrade 900 s_upgrade
step purge 300 s_purge
echo 3 > "$STATE/phase"
echo "WALK DONE failed=$failed"
sync
systemctl poweroff
