# SPDX-License-Identifier: Apache-2.0
# Shared by the repository's bash scripts (sourced, never run): installing
# missing host packages, running a command in a Debian root inside a private
# mount namespace, cache entries made atomically, debootstrap, bounded waits
# for a condition, and the pass/fail tally of a test that boots a VM.
# The caller has `set -euo pipefail`. Guest scripts (busybox sh) cannot source
# it and keep their own small helpers.
# shellcheck shell=bash

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {  # command...
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Cleanup commands run, last registered first, when the script exits; one
# EXIT trap for all of them, so helpers and callers do not replace each other's
# (a script that uses cache_entry registers its own cleanup here, never with
# `trap ... EXIT`).
common_exit_commands=()
on_exit() {  # command...
  common_exit_commands+=("$(printf '%q ' "$@")")
  trap common_run_exit_commands EXIT
}
common_run_exit_commands() {
  local i
  for ((i = ${#common_exit_commands[@]} - 1; i >= 0; i--)); do eval "${common_exit_commands[i]}" || true; done
}

# Installs the Debian packages of the list that are missing (nothing when all
# are there, so it is cheap to call at every start). --recommends also
# installs what they recommend.
need_packages() {  # [--recommends] package...
  local p missing=() recommends=(--no-install-recommends)
  if [ "${1:-}" = --recommends ]; then recommends=(); shift; fi
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "installing: ${missing[*]}" >&2
  # Bounded: another apt client holding the lock for 2 minutes fails the
  # caller with apt's own message instead of stalling a CI stage; a transient
  # mirror error is retried.
  as_root apt-get -o Acquire::Retries=3 -o DPkg::Lock::Timeout=120 update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 -o Acquire::Retries=3 install -y -qq \
    ${recommends[@]+"${recommends[@]}"} "${missing[@]}" >/dev/null
}

# Prints a TCP port on 127.0.0.1 that nothing listens on now (the kernel's
# choice for a bind to port 0), for a test's private server; several suites
# run side by side on this machine, so a port derived from the pid can collide.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The Debian mirror roots and source downloads use: $DEBIAN_MIRROR, else the
# one this machine's apt uses (deb822 or one-line sources, read from
# $APT_SOURCES), else https://deb.debian.org/debian.
debian_mirror() {
  local mirror
  # shellcheck disable=SC2086 # a list of paths
  mirror=$(grep -rhoE '(URIs:|^deb) +https?://[^ ]+/debian/?( |$)' ${APT_SOURCES:-/etc/apt/sources.list /etc/apt/sources.list.d/} 2>/dev/null \
    | grep -oE "https?://[^ ]+" | head -1 || true)
  echo "${DEBIAN_MIRROR:-${mirror:-https://deb.debian.org/debian}}"
}

# debootstraps a minbase root of SUITE for ARCH into DEST from the host's
# mirror ($DEBIAN_MIRROR, else the host's, else https://deb.debian.org/debian),
# every Release file checked against Debian's archive keyring
# ($DEBIAN_KEYRING), its output in LOG (the last lines repeated on failure). Options:
# --components LIST (default main), --include PACKAGE,... .
debootstrap_root() {  # arch suite dest log [--components LIST] [--include LIST]
  local arch=$1 suite=$2 dest=$3 log=$4 components=main include="" mirror
  local keyring=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}
  shift 4
  while (($#)); do
    case "$1" in
      --components) components=$2; shift 2 ;;
      --include) include=$2; shift 2 ;;
      *) echo "debootstrap_root: unknown option $1" >&2; return 64 ;;
    esac
  done
  mirror=$(debian_mirror)
  # Every Release file must carry a signature by a key of Debian's archive
  # keyring (--force-check-gpg: no keyring or no signature is an error, not a warning).
  [ -s "$keyring" ] || { echo "debootstrap: no $keyring (apt-get install debian-archive-keyring)" >&2; return 1; }
  echo "debootstrap: $suite $arch ${include:+(+ $include) }from $mirror, signatures checked against $keyring; log $log" >&2
  local attempt
  for attempt in 1 2; do
    # dpkg inside the new root writes without fsync while it is being made
    # (a root that is cut off half-way is never used: cache_entry); the
    # setting is removed again, so the finished root behaves as Debian's.
    # (The callers run as root: debootstrap needs it.)
    mkdir -p "$dest/etc/dpkg/dpkg.cfg.d"
    echo force-unsafe-io >"$dest/etc/dpkg/dpkg.cfg.d/zz-ambient-build-unsafe-io"
    if as_root debootstrap --variant=minbase --arch="$arch" --components="$components" --keyring="$keyring" --force-check-gpg \
        ${include:+--include="$include"} "$suite" "$dest" "$mirror" >"$log" 2>&1; then
      rm -f "$dest/etc/dpkg/dpkg.cfg.d/zz-ambient-build-unsafe-io"
      return 0
    fi
    tail -30 "$log" >&2
    # One more try from nothing: a mirror's transient error should not fail a whole run.
    [ "$attempt" = 2 ] || { echo "debootstrap: failed; trying once more" >&2; as_root rm -rf --one-file-system "$dest"; }
  done
  return 1
}

# Makes the cache entry DEST once: when DEST/MARKER exists it is complete and
# nothing is done; otherwise MAKER ARGS... DEST.tmp.PID runs and the directory
# is renamed to DEST only when it succeeded, so a half-made entry is never
# used (and is removed when the script exits). Older entries matching
# --replaces GLOB go once the new one is in place.
cache_entry() {  # dest marker [--replaces GLOB] maker args...
  # (The fd's name is unusual on purpose: the maker runs inside this function
  # and sees its locals, and a caller's maker may well use $lock.)
  local dest=$1 marker=$2 tmp old replaces="" t0 cache_entry_lock_fd
  shift 2
  if [ "${1:-}" = --replaces ]; then replaces=$2; shift 2; fi
  [ ! -e "$dest/$marker" ] || return 0
  # One maker per entry: a second caller (another CI stage running beside)
  # waits for the first and then finds the entry complete. The lock is held
  # on an fd of this shell until it exits.
  exec {cache_entry_lock_fd}>>"$dest.lock"
  flock "$cache_entry_lock_fd"
  [ ! -e "$dest/$marker" ] || return 0
  tmp="$dest.tmp.$$"
  rm -rf "$tmp"
  on_exit rm -rf "$tmp"
  t0=$(date +%s)
  "$@" "$tmp"
  [ -e "$tmp/$marker" ] || { echo "cache: $* made no $marker" >&2; return 1; }
  rm -rf "$dest"
  mv "$tmp" "$dest"
  if [ -n "$replaces" ]; then
    for old in $replaces; do
      case "$old" in *.tmp.*|*.lock|"$dest") ;; *) rm -rf "$old" ;; esac
    done
  fi
  echo "cache: $(basename "$dest") made in $(( $(date +%s) - t0 )) s" >&2
}

# Runs COMMAND chrooted in the Debian root ROOT inside a private mount
# namespace: nothing mounted outlives it and the root is not changed by the
# mounts. Always /proc and /dev; --sys mounts sysfs, --tmpfs DIR a fresh tmpfs,
# --bind SRC:DIR[:ro] the host's SRC at DIR (made if missing), --resolv the
# host's resolv.conf over the root's own, in the order given. The command gets
# a clean environment: PATH, HOME=/root, LANG=C.UTF-8,
# DEBIAN_FRONTEND=noninteractive, then each --env NAME=VALUE (later wins).
# Needs root; an arm64 root runs through qemu-user.
in_root() {  # root [--sys] [--tmpfs DIR]... [--bind SRC:DIR[:ro]]... [--resolv] [--env N=V]... -- command...
  local root=$1 mounts=() envs=()
  shift
  while (($#)); do
    case "$1" in
      --sys|--resolv) mounts+=("${1#--}"); shift ;;
      --tmpfs) mounts+=("tmpfs:$2"); shift 2 ;;
      --bind) mounts+=("bind:$2"); shift 2 ;;
      --env) envs+=("$2"); shift 2 ;;
      --) shift; break ;;
      *) break ;;
    esac
  done
  (($#)) || { echo "in_root: no command" >&2; return 64; }
  # shellcheck disable=SC2016 # the inner script expands its own arguments
  unshare --mount --propagation private -- /bin/bash -euo pipefail -c '
    r=$1 n=$2; shift 2
    mount -t proc proc "$r/proc"
    mount --rbind /dev "$r/dev"
    for ((i = 0; i < n; i++)); do
      m=$1; shift
      case "$m" in
        sys) mount -t sysfs sysfs "$r/sys" ;;
        resolv)
          if [ -f "$r/etc/resolv.conf" ] && [ -f /etc/resolv.conf ] && [ ! -L "$r/etc/resolv.conf" ]; then
            mount --bind /etc/resolv.conf "$r/etc/resolv.conf"
          fi ;;
        tmpfs:*) mount -t tmpfs tmpfs "$r${m#tmpfs:}" ;;
        bind:*)
          IFS=: read -r src dir mode <<<"${m#bind:}"
          mkdir -p "$r$dir"
          mount --bind "$src" "$r$dir"
          if [ "$mode" = ro ]; then mount -o remount,bind,ro "$r$dir"; fi ;;
      esac
    done
    exec chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"' in-root \
    "$root" "${#mounts[@]}" ${mounts[@]+"${mounts[@]}"} ${envs[@]+"${envs[@]}"} "$@"
}

# Waits until COMMAND succeeds, at most SECONDS; on timeout says what it
# waited for (DESCRIPTION) on stderr and fails. For conditions that offer no
# event to wait on; prefer the event (mosquitto_sub -W, wait_for_line, wait).
wait_for() {  # seconds description command...
  local seconds=$1 what=$2 deadline
  shift 2
  deadline=$(( $(date +%s) + seconds ))
  until "$@"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "timed out after $seconds s waiting for $what" >&2
      return 1
    fi
    sleep 0.2
  done
}

# Waits, at most SECONDS, for a line matching the extended regex PATTERN in
# FILE (already there or appended later), following the file as it grows
# (tail -f, no polling); with PID, gives up as soon as that process ends.
wait_for_line() {  # seconds file pattern [pid]
  local seconds=$1 file=$2 pattern=$3 pid=${4:-}
  # tail's own status (killed by timeout, or ended with PID) is not the answer; grep's is.
  { timeout "$seconds" tail -n +1 -F ${pid:+--pid="$pid"} "$file" 2>/dev/null || true; } | grep -qE -m1 -- "$pattern"
}

# The pass/fail tally of a test suite whose checks run on the host and in VMs.
# PREFIX starts every line ("HIL", "IMAGE").
tally_passed=0
tally_failed=0
tally_started=$(date +%s)
tally_pass() {  # prefix label what
  echo "$1 PASS [$2] $3"
  tally_passed=$((tally_passed + 1))
}
tally_fail() {  # prefix label what [why]
  echo "$1 FAIL [$2] $3${4:+: $4}"
  tally_failed=$((tally_failed + 1))
}

# Adds a VM's result to the tally: prints its check lines from RESULTS and
# adds the counts of its "PREFIX RESULT [LABEL] N passed, N failed" line. No
# such line (a VM that did not boot or finish) is a failure, shown with the
# end of the console log CONSOLE; failed checks show the console too.
tally_vm() {  # prefix label results console why-no-result
  local prefix=$1 label=$2 results=$3 console=$4 why=$5 result
  tr -d '\r' <"$results" | grep -E "^$prefix (PASS|FAIL|INFO|BENCH|BOOTED)" || true
  result=$(tr -d '\r' <"$results" \
    | sed -n "s/^$prefix RESULT \[$label\] \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p" | tail -1)
  if [ -z "$result" ]; then
    tally_fail "$prefix" "$label" vm "no result from the VM ($why); last console lines:"
    tail -n 40 "$console" | tr -d '\r' | sed 's/^/    /'
    return
  fi
  tally_passed=$((tally_passed + ${result% *}))
  tally_failed=$((tally_failed + ${result#* }))
  if [ "${result#* }" != 0 ]; then
    echo "--- [$label] console (the failures are above)"
    tr -d '\r' <"$console" | grep -vE "^$prefix (PASS|INFO)" | tail -n 60 | sed 's/^/    /'
  fi
}

# The last line of every such suite: "N passed, N failed"; fails unless
# something passed and nothing failed.
tally_finish() {  # name
  echo "$1: wall time $(( $(date +%s) - tally_started )) s" >&2
  echo "$tally_passed passed, $tally_failed failed"
  [ "$tally_failed" -eq 0 ] && [ "$tally_passed" -gt 0 ]
}

# The "N passed, N failed" line of a `swift test` run from its LOG and exit
# STATUS: swift-testing's per-test verdicts (a parameterised test counts once);
# a run that failed without a failed test (a build error, a crash) counts one
# failure. Returns non-zero unless the run passed.
swift_test_tally() {  # log status
  local passed failed
  # The run's own summary when it passed (an optimised bundle's console
  # output can miss per-test lines, the summary counts every test); else each
  # test's verdict line.
  passed=$(sed -n 's/^✔ Test run with \([0-9]*\) tests\{0,1\}\( in [0-9]* suites\{0,1\}\)\{0,1\} passed after.*/\1/p' "$1" | tail -1)
  if [ -z "$passed" ] || [ "$2" -ne 0 ]; then
    passed=$(grep -aE '^✔ Test .* passed after' "$1" | grep -acv '^✔ Test run with' || true)
  fi
  failed=$(grep -aE '^✘ Test .* failed after' "$1" | grep -acv '^✘ Test run with' || true)
  if [ "$2" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  echo "$passed passed, $failed failed"
  [ "$2" -eq 0 ] && [ "$failed" -eq 0 ]
}
