#!/usr/bin/env bash
# The VM's Debian root for `npm run test:install`, made once and cached: debootstrap of RELEASE
# from the mirror this machine's apt uses, with the packages the walk needs (the cache key is the
# release and the package list, so a second run skips debootstrap), then the settings of a headless
# test machine (fstab, hostname, no getty on the console, no apt timers, the docs' ordinary user),
# applied on every run so they can change without a new debootstrap.
#   make-root.sh CACHE_DIR        prints the root's path (CACHE_DIR/<release>-<key>/root)
set -euo pipefail
RELEASE=trixie
PACKAGES=systemd-sysv,udev,dbus,linux-image-amd64,initramfs-tools,e2fsprogs,sudo,adduser,tzdata,procps,nodejs,mosquitto,mosquitto-clients
CACHE=$1
key=$(printf '%s %s' "$RELEASE" "$PACKAGES" | sha256sum | cut -c1-16)
dir="$CACHE/$RELEASE-$key"
root="$dir/root"

# The mirror apt already uses here (deb822 URIs: or a one-line deb entry).
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list 2>/dev/null \
  | sed -n -e 's#^URIs:[[:space:]]*\(http[^[:space:]]*/debian\)/*$#\1#p' -e 's#^deb[[:space:]]\+\(http[^[:space:]]*/debian\)/*[[:space:]].*#\1#p' | head -n1 || true)
mirror=${mirror:-http://deb.debian.org/debian}

if [ ! -f "$dir/complete" ]; then
  rm -rf "$dir" && mkdir -p "$dir"
  echo "debootstrap $RELEASE from $mirror into $root (log: $dir/debootstrap.log)" >&2
  debootstrap --variant=minbase --include="$PACKAGES" "$RELEASE" "$root" "$mirror" >"$dir/debootstrap.log" 2>&1 \
    || { echo "debootstrap failed; its log: $dir/debootstrap.log" >&2; tail -n 20 "$dir/debootstrap.log" >&2; exit 1; }
  chroot "$root" apt-get clean
  ls "$root"/boot/vmlinuz-* "$root"/boot/initrd.img-* >/dev/null
  touch "$dir/complete"
fi

echo wattshift-vm > "$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 wattshift-vm\n' > "$root/etc/hosts"
echo '/dev/vda / ext4 defaults 0 1' > "$root/etc/fstab"
echo "deb $mirror $RELEASE main" > "$root/etc/apt/sources.list"
# The walk reports on the second serial port; nobody logs in on the console.
for unit in serial-getty@ttyS0.service getty@tty1.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer dpkg-db-backup.timer man-db.timer; do
  ln -sf /dev/null "$root/etc/systemd/system/$unit"
done
# The ordinary user the docs speak to: in sudo, with no password to type.
chroot "$root" id alice >/dev/null 2>&1 || chroot "$root" useradd --create-home --shell /bin/bash --groups sudo alice
echo 'alice ALL=(ALL) NOPASSWD: ALL' > "$root/etc/sudoers.d/alice" && chmod 0440 "$root/etc/sudoers.d/alice"
echo "$root"
