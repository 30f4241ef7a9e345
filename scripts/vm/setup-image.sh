#!/bin/sh
# The VM test's disk: the base root filesystem from build-image.sh, with a copy of the repository
# in /root/sandlot and its `make setup` run there, natively, in a chroot; written out as a raw
# ext4 disk. Under emulation the same set-up takes many times longer (see docs/development.md); in the guest
# `make serve` then finds everything installed, checks it, and serves.
#
# usage: setup-image.sh BASE_DIR REPO_TARBALL DISK [LANGUAGES]    (LANGUAGES: python,cpp)
# Run as root.
set -eu

base=$1
tarball=$2
disk=$3
languages=${4:-python,cpp}

root=$disk.rootfs
rm -rf "$root"
cp -a "$base/rootfs" "$root"
mkdir -p "$root/root/sandlot"
tar -x -C "$root/root/sandlot" -f "$tarball"
cp /etc/resolv.conf "$root/etc/resolv.conf"  # the host's DNS while the chroot runs
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"  # start no service in a chroot
chmod +x "$root/usr/sbin/policy-rc.d"

# A mount namespace of its own: whatever the set-up leaves mounted goes with it.
unshare --mount --propagation private sh -eu -c '
    root=$1
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LANG=C.UTF-8 SANDLOT_LANGUAGES="$2" make -C /root/sandlot setup
' set-up "$root" "$languages" >"$disk.setup.log" 2>&1 || {
    tail -n 40 "$disk.setup.log" >&2
    exit 1
}

rm -f "$root/usr/sbin/policy-rc.d"
echo 'nameserver 10.0.2.3' >"$root/etc/resolv.conf"  # qemu's user-mode DNS
truncate -s 20G "$disk"
mkfs.ext4 -q -F -d "$root" "$disk"
rm -rf "$root"
