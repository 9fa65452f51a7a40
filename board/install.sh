#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ambient-speaker installer for Raspberry Pi OS Lite 64-bit (Debian trixie,
# or bookworm with libgpiod 1.6). Run as root from a clone or next to a .deb:
#
#   sudo board/install.sh [--dac NAME]           install or update (idempotent)
#   sudo board/install.sh --uninstall [--purge]  remove (--purge: config, state, user too)
#
# It prefers, in this order:
#   a. the Debian package: --deb FILE, else an ambient-speaker_*_<arch>.deb next to this
#      script or in the repository's dist/ (the newest). apt installs it with its Depends
#      (a config you already have is kept); the package makes the user, the udev rule and
#      the state directory, and enables and starts the service (see docs/install.md, Debian package).
#   b. building from source with a Swift toolchain: --swift DIR, a `swift` already on the
#      PATH, Debian's `swiftlang` from apt (trixie has 6.0.3), and only where apt has none
#      (bookworm) the official swift.org release tarball for this architecture, checked with
#      swift.org's PGP keys (the signer must be the pinned Swift 6.x release key) and unpacked to /opt/swift-$SWIFT_VERSION; --binary FILE skips the
#      toolchain. Steps, each only when something is missing or different:
#   1. apt packages: libmosquitto, alsa-lib, libgpiod (-dev: the build links them), libsndfile, libsoxr,
#      alsa-utils, gpiod and mosquitto-clients for troubleshooting
#   2. the toolchain (above)
#   3. build: swift build -c release --static-swift-stdlib (the binary then needs no toolchain)
#   4. install: /usr/local/bin/ambient-speaker, /etc/systemd/system/ambient-speaker.service,
#      /etc/ambient-speaker/config.json (the default wiring; never overwritten),
#      /var/lib/ambient-speaker/sounds (drop WAV/FLAC/Ogg files here)
#   5. system user ambient-speaker in the groups gpio and audio (+ a udev rule giving gpio the chips)
#   6. systemctl enable --now (restart when the binary or unit changed); skipped without systemd
# Every way: with --dac NAME, the dtoverlay line for that DAC hat in config.txt with the
# onboard audio off (reboot to apply), audio.device set to the hat's card (when the config
# still says "default"), and the configuration is checked with `ambient-speaker check-config`.
#
# Options:
#   --dac NAME        hifiberry-dac | hifiberry-dacplus | hifiberry-amp | iqaudio-dacplus |
#                     iqaudio-digiampplus | justboom-dac | max98357a | allo-boss   (see board/config-txt.md)
#   --deb FILE        install this ambient-speaker .deb
#   --apt             install from the project's apt repository: its keyring in
#                     /usr/share/keyrings (Signed-By), a deb822 source in
#                     /etc/apt/sources.list.d, then apt-get install; apt upgrade updates it
#   --apt-url URL     the same from another repository (a mirror, a test)
#   --keyring FILE    with --apt/--apt-url: the repository's key (else fetched from URL)
#   --build           build from source even when a .deb is at hand
#   --binary FILE     install this prebuilt binary instead of building (skips the toolchain)
#   --swift DIR       use the toolchain in DIR (DIR/usr/bin/swift)
#   --source DIR      the source tree to build (default: this script's repository)
#   --no-start        install but do not enable/start the service
#   --uninstall       stop, disable and remove the package (or binary, unit, udev rule), the
#                     config.txt lines (the onboard audio back on) and the apt source
#   --purge           with --uninstall: also /etc/ambient-speaker, /var/lib/ambient-speaker and the user
#
# Environment: SWIFT_VERSION (default 6.3.1, the swift.org fallback), SWIFT_KEY_FINGERPRINT (the
# key its signature must come from: "Swift 6.x Release Signing Key"), CONFIG_TXT (default
# /boot/firmware/config.txt, else /boot/config.txt). Tested in a Debian bookworm root (source
# install, scripts/test-board-install) and in trixie roots (the .deb, Tests/Package/run).
set -euo pipefail

SWIFT_VERSION="${SWIFT_VERSION:-6.3.1}"
SWIFT_KEY_FINGERPRINT="${SWIFT_KEY_FINGERPRINT:-52BB7E3DE28A71BE22EC05FFEF80A866B47A981F}"
PREFIX=/usr/local
UNIT=/etc/systemd/system/ambient-speaker.service
STOP_GUARD=/etc/systemd/system/ambient-speaker-network-stop.service
CONFIG_DIR=/etc/ambient-speaker
STATE_DIR=/var/lib/ambient-speaker
UDEV_RULE=/etc/udev/rules.d/60-ambient-speaker-gpio.rules
USER_NAME=ambient-speaker
MARK_BEGIN="# >>> ambient-speaker DAC (board/install.sh) >>>"
MARK_END="# <<< ambient-speaker DAC <<<"
ONBOARD_OFF="# ambient-speaker: onboard audio off for the DAC hat"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="$(cd "$here/.." && pwd)"
dac="" binary="" swift_dir="" deb="" build=0 start=1 uninstall=0 purge=0
apt_url="" keyring=""
APT_URL_DEFAULT="https://ambient-speaker.github.io/apt"
APT_SOURCES=/etc/apt/sources.list.d/ambient-speaker.sources
APT_KEYRING=/usr/share/keyrings/ambient-speaker-archive-keyring.pgp

say() { printf '%s\n' "ambient-speaker install: $*"; }
die() { printf '%s\n' "ambient-speaker install: error: $*" >&2; exit 1; }

overlay_for() {
  case "$1" in
    hifiberry-dac) echo "dtoverlay=hifiberry-dac" ;;
    hifiberry-dacplus) echo "dtoverlay=hifiberry-dacplus" ;;
    hifiberry-amp) echo "dtoverlay=hifiberry-amp" ;;
    iqaudio-dacplus) echo "dtoverlay=iqaudio-dacplus" ;;
    iqaudio-digiampplus) echo "dtoverlay=iqaudio-dacplus,unmute_amp" ;;
    justboom-dac) echo "dtoverlay=justboom-dac" ;;
    max98357a) echo "dtoverlay=max98357a" ;;
    allo-boss) echo "dtoverlay=allo-boss-dac-pcm512x-audio" ;;
    *) return 1 ;;
  esac
}

# The ALSA card the hat's overlay makes (board/config-txt.md): audio.device.
card_for() {
  case "$1" in
    hifiberry-dac|hifiberry-dacplus|hifiberry-amp) echo "hw:CARD=sndrpihifiberry" ;;
    iqaudio-dacplus|iqaudio-digiampplus) echo "hw:CARD=IQaudIODAC" ;;
    justboom-dac) echo "hw:CARD=sndrpijustboomd" ;;
    max98357a) echo "hw:CARD=MAX98357A" ;;
    allo-boss) echo "hw:CARD=BossDAC" ;;
    *) return 1 ;;
  esac
}

while (($#)); do
  case "$1" in
    --dac) dac="${2:?--dac needs a NAME}"; shift 2 ;;
    --binary) binary="${2:?--binary needs a FILE}"; shift 2 ;;
    --deb) deb="${2:?--deb needs a FILE}"; shift 2 ;;
    --apt) apt_url="$APT_URL_DEFAULT"; shift ;;
    --apt-url) apt_url="${2:?--apt-url needs a URL}"; shift 2 ;;
    --keyring) keyring="${2:?--keyring needs a FILE}"; shift 2 ;;
    --build) build=1; shift ;;
    --swift) swift_dir="${2:?--swift needs a DIR}"; shift 2 ;;
    --source) source_dir="${2:?--source needs a DIR}"; shift 2 ;;
    --no-start) start=0; shift ;;
    --uninstall) uninstall=1; shift ;;
    --purge) purge=1; shift ;;
    -h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

[ "$(id -u)" -eq 0 ] || die "run as root (sudo $0 …)"
if [ -n "$dac" ] && ! overlay_for "$dac" >/dev/null; then
  die "--dac $dac: unknown; expected one of hifiberry-dac hifiberry-dacplus hifiberry-amp iqaudio-dacplus iqaudio-digiampplus justboom-dac max98357a allo-boss"
fi
[ -z "$binary" ] || [ -x "$binary" ] || die "--binary $binary: not an executable file"
[ -z "$deb" ] || [ -f "$deb" ] || die "--deb $deb: no such file"
[ -z "$deb" ] || ((build == 0)) || die "--deb and --build exclude each other"
[ -z "$apt_url" ] || [ -z "$deb" ] || die "--apt and --deb exclude each other"
[ -z "$keyring" ] || [ -n "$apt_url" ] || die "--keyring goes with --apt or --apt-url"
[ -z "$keyring" ] || [ -s "$keyring" ] || die "--keyring $keyring: no such file"
((purge == 0 || uninstall == 1)) || die "--purge goes with --uninstall"

systemd_running() { [ -d /run/systemd/system ]; }

config_txt() {
  if [ -n "${CONFIG_TXT:-}" ]; then echo "$CONFIG_TXT"
  elif [ -f /boot/firmware/config.txt ]; then echo /boot/firmware/config.txt
  else echo /boot/config.txt; fi
}

# Removes our marked block from config.txt (if any) and gives the onboard
# audio line back; prints whether it did.
remove_overlay_block() {
  local file; file="$(config_txt)"
  [ -f "$file" ] || return 0
  if grep -qF "$ONBOARD_OFF" "$file"; then
    sed -i "s|^#dtparam=audio=on $ONBOARD_OFF\$|dtparam=audio=on|" "$file"
    say "onboard audio back on in $file"
  fi
  grep -qF "$MARK_BEGIN" "$file" || return 0
  sed -i "\|^$MARK_BEGIN\$|,\|^$MARK_END\$|d" "$file"
  say "removed the DAC overlay lines from $file"
}

# install_file SRC DST MODE OWNER:GROUP — copies only when the content differs.
install_file() {
  local src="$1" dst="$2" mode="$3" owner="$4"
  if [ -f "$dst" ] && cmp -s "$src" "$dst"; then
    chmod "$mode" "$dst"; chown "$owner" "$dst"
    say "unchanged $dst"
    return 1
  fi
  install -D -m "$mode" -o "${owner%%:*}" -g "${owner##*:}" "$src" "$dst"
  say "installed $dst"
}

# With --dac: our marked block in config.txt (replaced when it differs): the
# hat's overlay and the onboard audio off (Raspberry Pi OS's own
# "dtparam=audio=on" is commented out, and given back by --uninstall). That
# turns off only the onboard headphone jack: HDMI audio stays wherever
# "dtoverlay=vc4-kms-v3d" provides it, so the hat is not the only sound card;
# audio.device, set to the hat's card, is what sends the speaker's sound there.
apply_dac() {
  [ -n "$dac" ] || return 0
  local file line block
  file="$(config_txt)"
  line="$(overlay_for "$dac")"
  block="$(printf '%s\n[all]\n%s\ndtparam=audio=off\n%s' "$MARK_BEGIN" "$line" "$MARK_END")"

  if [ -f "$file" ] && grep -qF "$MARK_BEGIN" "$file" && [ "$(sed -n "\|^$MARK_BEGIN\$|,\|^$MARK_END\$|p" "$file")" = "$block" ]; then
    say "unchanged $file ($line)"
  else
    if [ -f "$file" ]; then remove_overlay_block; fi
    mkdir -p "$(dirname "$file")"
    printf '%s\n' "$block" >>"$file"
    say "added '$line' to $file — reboot to load the overlay"
  fi
  if grep -q '^dtparam=audio=on$' "$file"; then
    sed -i "s|^dtparam=audio=on\$|#dtparam=audio=on $ONBOARD_OFF|" "$file"
    say "onboard audio (the headphone jack) off in $file; HDMI audio is left as it is"
  fi
  set_audio_device "$(card_for "$dac")"
}

# set_audio_device PCM: audio.device in the config, when it is still the
# shipped "default" or a hat's card set here before (a device chosen by hand
# is kept, and said so).
set_audio_device() {
  local pcm="$1" conf="$CONFIG_DIR/config.json"
  local ours='default|hw:CARD=(sndrpihifiberry|IQaudIODAC|sndrpijustboomd|MAX98357A|BossDAC)'
  [ -f "$conf" ] || return 0
  if grep -qF "\"device\": \"$pcm\"" "$conf"; then
    say "unchanged audio.device ($pcm)"
  elif grep -qE "^ *\"device\": \"($ours)\"," "$conf"; then
    sed -i -E "s/^( *)\"device\": \"($ours)\",/\1\"device\": \"$pcm\",/" "$conf"
    say "audio.device set to $pcm in $conf"
  else
    say "kept the audio.device of $conf (the hat's card is $pcm)"
  fi
}

package_state() { dpkg-query -W -f='${Status}' ambient-speaker 2>/dev/null || true; }

if ((uninstall)); then
  case "$(package_state)" in
    *" installed"|*" config-files")
      if ((purge)); then action=purge; else action=remove; fi
      say "apt-get $action ambient-speaker"
      DEBIAN_FRONTEND=noninteractive apt-get "$action" -y -qq ambient-speaker >/dev/null ;;
  esac
  if systemd_running && systemctl list-unit-files ambient-speaker.service >/dev/null 2>&1; then
    systemctl disable --now ambient-speaker.service 2>/dev/null || true
  fi
  for f in "$UNIT" "$STOP_GUARD" "$PREFIX/bin/ambient-speaker" "$UDEV_RULE"; do
    if [ -e "$f" ]; then rm -f "$f"; say "removed $f"; fi
  done
  if systemd_running; then systemctl daemon-reload; fi
  remove_overlay_block
  for f in "$APT_SOURCES" "$APT_KEYRING"; do
    if [ -e "$f" ]; then rm -f "$f"; say "removed $f"; fi
  done
  if ((purge)); then
    rm -rf "$CONFIG_DIR" "$STATE_DIR"
    say "removed $CONFIG_DIR and $STATE_DIR"
    if id "$USER_NAME" >/dev/null 2>&1; then deluser --quiet --system "$USER_NAME" >/dev/null 2>&1 || userdel "$USER_NAME"; say "removed user $USER_NAME"; fi
  else
    say "kept $CONFIG_DIR, $STATE_DIR and the user $USER_NAME (--purge removes them)"
  fi
  say "left the apt packages and any Swift toolchain in /opt in place"
  exit 0
fi

# The apt repository (--apt): its keyring (--keyring FILE, else the one the
# repository publishes) and a deb822 source with Signed-By, so that
# `apt update && apt upgrade` updates the speaker; then the package from it.
configure_apt() {
  local tmp; tmp="$(mktemp)"
  if [ -n "$keyring" ]; then cp "$keyring" "$tmp"
  elif command -v curl >/dev/null; then curl -fsSL "$apt_url/ambient-speaker-archive-keyring.pgp" -o "$tmp" || die "could not fetch $apt_url/ambient-speaker-archive-keyring.pgp"
  else wget -qO "$tmp" "$apt_url/ambient-speaker-archive-keyring.pgp" || die "could not fetch $apt_url/ambient-speaker-archive-keyring.pgp"; fi
  install_file "$tmp" "$APT_KEYRING" 0644 root:root || true
  printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
    "$apt_url" "${APT_SUITE:-trixie}" "$APT_KEYRING" >"$tmp"
  install_file "$tmp" "$APT_SOURCES" 0644 root:root || true
  rm -f "$tmp"
  say "apt-get update (with $apt_url)"
  apt-get update -qq || die "apt-get update failed (is $apt_url reachable, does the keyring match?)"
}
# apt_install PACKAGE-OR-FILE: the package and the troubleshooting tools;
# confold: a config.json that is already there (edited, or from a source
# install) is kept.
apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
    "$1" alsa-utils gpiod mosquitto-clients >/dev/null || die "apt-get install $1 failed"
}
# After the package is in: --no-start, the DAC, the config check; then exits.
package_installed() {
  if ((start == 0)) && systemd_running; then
    systemctl disable --now --quiet ambient-speaker.service
    say "service disabled and stopped (--no-start)"
  fi
  apply_dac
  /usr/bin/ambient-speaker check-config "$CONFIG_DIR/config.json" >/dev/null \
    || die "$CONFIG_DIR/config.json does not validate (ambient-speaker check-config $CONFIG_DIR/config.json)"
  say "configuration valid"
  if ! systemd_running; then say "systemd is not running here (a chroot?): the service starts at the next boot"; fi
  say "done"
  exit 0
}
if [ -n "$apt_url" ]; then
  configure_apt
  say "apt-get install ambient-speaker"
  apt_install ambient-speaker
  say "installed ambient-speaker $(dpkg-query -W -f='${Version}' ambient-speaker) from $apt_url (apt upgrade takes the next release)"
  package_installed
fi

# a. The Debian package, when one is given or at hand (and not --build/--binary/--swift).
arch="$(dpkg --print-architecture)"
if [ -z "$deb" ] && ((build == 0)) && [ -z "$binary" ] && [ -z "$swift_dir" ]; then
  best=""
  for f in "$here"/ambient-speaker_*_"$arch".deb "$source_dir"/dist/ambient-speaker_*_"$arch".deb; do
    [ -f "$f" ] || continue
    if [ -z "$deb" ] || dpkg --compare-versions "$(dpkg-deb -f "$f" Version)" gt "$best"; then
      deb="$f" best="$(dpkg-deb -f "$f" Version)"
    fi
  done
fi
if [ -n "$deb" ]; then
  deb="$(realpath "$deb")"
  deb_arch="$(dpkg-deb -f "$deb" Architecture)"
  [ "$deb_arch" = "$arch" ] || die "$deb is for $deb_arch, this system is $arch"
  deb_version="$(dpkg-deb -f "$deb" Version)"
  # A source install's files would shadow the package's (/etc over /usr/lib, /usr/local over /usr).
  for f in "$UNIT" "$STOP_GUARD" "$PREFIX/bin/ambient-speaker" "$UDEV_RULE"; do
    if [ -e "$f" ]; then rm -f "$f"; say "removed $f (from a source install; the package replaces it)"; fi
  done
  if [ "$(package_state) $(dpkg-query -W -f='${Version}' ambient-speaker 2>/dev/null || true)" = "install ok installed $deb_version" ]; then
    say "ambient-speaker $deb_version (package) already installed"
  else
    say "apt-get install $deb"
    apt-get update -qq
    apt_install "$deb"
    say "installed ambient-speaker $deb_version from $deb"
  fi
  package_installed
fi
case "$(package_state)" in
  *" installed") die "the ambient-speaker package is installed: update it with --deb FILE, or remove it first (--uninstall)" ;;
esac

# 1. Distribution and packages.
# shellcheck disable=SC1091
. /etc/os-release
codename="${VERSION_CODENAME:-unknown}"
case "$codename" in
  bookworm) gpiod_note="libgpiod 1.6" ;;
  trixie) gpiod_note="libgpiod 2.x" ;;
  *) die "$PRETTY_NAME ($codename): supported are Raspberry Pi OS / Debian bookworm and trixie" ;;
esac
say "$PRETTY_NAME ($codename, $gpiod_note), $(uname -m)"

packages=(libmosquitto-dev libasound2-dev libgpiod-dev libsndfile1-dev libsoxr-dev pkg-config
          alsa-utils gpiod mosquitto-clients adduser ca-certificates)
toolchain=""   # apt: Debian's swiftlang; swift.org: the release tarball
if [ -z "$binary" ] && [ -z "$swift_dir" ] && ! command -v swift >/dev/null; then
  apt-get update -qq
  candidate="$(apt-cache policy swiftlang 2>/dev/null | sed -n 's/^ *Candidate: //p')"
  if [ -n "$candidate" ] && [ "$candidate" != "(none)" ]; then toolchain=apt; else toolchain=swift.org; fi
fi
if [ -z "$binary" ]; then
  # Whatever the toolchain, a static-stdlib link needs the C runtime and libstdc++
  # (Debian's swiftlang only recommends them).
  packages+=(libc6-dev)
  case "$codename" in bookworm) packages+=(libgcc-12-dev libstdc++-12-dev) ;; trixie) packages+=(libgcc-14-dev libstdc++-14-dev) ;; esac
fi
if [ "$toolchain" = apt ]; then
  say "toolchain: Debian's swiftlang $candidate from apt"
  packages+=(swiftlang)
elif [ "$toolchain" = swift.org ]; then
  say "toolchain: apt has no swiftlang here; the swift.org $SWIFT_VERSION release"
  # What swift.org lists for its Debian 12 toolchain, plus the tools to fetch and check it.
  packages+=(binutils git gnupg libcurl4-openssl-dev libedit2 libpython3-dev libsqlite3-0
             libxml2-dev libz3-dev tzdata zlib1g-dev curl xz-utils)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  say "apt packages already installed"
fi

# 2–3. Toolchain and build (unless a binary was given).
if [ -z "$binary" ]; then
  if [ -n "$swift_dir" ]; then
    swift="$swift_dir/usr/bin/swift"
  elif command -v swift >/dev/null; then   # also Debian's swiftlang, just installed
    swift="$(command -v swift)"
  else
    case "$(uname -m)" in
      aarch64|arm64) platform=debian12-aarch64 ;;
      x86_64) platform=debian12 ;;
      *) die "no swift.org toolchain for $(uname -m); install Swift 6 yourself and pass --swift DIR" ;;
    esac
    name="swift-$SWIFT_VERSION-RELEASE-$platform"
    swift_dir="/opt/swift-$SWIFT_VERSION"
    if [ ! -x "$swift_dir/usr/bin/swift" ]; then
      url="https://download.swift.org/swift-$SWIFT_VERSION-release/$platform/swift-$SWIFT_VERSION-RELEASE/$name.tar.gz"
      work="$(mktemp -d)"
      say "downloading $url"
      curl -fsSL -o "$work/$name.tar.gz" "$url"
      curl -fsSL -o "$work/$name.tar.gz.sig" "$url.sig"
      curl -fsSL -o "$work/keys.asc" https://swift.org/keys/all-keys.asc
      GNUPGHOME="$work/gnupg" && export GNUPGHOME && mkdir -m 700 "$GNUPGHOME"
      gpg --quiet --import "$work/keys.asc"
      # The signature must verify AND be made by the pinned key: the keys file
      # comes from the same site as the tarball, so it alone proves nothing.
      gpg --quiet --status-fd 1 --verify "$work/$name.tar.gz.sig" "$work/$name.tar.gz" >"$work/verify.status" 2>/dev/null \
        || die "the toolchain's PGP signature does not verify"
      signer=$(awk '$2 == "VALIDSIG" { print $NF }' "$work/verify.status")
      [ "$signer" = "$SWIFT_KEY_FINGERPRINT" ] \
        || die "the toolchain is signed by key ${signer:-(none)}, not the pinned swift.org release key $SWIFT_KEY_FINGERPRINT"
      mkdir -p "$swift_dir"
      tar -xzf "$work/$name.tar.gz" -C "$swift_dir" --strip-components=1
      rm -rf "$work"
      unset GNUPGHOME
      say "Swift $SWIFT_VERSION in $swift_dir"
    fi
    swift="$swift_dir/usr/bin/swift"
  fi
  say "building with $("$swift" --version 2>/dev/null | head -1)"
  scratch=/var/cache/ambient-speaker/build
  mkdir -p "$scratch"
  (cd "$source_dir" && "$swift" build -c release --static-swift-stdlib --product ambient-speaker --scratch-path "$scratch")
  binary="$scratch/release/ambient-speaker"
fi

# 5. User and groups (before files that it owns).
getent group gpio >/dev/null || { groupadd --system gpio; say "created group gpio"; }
getent group audio >/dev/null || { groupadd --system audio; say "created group audio"; }
if ! id "$USER_NAME" >/dev/null 2>&1; then
  adduser --quiet --system --group --no-create-home --home "$STATE_DIR" "$USER_NAME"
  say "created system user $USER_NAME"
fi
for g in gpio audio; do
  if id -nG "$USER_NAME" | tr ' ' '\n' | grep -qx "$g"; then :; else usermod -a -G "$g" "$USER_NAME"; say "added $USER_NAME to $g"; fi
done

# 4. Files.
changed=0
install_file "$binary" "$PREFIX/bin/ambient-speaker" 0755 root:root && changed=1
install_file "$source_dir/systemd/ambient-speaker.service" "$UNIT" 0644 root:root && changed=1
# Pulled in by the unit: at shutdown it stops the speaker before the network.
install_file "$source_dir/systemd/ambient-speaker-network-stop.service" "$STOP_GUARD" 0644 root:root && changed=1
rule="$(mktemp)"
printf '%s\n' '# ambient-speaker (board/install.sh): GPIO character devices for the gpio group.' \
  'SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"' >"$rule"
install_file "$rule" "$UDEV_RULE" 0644 root:root || true
rm -f "$rule"
install -d -m 0750 -o root -g "$USER_NAME" "$CONFIG_DIR"
if [ -e "$CONFIG_DIR/config.json" ]; then
  say "kept your $CONFIG_DIR/config.json"
else
  # Without the example's "device" line: the id and name follow this board's
  # hostname, so two boards installed alike never share a device id.
  grep -v '^  "device":' "$source_dir/board/config.example.json" >"$CONFIG_DIR/config.json"
  chown "root:$USER_NAME" "$CONFIG_DIR/config.json"
  chmod 0640 "$CONFIG_DIR/config.json"
  say "installed $CONFIG_DIR/config.json (default wiring, device id from the hostname; edit mqtt.host)"
fi
install -d -m 0750 -o "$USER_NAME" -g "$USER_NAME" "$STATE_DIR"
install -d -m 0755 -o "$USER_NAME" -g "$USER_NAME" "$STATE_DIR/sounds"

apply_dac

"$PREFIX/bin/ambient-speaker" check-config "$CONFIG_DIR/config.json" >/dev/null \
  || die "$CONFIG_DIR/config.json does not validate (ambient-speaker check-config $CONFIG_DIR/config.json)"
say "configuration valid"

# 7. Service.
if systemd_running; then
  systemctl daemon-reload
  if udevadm control --reload 2>/dev/null; then udevadm trigger --subsystem-match=gpio 2>/dev/null || true; fi
  if ((start)); then
    systemctl enable --quiet ambient-speaker.service
    if ((changed)) || ! systemctl is-active --quiet ambient-speaker.service; then
      systemctl restart ambient-speaker.service
      say "started ambient-speaker (journalctl -u ambient-speaker -f)"
    else
      say "ambient-speaker already running the installed version"
    fi
  fi
else
  say "systemd is not running here (a chroot?): run 'systemctl enable --now ambient-speaker' on the Pi"
fi
say "done"
