# SPDX-License-Identifier: Apache-2.0
# alsa-mixer scenarios, sourced by scenarios.sh (uses its pass/fail/wait_for/
# start_speaker and the gpio-sim encoder lines): the speaker drives snd-dummy's
# "Master" element (-45..0 dB in 0.3 dB steps, no playback switch) by dB, and
# amixer plays "someone else" moving it. The dB values below are exact element
# steps, so every expected reading is exact: level L -> (L - 1) * 50 dB.
# shellcheck shell=sh
MIXCARD=hw:Dummy
MIXELEM=Master
# "LEFT RIGHT" dB of the element, read by amixer (an independent alsa-lib client).
mixer_db() {
    amixer -D $MIXCARD sget $MIXELEM | grep -E 'Front (Left|Right):' | sed 's/.*\[\(-*[0-9.]*\)dB\].*/\1/' | tr '\n' ' ' | sed 's/ $//'
}
# waits up to $2 seconds for both channels to read $1 dB
wait_db() {
    end=$(($(date +%s) + $2))
    while :; do
        [ "$(mixer_db)" = "$1 $1" ] && return 0
        [ "$(date +%s)" -ge "$end" ] && return 1
        sleep 0.1
    done
}
session_level() { retained session | sed -n 's/.*"level":\([0-9.eE+-]*\).*/\1/p'; }
revision() { retained session | sed -n 's/.*"revision":\([0-9]*\).*/\1/p'; }

T_SAVED=$T
T=ambient-speaker/hilmix
amixer -q -D $MIXCARD sset $MIXELEM -- -3dB # not the start-up level, so the start-up write shows
mosquitto_sub -h "$BROKER" -v -t "$T/#" > /tmp/mqtt-mix.log 2>&1 &
MIXSUB=$!
if start_speaker /hil/mixer.json /tmp/speaker3.log; then pass "alsa-mixer speaker comes online ($MIXCARD $MIXELEM)"
else fail "alsa-mixer speaker comes online" "not online"; fi
info "$(grep 'volume: mixer' /tmp/speaker3.log | head -1)"
if wait_for device '"level":0.7[,}]' 5 && retained device | grep -q '"control":"absolute"'; then pass "device publishes control absolute, level 0.7"
else fail "device control absolute, level 0.7" "$(retained device)"; fi
if wait_db -15.00 5; then pass "start-up level 0.7 moves $MIXELEM from -3.00 to -15.00 dB"
else fail "start-up level 0.7 sets -15.00 dB" "element at $(mixer_db) dB"; fi

mosquitto_pub -h "$BROKER" -t "$T/command" -q 1 -m '{"id":"m1","action":"setVolume","level":0.58}'
if wait_db -21.00 5 && wait_for device '"level":0.58[,}]' 5 && grep -q '"id":"m1","ok":true.*"level":0.58' /tmp/mqtt-mix.log; then pass "setVolume 0.58 moves $MIXELEM to -21.00 dB on both channels"
else fail "setVolume 0.58 moves $MIXELEM to -21.00 dB" "element at $(mixer_db) dB, device $(retained device), result $(grep '"m1"' /tmp/mqtt-mix.log)"; fi

# The loopback hears the samples before the (dummy) mixer: they must not carry a software gain too.
hil-probe press "$SIM"/sim_gpio17/pull 120 bounce
wait_for session '"isPlaying":true' 10 || fail "alsa-mixer speaker plays" "$(retained session)"
# Two seconds captured, the second one measured: the fade-in is over by then.
arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -t raw -d 2 /tmp/m1-2s.raw 2>/tmp/arecord-mix.log
tail -c 192000 /tmp/m1-2s.raw > /tmp/m1.raw
M1=$(hil-probe rms /tmp/m1.raw)

r0=$(revision)
amixer -q -D $MIXCARD sset $MIXELEM -- -9dB
if wait_for device '"level":0.82[,}]' 5 && [ "$(session_level)" = 0.82 ] && [ "$(revision)" -gt "${r0:-0}" ]; then
    pass "amixer -9 dB elsewhere is read back: device and session level 0.82 (revision $r0 -> $(revision))"
else fail "amixer -9 dB elsewhere is read back as level 0.82" "device $(retained device); session level $(session_level) revision $r0 -> $(revision); $(grep 'mixer moved' /tmp/speaker3.log | tail -2)"; fi

amixer -q -D $MIXCARD sset $MIXELEM -- 0dB
if wait_db -6.00 5 && wait_for device '"level":0.88[,}]' 5; then
    pass "amixer 0 dB (level 1.0) above maxLevel 0.88 is turned back down to -6.00 dB, level 0.88"
else fail "amixer 0 dB is turned back down to maxLevel" "element at $(mixer_db) dB, device $(retained device); $(grep -E 'mixer moved|maxLevel' /tmp/speaker3.log | tail -3)"; fi

hil-probe turn "$SIM"/sim_gpio23/pull "$SIM"/sim_gpio24/pull -3 3000 bounce
if wait_db -13.50 5 && wait_for device '"level":0.73[,}]' 5; then pass "encoder turn -3 moves $MIXELEM from -6.00 to -13.50 dB, level 0.73"
else fail "encoder turn -3 moves $MIXELEM to -13.50 dB" "element at $(mixer_db) dB, device $(retained device)"; fi

arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -t raw -d 1 /tmp/m2.raw 2>>/tmp/arecord-mix.log
M2=$(hil-probe rms /tmp/m2.raw)
# Software gain would make these 7.5 dB apart (x2.4); at unity they are the same noise level.
if [ "${M1:-0}" -gt 10 ] && [ $((M2 * 100)) -ge $((M1 * 85)) ] && [ $((M2 * 100)) -le $((M1 * 118)) ]; then pass "samples stay at unity gain in alsa-mixer mode (loopback rms $M1 at level 0.58, $M2 at 0.73)"
else fail "samples stay at unity gain in alsa-mixer mode" "rms $M1 at level 0.58, $M2 at 0.73 $(tail -2 /tmp/arecord-mix.log)"; fi

mosquitto_pub -h "$BROKER" -t "$T/command" -q 1 -m '{"id":"m2","action":"setVolume","level":0}'
if wait_db -45.00 5 && wait_for device '"level":0[,}]' 5; then pass "setVolume 0 puts $MIXELEM at its bottom, -45.00 dB (no playback switch)"
else fail "setVolume 0 puts $MIXELEM at -45.00 dB" "element at $(mixer_db) dB, device $(retained device)"; fi

info "speaker read back: $(grep -E 'mixer moved|maxLevel' /tmp/speaker3.log | sed 's/^<[0-9]>main: //' | tr '\n' ';')"
stop_speaker || fail "alsa-mixer speaker: SIGTERM exits 0" "exit $?"
grep -q '^<[0-3]>' /tmp/speaker3.log && info "mixer speaker errors: $(grep '^<[0-3]>' /tmp/speaker3.log | head -3 | tr '\n' ' ')"
kill $MIXSUB 2>/dev/null
T=$T_SAVED
