#!/bin/sh
# Prepares the host for the service; shared by scripts/install.sh and the .deb's postinst. Safe to
# run again: every step checks what is there. Needs root. Never overwrites the operator's config
# or secret.
#   setup-host.sh PREFIX UNIT_FILE
set -eu
PREFIX=$1
UNIT=$2
CONF_DIR=/etc/wattshift
MIN_NODE=20.18.1

getent group wattshift >/dev/null || groupadd --system wattshift
getent passwd wattshift >/dev/null || useradd --system --gid wattshift --groups dialout \
  --home-dir /var/lib/wattshift --no-create-home --shell /usr/sbin/nologin wattshift

install -d -m 0750 -g wattshift "$CONF_DIR"
install -d -m 0700 "$CONF_DIR/credentials"
[ -f "$CONF_DIR/config.yaml" ] || install -m 0640 -g wattshift "$PREFIX/config.example.yaml" "$CONF_DIR/config.yaml"
[ -f "$CONF_DIR/credentials/spark-client-secret" ] || install -m 0600 /dev/null "$CONF_DIR/credentials/spark-client-secret"

# The unit names /usr/bin/node (Debian's nodejs); a Node installed elsewhere gets a drop-in.
NODE=$(command -v node || true)
dropin=/etc/systemd/system/wattshift.service.d/node.conf
if [ -n "$NODE" ] && [ "$NODE" != /usr/bin/node ]; then
  install -d -m 0755 "$(dirname "$dropin")"
  { echo '# Written by wattshift setup-host.sh: node is not at /usr/bin/node on this host.'
    echo '[Service]'
    echo 'ExecStart='
    sed -n "s#^ExecStart=/usr/bin/node #ExecStart=$NODE #p" "$UNIT"
  } > "$dropin"
else
  rm -f "$dropin"
fi
command -v systemctl >/dev/null && systemctl daemon-reload 2>/dev/null || true

if [ -z "$NODE" ]; then
  echo "wattshift: Node.js is not installed; it needs $MIN_NODE or newer (see /usr/share/doc/wattshift/install.md)" >&2
elif ! "$PREFIX/packaging/node-ok.sh" "$NODE"; then
  echo "wattshift: Node.js $("$NODE" --version) is too old; it needs $MIN_NODE or newer (Debian 12's nodejs is 18: see /usr/share/doc/wattshift/install.md)" >&2
fi
