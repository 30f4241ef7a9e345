#!/bin/sh
# The base of the VM test's guest (tests/vm/): a fresh Debian 12 root filesystem with systemd,
# made by debootstrap once per machine and cached. Prints the directory that holds it: rootfs/,
# vmlinuz, initrd.img and the root ssh key (id_ed25519). With --bare it also makes bare.raw, a
# disk of that root filesystem as it is (for a guest that sets everything up itself, under
# emulation). Run as root. Only Debian's packages are used.
#
# The cache is $SANDLOT_VM_CACHE (default /var/cache/sandlot-vm), keyed by a hash of this script
# and of the host's added CA certificates (the guest must trust them: HTTPS from it goes out
# through the host's path). Delete the directory to force a rebuild.
set -eu

CACHE=${SANDLOT_VM_CACHE:-/var/cache/sandlot-vm}
MIRROR=${SANDLOT_VM_MIRROR:-http://deb.debian.org/debian}
CA_DIR=/usr/local/share/ca-certificates
# What an installed Debian 12 has that the VM test relies on: systemd with logind sessions for
# ssh logins (dbus, libpam-systemd), a kernel, sshd; and make and python3, which a user brings
# to run `make serve`. The languages' own packages are left to `make serve`.
INCLUDE=systemd,systemd-sysv,dbus,libpam-systemd,linux-image-amd64,openssh-server,ca-certificates,make,python3

log() { echo "build-image: $*" >&2; }

# The host's tools, installed when missing: this script is how the VM test gets them.
missing=""
for pair in qemu-system-x86_64:qemu-system-x86 qemu-img:qemu-utils debootstrap:debootstrap \
            mkfs.ext4:e2fsprogs ssh:openssh-client; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing="$missing ${pair#*:}"
done
if [ -n "$missing" ]; then
    log "installing$missing"
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >&2
fi

key=$({ cat "$0"; cat "$CA_DIR"/*.crt 2>/dev/null || true; } | sha256sum | cut -c1-16)
out=$CACHE/$key
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9  # a second test run waits for the first one's build instead of racing it

if [ ! -f "$out/done" ]; then
    started=$(date +%s)
    # Images of older versions of this script and builds that were cut short, untouched for a
    # day (a test that is running may still use one).
    find "$CACHE" -mindepth 1 -maxdepth 1 -type d -mtime +0 -exec rm -rf {} +
    work=$CACHE/.build-$key
    rm -rf "$work"
    mkdir -p "$work"
    root=$work/rootfs
    log "debootstrap bookworm from $MIRROR (some minutes) ..."
    debootstrap --include="$INCLUDE" bookworm "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 || {
        tail -n 30 "$work/debootstrap.log" >&2
        exit 1
    }
    # What an installed system has and debootstrap does not make.
    echo sandlot-vm >"$root/etc/hostname"
    printf '127.0.0.1\tlocalhost\n127.0.1.1\tsandlot-vm\n' >"$root/etc/hosts"
    echo '/dev/vda / ext4 errors=remount-ro 0 1' >"$root/etc/fstab"
    cat >"$root/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
    mkdir -p "$root/etc/systemd/network"
    printf '[Match]\nName=en*\n\n[Network]\nDHCP=yes\n' >"$root/etc/systemd/network/10-en.network"
    chroot "$root" systemctl enable systemd-networkd >/dev/null 2>&1
    rm -f "$root/etc/resolv.conf"
    echo 'nameserver 10.0.2.3' >"$root/etc/resolv.conf"  # qemu's user-mode DNS
    if ls "$CA_DIR"/*.crt >/dev/null 2>&1; then
        cp "$CA_DIR"/*.crt "$root/usr/local/share/ca-certificates/"
        chroot "$root" update-ca-certificates >/dev/null 2>&1
    fi
    ssh-keygen -q -t ed25519 -N '' -f "$work/id_ed25519"
    install -d -m 700 "$root/root/.ssh"
    install -m 600 "$work/id_ed25519.pub" "$root/root/.ssh/authorized_keys"
    rm -f "$root"/var/cache/apt/archives/*.deb
    cp "$root/vmlinuz" "$work/vmlinuz"
    cp "$root/initrd.img" "$work/initrd.img"
    touch "$work/done"
    rm -rf "$out"
    mv "$work" "$out"
    log "built $out in $(($(date +%s) - started)) s"
fi

if [ "${1:-}" = "--bare" ] && [ ! -f "$out/bare.raw" ]; then
    truncate -s 20G "$out/bare.raw.new"
    mkfs.ext4 -q -F -d "$out/rootfs" "$out/bare.raw.new"
    mv "$out/bare.raw.new" "$out/bare.raw"
fi
echo "$out"
