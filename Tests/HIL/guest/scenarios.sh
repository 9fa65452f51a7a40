#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# HIL scenarios, run inside the VM by /init against real drivers: gpio-sim
# chips (two banks: the header's GPIO0..31 on the *second* chip, as on a Pi 5),
# snd-aloop and snd-dummy's mixer, on any architecture. Prints
# "HIL PASS|FAIL [variant] name" per check, then "HIL RESULT [variant] N passed, N failed".
V=$(cat /hil/variant)
P=0; F=0
pass() { echo "HIL PASS [$V] $1"; P=$((P + 1)); }
fail() { echo "HIL FAIL [$V] $1: $2"; F=$((F + 1)); }
info() { echo "HIL INFO [$V] $*"; }
T=ambient-speaker/hil
BROKER=127.0.0.1

# --- gpio-sim: chip A (4 lines, STATUS), chip B (GPIO0..GPIO31) ---------------
G=/sys/kernel/config/gpio-sim/hil
mkdir "$G" "$G"/bank0 "$G"/bank1
echo 4 > "$G"/bank0/num_lines; echo other > "$G"/bank0/label
mkdir "$G"/bank0/line0; echo STATUS > "$G"/bank0/line0/name
echo 32 > "$G"/bank1/num_lines; echo header > "$G"/bank1/label
for i in $(seq 0 31); do mkdir "$G/bank1/line$i"; echo "GPIO$i" > "$G/bank1/line$i/name"; done
echo 1 > "$G"/live || { fail gpio-sim "cannot go live"; echo "HIL RESULT [$V] $P passed, $F failed"; exit 1; }
SIM=/sys/devices/platform/$(cat "$G"/dev_name)/$(cat "$G"/bank1/chip_name)
CHIPB=$(cat "$G"/bank1/chip_name)
pull() { echo "$2" > "$SIM/sim_gpio$1/pull"; }
for l in 17 22 23 24 25 27; do pull $l pull-up; done

# --- broker ------------------------------------------------------------------
printf 'listener 1883 127.0.0.1\nallow_anonymous true\nuser root\n' > /tmp/mosquitto.conf
# waits up to $1 seconds for the command after $2 (what it waits for, said on timeout) to succeed
wait_until() {
    end=$(($(date +%s) + $1)); what=$2; shift 2
    until "$@"; do
        if [ "$(date +%s)" -ge "$end" ]; then info "timed out waiting for $what"; return 1; fi
        sleep 0.1
    done
}
mosquitto -c /tmp/mosquitto.conf -d
wait_until 10 "the broker to accept connections" mosquitto_pub -h "$BROKER" -t "$T/probe" -n 2>/dev/null
mosquitto_sub -h "$BROKER" -v -t "$T/#" > /tmp/mqtt.log 2>&1 &

retained() { mosquitto_sub -h "$BROKER" -C 1 -W 2 -t "$T/$1" 2>/dev/null; }
# waits up to $3 seconds for the retained message on topic $1 to match the grep pattern $2
wait_for() {
    end=$(($(date +%s) + $3))
    while :; do
        retained "$1" | grep -q "$2" && return 0
        [ "$(date +%s)" -ge "$end" ] && return 1
        sleep 0.1
    done
}
level() { retained device | sed -n 's/.*"level":\([0-9.eE+-]*\).*/\1/p'; }
SPK=
start_speaker() {  # $1 config, $2 log
    ambient-speaker run --log-level debug --config "$1" > "$2" 2>&1 &
    SPK=$!
    if wait_for availability online 30; then return 0; fi
    echo "--- speaker log"; cat "$2"; return 1
}
stop_speaker() {
    kill -TERM "$SPK" 2>/dev/null; wait "$SPK"; rc=$?; SPK=
    return $rc
}
# $1 name, $2 expected exit code, $3 text expected in the output, $4 config, then optional run-as prefix
expect_refusal() {
    name=$1; code=$2; text=$3; cfg=$4; shift 4
    "$@" ambient-speaker run --config "$cfg" > /tmp/refusal.log 2>&1
    rc=$?
    if [ $rc -eq "$code" ] && grep -qF "$text" /tmp/refusal.log; then pass "$name"
    else fail "$name" "exit $rc, output: $(tr '\n' ' ' < /tmp/refusal.log | cut -c1-400)"; fi
}

# --- HIL_ONLY=latency (hil.only=latency): the audible-response benchmark alone -----
if grep -q 'hil.only=latency' /proc/cmdline; then
    LATENCY_ASKED=$(sed -n 's/.*hil\.latency=\([a-z0-9,]*\).*/\1/p' /proc/cmdline)
    [ "$LATENCY_ASKED" = 1 ] && LATENCY_ASKED="default,small,norewind,mix"
    # shellcheck source=latency.sh
    LATENCY_CONFIGS=$(echo "${LATENCY_ASKED:-mix}" | tr ',' ' ') . /hil/latency.sh
    echo "HIL RESULT [$V] $P passed, $F failed"
    exit 0
fi

# --- HIL_ONLY=led (hil.only=led): the status LED's patterns alone ---------------
if grep -q 'hil.only=led' /proc/cmdline; then
    start_speaker /hil/software.json /tmp/speaker1.log || fail "the section 2 speaker starts" "not online"
    # shellcheck source=led.sh
    . /hil/led.sh
    echo "HIL RESULT [$V] $P passed, $F failed"
    exit 0
fi

# --- 1. devices: the build's libgpiod API; GPIO17 is on the second chip ----------
ambient-speaker devices > /tmp/devices.txt 2>&1
# The variant label ends with the API it was built for ("v1", "arm64-v2"): a v2
# build must not have fallen back to a system v1 (or the other way round).
API=${V##*-}
if grep -q "($API API)" /tmp/devices.txt; then pass "devices reports the libgpiod $API API"
else fail "devices reports the libgpiod $API API" "$(grep -i libgpiod /tmp/devices.txt)"; fi
info "$(grep -E 'GPIO chips|gpiochip' /tmp/devices.txt | tr '\n' ';')"
if awk -v chip="$CHIPB" '$1 == chip { in_b = 1; next } /^  gpiochip/ || /^[^ ]/ { in_b = 0 } in_b && $2 == "GPIO17" { found = 1 } END { exit !found }' /tmp/devices.txt
then pass "devices lists GPIO17 on the second chip ($CHIPB)"; else fail "devices lists GPIO17 on $CHIPB" "$(cat /tmp/devices.txt)"; fi

# --- 2. software volume: buttons, encoder, audio --------------------------------
if start_speaker /hil/software.json /tmp/speaker1.log; then pass "speaker starts on gpio-sim and comes online"
else fail "speaker starts on gpio-sim" "not online"; fi
if grep -q "playPause: GPIO17 ($CHIPB line 17)" /tmp/speaker1.log; then pass "GPIO17 found by name on $CHIPB"
else fail "GPIO17 found by name on $CHIPB" "$(grep playPause /tmp/speaker1.log)"; fi
if ambient-speaker devices 2>&1 | grep -q 'GPIO17.*used by "ambient-speaker"'; then pass "devices names the consumer"
else fail "devices names the consumer" "$(ambient-speaker devices 2>&1 | grep GPIO17)"; fi

hil-probe press "$SIM"/sim_gpio17/pull 120 bounce
if wait_for session '"isPlaying":true' 10; then pass "play/pause press (with bounce) starts playback"
else fail "play/pause press starts playback" "$(retained session)"; fi

arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -t raw -d 1 /tmp/a1.raw 2>/tmp/arecord.log
R1=$(hil-probe rms /tmp/a1.raw)
info "audio rms while playing at level $(level): $R1"
if [ "${R1:-0}" -gt 10 ]; then pass "audio reaches hw:Loopback,1,0"
else fail "audio reaches hw:Loopback,1,0" "rms $R1 $(cat /tmp/arecord.log)"; fi

turn_check() {  # $1 detents, $2 step µs, $3 "bounce" or empty
    if [ -n "$3" ]; then how="${2} us per transition, bounce on every edge"; else how="${2} us per transition, no bounce"; fi
    before=$(level)
    mark=$(wc -l < /tmp/speaker1.log)
    mqmark=$(wc -l < /tmp/mqtt.log)
    if grep -q 'hil.trace=1' /proc/cmdline; then
        HIL_TRACE=/tmp/probe-trace.txt hil-probe turn "$SIM"/sim_gpio23/pull "$SIM"/sim_gpio24/pull "$1" "$2" ${3:+"$3"}
    else
        hil-probe turn "$SIM"/sim_gpio23/pull "$SIM"/sim_gpio24/pull "$1" "$2" ${3:+"$3"}
    fi
    # The level the turn should reach (0.05 a detent, within 0..1), as the speaker prints it;
    # a wrong count shows as the level read after this bounded wait.
    expected=$(awk -v a="$before" -v d="$1" 'BEGIN { l = a + d * 0.05; if (l > 1) l = 1; if (l < 0) l = 0
                                                    s = sprintf("%.2f", l); sub(/0+$/, "", s); sub(/\.$/, "", s); print s }')
    wait_for device "\"level\":${expected}[,}]" 5
    after=$(level)
    if grep -q 'hil.trace=1' /proc/cmdline; then
        # Per-edge trace (HIL_TRACE=1 Tests/HIL/run): the pulls written, then the speaker's reads and decoded edges.
        echo "HIL TRACE [$V] turn $1 $2 $3"
        sed "s/^/HIL TRACE [$V] probe /" /tmp/probe-trace.txt
        tail -n +$((mark + 1)) /tmp/speaker1.log | grep -E 'read encoder|edge encoder|knob|kernel dropped' | sed "s/^/HIL TRACE [$V] spk /"
        echo "HIL TRACE [$V] end"
    fi
    counted=$(awk -v a="$before" -v b="$after" 'BEGIN { d = (b - a) / 0.05; printf "%d", (d < 0 ? d - 0.5 : d + 0.5) }')
    # A ghost detent against the turn shows as a published level that steps back.
    back=$(tail -n +$((mqmark + 1)) /tmp/mqtt.log | sed -n "s|^$T/device .*\"level\":\([0-9.eE+-]*\).*|\1|p" \
        | awk -v dir="$1" -v prev="$before" '{ if ((dir > 0 && $1 < prev - 1e-6) || (dir < 0 && $1 > prev + 1e-6)) n++; prev = $1 }
                                                END { print n + 0 " " NR }')
    published=${back#* }; back=${back% *}
    info "encoder turned=$1 counted=$counted steps-back=$back (of $published levels published; level $before -> $after, $how)"
    case "$2 $3" in "500 bounce") echo "HIL BENCH [$V] {\"metric\": \"hil_fast_bouncy_detents_counted\", \"turned\": $1, \"value\": $counted, \"unit\": \"detents\"}" ;; esac
    if [ "$counted" = "$1" ] && [ "$back" = 0 ]; then pass "encoder turn $1 ($how) moves the level by exactly $1 detents, never back"
    else fail "encoder turn $1 ($how) moves the level by $1 detents, never back" "counted $counted, $back step(s) back; speaker: $(grep -E '^<[0-4]>|read encoder' /tmp/speaker1.log | tail -40 | tr '\n' ' ')"; fi
}
# Bounce bursts are 4 flips 0.1 ms apart, so a fast bouncy turn makes 5 edges per ms per
# phase: v1's 16-edge kernel queue fills within a few milliseconds. The board drains the queues on a
# real-time reader thread (Board/EdgeReaderThread) and merges the lines in timestamp
# order (Board/EdgeReorder). Tests/HIL/run keeps a CPU load beside the VM. Every turn is
# a check on both builds: exact count, and no published level stepping back (a ghost).
# HIL_TRACE=1 Tests/HIL/run prints each turn's pulls and the speaker's reads.
turn_check 3 3000 bounce
turn_check -2 3000 bounce
turn_check 4 3000 bounce
turn_check 6 500
# From level 0.85: down first, so that no turn is cut short by the 1.0 ceiling.
turn_check -5 500 bounce
turn_check 5 500 bounce
turn_check -8 500 bounce
turn_check 8 500 bounce

arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -t raw -d 1 /tmp/a2.raw 2>>/tmp/arecord.log
R2=$(hil-probe rms /tmp/a2.raw)
info "audio rms after turning up to level $(level): $R2"
if [ "${R2:-0}" -gt $((R1 * 11 / 10)) ]; then pass "louder after turning up ($R1 -> $R2)"
else fail "louder after turning up" "$R1 -> $R2 $(tail -2 /tmp/arecord.log)"; fi

hil-probe press "$SIM"/sim_gpio17/pull 120 bounce
if wait_for session '"intendsPlayback":false' 10; then pass "second press pauses"; else fail "second press pauses" "$(retained session)"; fi
# The fade-out is over when the engine reports it stopped playing.
wait_for session '"isPlaying":false' 10 || info "session still playing: $(retained session)"
arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -t raw -d 1 /tmp/a3.raw 2>>/tmp/arecord.log
R3=$(hil-probe rms /tmp/a3.raw)
if [ "${R3:-99}" -le 2 ]; then pass "silent when paused (rms $R3)"
else fail "silent when paused" "rms $R3"; fi

hil-probe press "$SIM"/sim_gpio27/pull 120 bounce
if wait_for session '"isPlaying":true' 10; then pass "next press starts the next sound"; else fail "next press" "$(retained session)"; fi

# --- 2b. the status LED on GPIO16, read back from the line (led.sh) ------------
# shellcheck source=led.sh
. /hil/led.sh

# --- 3. errors ------------------------------------------------------------------
expect_refusal "a held line names its consumer (exit 2)" 2 'is already in use by "ambient-speaker"' /hil/second.json
expect_refusal "an unknown line is a configuration error (exit 1)" 1 '"GPIO99" not found' /hil/unknown.json
expect_refusal "a line configured twice is a configuration error (exit 1)" 1 'inputs.next.line: line GPIO17 is already used by inputs.playPause.line' /hil/twice.json
if stop_speaker; then pass "SIGTERM exits 0"
else fail "SIGTERM exits 0" "exit $?"; fi
grep -q '^<[0-3]>' /tmp/speaker1.log && info "errors logged: $(grep '^<[0-3]>' /tmp/speaker1.log | head -3 | tr '\n' ' ')"

chgrp gpio /dev/gpiochip*; chmod 660 /dev/gpiochip*
expect_refusal "no permission names the group (exit 2)" 2 'belongs to group "gpio"' /hil/perm.json /hil/as-speaker
chgrp root /dev/gpiochip*; chmod 600 /dev/gpiochip*

# --- 3b. audible response, first edge to first changed frame (latency.sh) --------
# A benchmark, so only on request (HIL_LATENCY=1 Tests/HIL/run puts hil.latency=1 on
# the kernel command line): one build measures it (v2, whose buttons also have the
# kernel's 5 ms debounce), and the configurations take long in emulated time.
# HIL_LATENCY=1: every configuration; HIL_LATENCY=default,mix (a list): those only
# (mix: the same measurement with a 4-layer mix playing, latency-mix.json).
LATENCY_ASKED=$(sed -n 's/.*hil\.latency=\([a-z0-9,]*\).*/\1/p' /proc/cmdline)
if [ -n "$LATENCY_ASKED" ]; then
    [ "$LATENCY_ASKED" = 1 ] && LATENCY_ASKED="default,small,norewind,mix"
    # shellcheck source=latency.sh
    case "$V" in *v2) LATENCY_CONFIGS=$(echo "$LATENCY_ASKED" | tr ',' ' ') . /hil/latency.sh ;; esac
fi

# --- 3c. gpio traces for the replay tests, only on request (gpio-traces.sh) -------
if grep -q 'hil.gpiotrace=1' /proc/cmdline; then
    # shellcheck source=gpio-traces.sh
    . /hil/gpio-traces.sh
fi

# --- 4. alsa-mixer: the level drives snd-dummy's Master element (mixer.sh) -------
# shellcheck source=mixer.sh
. /hil/mixer.sh

# --- 4b. a schedule fires on the VM's clock (schedule.sh) ------------------------
# shellcheck source=schedule.sh
. /hil/schedule.sh

# --- 5. gpio-step: pulses on the amp's UP/DOWN outputs --------------------------
if start_speaker /hil/step.json /tmp/speaker2.log; then pass "gpio-step speaker comes online"; else fail "gpio-step speaker comes online" "not online"; fi
if wait_for device '"control":"relative"' 5 && ! retained device | grep -q '"level"' && ! retained session | grep -q '"level"'; then pass "device publishes control relative and no level"
else fail "control relative, no level" "$(retained device)"; fi
hil-probe pulses "$SIM"/sim_gpio5/value "$SIM"/sim_gpio6/value 2500 1 > /tmp/pulses.txt 2> /tmp/pulses.ready &
PR=$!
wait_until 5 "hil-probe to sample the amp lines" grep -q sampling /tmp/pulses.ready
hil-probe turn "$SIM"/sim_gpio23/pull "$SIM"/sim_gpio24/pull 3 3000 bounce
# Pacing, not a wait for a result: the command comes after the turn's pulses (3 x 40 ms).
sleep 0.5
mosquitto_pub -h "$BROKER" -t "$T/command" -q 1 -m '{"id":"h1","action":"volumeDown"}'
wait $PR
info "pulses: $(tr '\n' ';' < /tmp/pulses.txt)"
ups=$(grep -c 'pulse up' /tmp/pulses.txt); downs=$(grep -c 'pulse down' /tmp/pulses.txt)
if [ "$ups" = 3 ] && [ "$downs" = 1 ]; then pass "3 detents give 3 UP pulses, volumeDown 1 DOWN pulse"
else fail "pulse counts" "up=$ups down=$downs"; fi
# hil-probe brackets each edge between two samples (the VM's one CPU is shared with the
# speaker), so each pulse has sound bounds min_us < width < max_us. Configured: 20 ms
# pulses, 20 ms gaps. Pass if 20 ms fits the bounds (max >= 20 ms) and the pulse is
# not grossly long (min <= 45 ms), and every gap can be >= 20 ms (gap_max >= 20 ms).
if awk '{ for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
       if (v["max_us"] < 20000 || v["min_us"] > 45000) bad = 1
       if (v["gap_max_us"] != -1 && v["gap_max_us"] < 20000) bad = 1 } END { exit bad }' /tmp/pulses.txt; then
    pass "pulses are 20 ms wide with >= 20 ms gaps (bounds from the samples around each edge)"
else fail "pulse widths" "$(tr '\n' ';' < /tmp/pulses.txt) speaker: $(grep -E 'amp|knob|volume' /tmp/speaker2.log | tail -12 | tr '\n' ';')"; fi
mosquitto_pub -h "$BROKER" -t "$T/command" -q 1 -m '{"id":"h2","action":"setVolume","level":0.5}'
wait_until 5 "the h2 result" grep -q 'h2.*unsupported' /tmp/mqtt.log
if grep -q 'h2.*unsupported' /tmp/mqtt.log; then pass "setVolume is unsupported"
else fail "setVolume unsupported" "$(grep h2 /tmp/mqtt.log)"; fi

# --- 6. the chip goes away while running ----------------------------------------
echo 0 > "$G"/live
speaker_gone() { ! kill -0 "$SPK" 2>/dev/null; }
wait_until 5 "the speaker to exit" speaker_gone
if kill -0 "$SPK" 2>/dev/null; then fail "chip gone at run time exits 2" "still running"; kill -9 "$SPK"; wait "$SPK"
else wait "$SPK"; rc=$?
    if [ $rc -eq 2 ] && grep -q "is gone" /tmp/speaker2.log; then pass "chip gone at run time: exit 2 with a message"
    else fail "chip gone at run time" "exit $rc $(grep -i gone /tmp/speaker2.log)"; fi
fi

echo "HIL RESULT [$V] $P passed, $F failed"
