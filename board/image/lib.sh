# SPDX-License-Identifier: Apache-2.0
# Shared by board/image/rootfs and board/image/build (sourced).
# shellcheck shell=bash

# Runs a command chrooted in an arm64 root (through qemu-user on amd64), with
# private /proc, /sys, /dev, /tmp and /run that vanish with the namespace.
image_in_root() {  # root, command...
  local r=$1; shift
  # shellcheck disable=SC2016 # the inner script expands its own arguments
  unshare --mount --propagation private -- /bin/bash -euo pipefail -c '
    r=$1; shift
    mount -t proc proc "$r/proc"; mount -t sysfs sysfs "$r/sys"
    mount --rbind /dev "$r/dev"; mount -t tmpfs tmpfs "$r/tmp"; mount -t tmpfs tmpfs "$r/run"
    exec chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
      DEBIAN_FRONTEND=noninteractive "$@"' in-root "$r" "$@"
}

# Makes DEST by calling MAKER DEST.tmp.PID, renaming it when MAKER succeeded
# (a half-made cache entry is never used).
image_build_atomically() {  # dest, maker, args...
  local dest=$1 tmp t0; shift
  tmp="$dest.tmp.$$"
  rm -rf "$tmp"
  # shellcheck disable=SC2064 # the path is fixed now
  trap "rm -rf '$tmp'" EXIT
  t0=$(date +%s)
  "$@" "$tmp"
  mv "$tmp" "$dest"
  trap - EXIT
  echo "image: $(basename "$dest") made in $(( $(date +%s) - t0 )) s" >&2
}

# Installs the host tools the build needs when missing.
image_host_tools() {
  local p missing=()
  for p in debootstrap mtools dosfstools fdisk e2fsprogs xz-utils jq device-tree-compiler qemu-user-static binfmt-support; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}
