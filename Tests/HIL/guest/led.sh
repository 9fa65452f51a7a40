#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The status LED (statusLed GPIO16, led.json), read back from the gpio-sim
# line: lit while playing, the encoder switch's hold confirmed by blinks and
# then breathing while the sleep timer runs, lit again when the timer is
# cancelled, dark when paused, blinking fast while the audio output is
# unavailable. The speaker of section 2 (software.json, the
# config the recorded gpio traces use, without the LED) makes way for one with
# the LED and comes back afterwards. Sourced by scenarios.sh (pass, fail, info,
# retained, wait_for, start_speaker, stop_speaker, SIM, T, BROKER).
LED="$SIM/sim_gpio16/value"
stop_speaker
if start_speaker /hil/led.json /tmp/speaker-led.log; then pass "a speaker with statusLed GPIO16 comes online"
else fail "a speaker with statusLed GPIO16 comes online" "not online"; fi
hil-probe press "$SIM"/sim_gpio17/pull 120 bounce
wait_for session '"isPlaying":true' 10 || info "not playing: $(retained session)"
led_steady() {  # $1 expected value: three reads 0.3 s apart
    for _ in 1 2 3; do [ "$(cat "$LED")" = "$1" ] || return 1; sleep 0.3; done
}
if led_steady 1; then pass "LED lit while playing (GPIO16 reads 1)"; else fail "LED lit while playing" "GPIO16 reads $(cat "$LED")"; fi

# Lit spans in pulse list $1 whose bounds overlap $2..$3 µs, the first $4 spans skipped.
spans() {
    awk -v lo="$2" -v hi="$3" -v skip="$4" '$2 == "up" { if (++seen <= skip) next; split($4, a, "="); split($5, b, "="); if (a[2] <= hi && b[2] >= lo) n++ } END { print n + 0 }' "$1"
}
# Holds the encoder switch 1.2 s and reads the LED back for $1 ms into $2; then
# checks the timer's minutes ($3) and that at least $7 lit spans of $4..$5 µs
# were seen after the first $8 ($6 names it).
hold_and_read() {
    hil-probe press "$SIM"/sim_gpio25/pull 1200 &
    presser=$!
    hil-probe pulses "$LED" "$SIM"/sim_gpio5/value "$1" 0 > "$2" 2>/dev/null
    wait "$presser"  # only the press: the broker, its subscriber and the speaker run on
    info "LED after a hold: $(tr '\n' ';' < "$2")"
    if wait_for session "\"sleepTimer\":{[^}]*\"minutes\":$3" 5; then pass "holding the encoder switch sets the timer to $3 minutes"
    else fail "hold sets the timer to $3 minutes" "$(retained session)"; fi
    n=$(spans "$2" "$4" "$5" "$8")
    if [ "$n" -ge "$7" ]; then pass "$6 ($n read back)"; else fail "$6" "$n such spans: $(tr '\n' ';' < "$2")"; fi
}
# First hold: 15 minutes, one blink, then breathing (1.5 s lit, 1.5 s dark,
# repeating): in 8 s, two whole breaths after the blink. The first span read
# back is the steady light of playing that the hold ends, so it is skipped.
hold_and_read 8000 /tmp/led1.txt 15 1300000 1700000 "LED breathes while the timer runs (1.5 s lit spans, repeating)" 2 1
# Second hold: 30 minutes, two blinks (200 ms lit, 300 ms dark), then breathing.
hold_and_read 3500 /tmp/led2.txt 30 150000 350000 "LED blinks twice to confirm 30 minutes (0.2 s blinks)" 2 0

mosquitto_pub -h "$BROKER" -t "$T/command" -q 1 -m '{"id":"led-c","action":"cancelSleepTimer"}'
wait_for session '"sleepTimer":null' 5
sleep 0.5
if led_steady 1; then pass "LED lit again once the timer is cancelled"; else fail "LED lit after cancel" "GPIO16 reads $(cat "$LED")"; fi

hil-probe press "$SIM"/sim_gpio17/pull 120 bounce
wait_for session '"intendsPlayback":false' 10
sleep 0.3
if led_steady 0; then pass "LED dark when paused"; else fail "LED dark when paused" "GPIO16 reads $(cat "$LED")"; fi
stop_speaker

# A problem: with an audio output that does not exist, a press makes the
# speaker report the audio unavailable, and the LED blinks fast (100 ms lit,
# 100 ms dark) until the problem goes: at least 6 lit spans in 2.5 s whose
# bounds from the probe's samples (min_us < width < max_us) meet 60-150 ms,
# which neither a 0.2 s blink nor breathing's 1.5 s can.
if start_speaker /hil/led-noaudio.json /tmp/speaker-led2.log; then pass "a speaker with a missing audio output comes online"
else fail "a speaker with a missing audio output comes online" "not online"; fi
hil-probe press "$SIM"/sim_gpio17/pull 120 bounce
if wait_until 10 "the audio output reported unavailable" grep -q "audio output unavailable" /tmp/speaker-led2.log
then pass "the missing output is reported unavailable"
else fail "the missing output is reported unavailable" "$(tail -n 5 /tmp/speaker-led2.log | tr '\n' ';')"; fi
hil-probe pulses "$LED" "$SIM"/sim_gpio5/value 2500 0 > /tmp/led3.txt 2>/dev/null
info "LED with the audio unavailable: $(tr '\n' ';' < /tmp/led3.txt)"
fast=$(awk '$2 == "up" { split($4, a, "="); split($5, b, "="); if (a[2] <= 150000 && b[2] >= 60000) n++ } END { print n + 0 }' /tmp/led3.txt)
if [ "$fast" -ge 6 ]; then pass "LED blinks fast while the audio is unavailable ($fast lit spans of 0.06-0.15 s in 2.5 s)"
else fail "LED blinks fast while the audio is unavailable" "$fast lit spans of 0.06-0.15 s: $(tr '\n' ';' < /tmp/led3.txt)"; fi
stop_speaker
start_speaker /hil/software.json /tmp/speaker1.log || fail "the section 2 speaker comes back" "not online"
