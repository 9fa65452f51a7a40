# SPDX-License-Identifier: Apache-2.0
# Shared by the HIL entry points (Tests/HIL/run for x86-64, Tests/HIL/run-arm64),
# over scripts/lib/common.sh: staging an initramfs around one speaker binary,
# booting it under qemu and adding up the checks it prints on the serial
# console. Sourced, not run;
# the caller has `set -euo pipefail` and sets `here` (this directory), `work`
# (its build directory) and `hil_triplet` (the guest's multiarch triplet).
# shellcheck shell=bash disable=SC2154

# shellcheck source=../../scripts/lib/common.sh
. "$here/../../scripts/lib/common.sh"

# Finds library $2 the way the guest's loader will: in the multiarch and plain
# library directories of root $1. Prints the root-relative path.
hil_find_lib() {  # root, soname
  local d
  for d in "lib/$hil_triplet" "usr/lib/$hil_triplet" lib usr/lib; do
    [ -e "$1/$d/$2" ] && { echo "/$d/$2"; return 0; }
  done
  echo "hil: library $2 not found under $1" >&2
  return 1
}

# Copies an ELF executable to STAGE/DEST and, transitively, its program
# interpreter and every DT_NEEDED library, taken from ROOT (/ for the host's own
# architecture, a trixie root or sysroot for another) at their own paths. Reads
# the ELF headers with readelf, so it works for a foreign architecture too.
hil_copy_with_libs() {  # stage, root, binary, dest dir
  local stage=$1 root=$2 todo=("$3") seen=" " elf lib interp
  install -D -m 755 "$3" "$1/$4/$(basename "$3")" || return 1
  interp="$(readelf -lW "$3" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')"
  [ -z "$interp" ] || [ -e "$stage$interp" ] || install -D -m 755 "$(readlink -f "$root$interp")" "$stage$interp" \
    || return 1
  while ((${#todo[@]})); do
    elf=${todo[0]}; todo=("${todo[@]:1}")
    for lib in $(readelf -dW "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      case "$seen" in *" $lib "*) continue ;; esac
      seen="$seen$lib "
      lib="$(hil_find_lib "$root" "$lib")" || return 1
      [ -e "$stage$lib" ] || install -D -m 755 "$(readlink -f "$root$lib")" "$stage$lib" || return 1
      todo+=("$stage$lib")
    done
  done
}

# Makes the initramfs for one speaker build and prints its path. The tools
# (mosquitto, its clients, arecord, amixer), /usr/share/alsa and every library
# come from USERLAND, a root of the guest's architecture (/ on x86-64); busybox
# and hil-probe are static. LABEL names the build in every check line ("v1",
# "arm64-v2"); the guest checks that the speaker reports the libgpiod API the
# label ends with.
hil_initramfs() {  # label, speaker binary, userland root, busybox, hil-probe
  local label=$1 bin=$2 tools=$3 busybox=$4 probe=$5 stage t a
  stage="$(mktemp -d "$work/stage-$label.XXXXXX")"
  chmod 755 "$stage"  # mosquitto drops privileges: a 0700 root makes it fail ("denied by tcpd")
  mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,etc,tmp,proc,sys,dev,run,hil,usr/share}
  install -m 755 "$busybox" "$stage/bin/busybox" || return 1
  for a in $("$busybox" --list); do [ -e "$stage/bin/$a" ] || ln -s busybox "$stage/bin/$a"; done
  # Callers test this function in an `if`, where set -e is off: every step checks.
  hil_copy_with_libs "$stage" "$tools" "$bin" bin || return 1
  for t in usr/sbin/mosquitto usr/bin/mosquitto_sub usr/bin/mosquitto_pub usr/bin/arecord usr/bin/amixer; do
    hil_copy_with_libs "$stage" "$tools" "$tools/$t" bin || return 1
  done
  install -m 755 "$probe" "$stage/bin/hil-probe" && cp -a "$tools/usr/share/alsa" "$stage/usr/share/" || return 1
  # The schedule scenario's zone, from the userland's tzdata (clock.timeZone).
  install -D -m 644 "$tools/usr/share/zoneinfo/Europe/Berlin" "$stage/usr/share/zoneinfo/Europe/Berlin" || return 1
  printf 'root:x:0:0:root:/root:/bin/sh\nmosquitto:x:100:101::/tmp:/bin/false\nspeaker:x:1000:1000::/tmp:/bin/sh\nnobody:x:65534:65534::/tmp:/bin/false\n' > "$stage/etc/passwd"
  printf 'root:x:0:\naudio:x:29:\nmosquitto:x:101:\ngpio:x:997:\nspeaker:x:1000:\nnogroup:x:65534:\n' > "$stage/etc/group"
  printf '127.0.0.1 localhost\n' > "$stage/etc/hosts"
  install -m 755 "$here/guest/init" "$stage/init"
  install -m 755 "$here/guest/scenarios.sh" "$here/guest/mixer.sh" "$here/guest/latency.sh" "$here/guest/gpio-traces.sh" "$here/guest/led.sh" "$here/guest/schedule.sh" "$here/guest/as-speaker" "$stage/hil/"
  install -m 644 "$here"/guest/*.json "$stage/hil/"
  echo "$label" > "$stage/hil/variant"
  (cd "$stage" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initramfs-$label.cpio.gz" || return 1
  rm -rf "$stage"
  echo "$work/initramfs-$label.cpio.gz"
}

# Counts a check that failed on the host (a build, a VM that gave no result).
hil_host_fail() {  # label, what, why
  tally_fail HIL "$1" "$2" "$3"
}

# Boots one initramfs (the qemu command line follows the label), bounded by
# SECONDS, prints the guest's check lines and adds its result to the totals.
hil_boot() {  # label, seconds, qemu command...
  hil_start "$@"
  hil_wait "$1"
}

# hil_boot in two halves, so that several VMs can run at once: hil_start
# launches the VM in the background; hil_wait waits for it and then adds its
# result (in this shell, where the totals live).
declare -A hil_pids=() hil_t0=() hil_limit=()
hil_start() {  # label, seconds, qemu command...
  local label=$1 seconds=$2
  shift 2
  echo "hil: booting $label" >&2
  hil_t0[$label]=$(date +%s) hil_limit[$label]=$seconds
  rm -f "$work/qemu-exit-$label"
  ( qrc=0; timeout "$seconds" "$@" > "$work/console-$label.log" 2>&1 < /dev/null || qrc=$?
    echo "$qrc" > "$work/qemu-exit-$label" ) &
  hil_pids[$label]=$!
}
hil_wait() {  # label
  local label=$1 log="$work/console-$1.log" qrc
  wait "${hil_pids[$label]}" || true
  qrc=$(cat "$work/qemu-exit-$label" 2>/dev/null || echo "?")
  hil_gpio_traces "$label" "$log"
  tally_vm HIL "$label" "$log" "$log" "qemu exit $qrc, timeout ${hil_limit[$label]} s"
  echo "hil: $label VM ran $(( $(date +%s) - ${hil_t0[$label]} )) s" >&2
}

# Writes the gpio traces a VM printed (HIL_GPIO_TRACE=1: "HIL GPIOTRACE [label]
# name | line") to $work/gpio-traces/label/name.trace, one file per scenario.
hil_gpio_traces() {  # label, console log
  local dir="$work/gpio-traces/$1" lines="$work/gpio-traces-$1.lines" name
  tr -d '\r' < "$2" | sed -n "s/^HIL GPIOTRACE \[$1\] //p" > "$lines"
  [ -s "$lines" ] || { rm -f "$lines"; return 0; }
  rm -rf "$dir"; mkdir -p "$dir"
  sed -n 's/^\([^ ]*\) | .*/\1/p' "$lines" | sort -u | while read -r name; do
    sed -n "s/^$name | //p" "$lines" > "$dir/$name.trace"
  done
  rm -f "$lines"
  echo "hil: gpio traces of $1 in $dir: $(cd "$dir" && echo *.trace)" >&2
}

# The last line of every HIL run; fails unless something passed and nothing failed.
hil_finish() {
  tally_finish hil
}
