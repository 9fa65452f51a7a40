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
  need_packages debootstrap mtools dosfstools fdisk e2fsprogs xz-utils jq device-tree-compiler \
    qemu-user-static binfmt-support
}
