# SPDX-License-Identifier: Apache-2.0
# Shared by board/image/rootfs and board/image/build (sourced): the image's
# use of scripts/lib/common.sh.
# shellcheck shell=bash
# shellcheck source=../../scripts/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/common.sh"

# Runs a command chrooted in an arm64 root (through qemu-user on amd64), with
# private /proc, /sys, /dev, /tmp and /run that vanish with the namespace.
image_in_root() {  # root, command...
  local r=$1; shift
  in_root "$r" --sys --tmpfs /tmp --tmpfs /run -- "$@"
}

# The host tools the build needs.
image_host_tools() {
  need_packages debootstrap debian-archive-keyring mtools dosfstools fdisk e2fsprogs xz-utils jq device-tree-compiler \
    qemu-user-static binfmt-support
}

# The Debian mirror of the image: debian_mirror's, with deb.debian.org taken
# over https (the image has ca-certificates; every Release file is checked
# against Debian's keyring either way, https also keeps the download private).
image_mirror() {
  local mirror
  mirror=$(debian_mirror)
  case "$mirror" in http://deb.debian.org/*) mirror="https://${mirror#http://}" ;; esac
  echo "$mirror"
}

# The manifest of an image's inputs, written beside it: the speaker's .deb and
# its sha256, the Debian mirror and the keyring its Release files were checked
# against, and every package in the root with its version (dpkg's database).
image_manifest() {  # root deb mirror [apt_url]
  local root=$1 deb=$2 mirror=$3 apt_url=${4:-}
  local keyring=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
  echo "# The inputs of this ambient-speaker image (board/image/build)."
  echo "speaker-deb: $(basename "$deb") sha256 $(sha256sum <"$deb" | cut -d' ' -f1)"
  echo "debian-mirror: $mirror"
  echo "debian-keyring: $keyring sha256 $(sha256sum <"$keyring" | cut -d' ' -f1)"
  echo "update-repository: ${apt_url:-none}"
  echo "packages:"
  dpkg-query --admindir="$root/var/lib/dpkg" -W -f='  ${Package} ${Version} ${Architecture}\n' | LC_ALL=C sort
}
