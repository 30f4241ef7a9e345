#!/bin/sh
# A Debian 12 base image made from Debian's own packages: debootstrap into a folder, then
# `podman import`. For machines that reach a Debian mirror but no container registry; anywhere
# else the Containerfile's default base (debian:bookworm-slim) does the same job.
#
#   deploy/base-image.sh [TAG]      (default localhost/sandlot-base:bookworm; run as root)
#
# The mirror and the apt sources come from this host's own apt configuration, so the image
# installs the same package versions a bare-metal `make setup` on this host gets.
set -eu

tag=${1:-localhost/sandlot-base:bookworm}
work=$(mktemp -d /var/tmp/sandlot-base.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The first non-security Debian archive this host's apt uses (deb822 or one-line format).
mirror=$(
  { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}'
    grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
      sed 's/\[[^]]*\]//' | awk '{print $2}'; } | grep -v security | head -n 1
)
[ -n "$mirror" ] || { echo "no Debian mirror in this host's apt sources" >&2; exit 1; }

debootstrap --variant=minbase bookworm "$work/root" "$mirror" >"$work/log" 2>&1 ||
  { tail -n 30 "$work/log" >&2; exit 1; }
# The host's sources (the release's updates and security suites too) when it runs Debian 12.
if grep -qs 'VERSION_CODENAME=bookworm' /etc/os-release; then
  rm -f "$work/root/etc/apt/sources.list"
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && grep -qs bookworm "$f" && cp "$f" "$work/root$f"
  done
fi
rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"*
tar -C "$work/root" --numeric-owner -cf - . |
  podman import --quiet --change 'CMD ["/bin/bash"]' - "$tag" >/dev/null
echo "$tag"
