# SPDX-License-Identifier: Apache-2.0
# Audible response, sourced by scenarios.sh: from the FIRST EDGE of an
# input (hil-probe tap/detent print it, CLOCK_MONOTONIC) to the first captured
# frame that differs from the one playing at that instant (hil-probe capture
# dates every read from the snd-aloop capture on the same clock; respond maps
# frames to times). The sounds are constant (DC) files, so "changed" is exact:
# pause = fade start, play = first non-silent frame, next/previous = crossfade
# start, one knob detent = gain change. Each response bound includes the
# capture path (aloop's timer tick, arecord's 96-frame period, the pipe), so
# the figures are upper bounds; events are spaced by idle waits, never by MQTT
# polling, so nothing else runs on the VM's one CPU while one is measured.
# Prints JSON lines ("HIL BENCH [v] {...}") per configuration in LATENCY_CONFIGS.
# shellcheck shell=sh
bench() { echo "HIL BENCH [$V] $*"; }
mkdir -p /tmp/lsounds
hil-probe wav /tmp/lsounds/a-high.wav 30000 120 && hil-probe wav /tmp/lsounds/b-low.wav 15000 120
# The "mix" configuration plays 4-layer mixes of four constant files (m4a,
# m4b: the same four streamed files at other levels), so next/previous is a
# switch between two mixes and every layer is streamed and re-rendered.
case " ${LATENCY_CONFIGS:-default} " in
    *" mix "*) hil-probe wav /tmp/lsounds/c-dc.wav 8000 120 && hil-probe wav /tmp/lsounds/d-dc.wav 4000 120 ;;
esac
# Captures run per block of events (a few seconds each): one arecord kept for a
# whole configuration loses the capture.
# arecord sometimes ends with "read error: Input/output error" when the speaker's
# playback stops or starts (snd-aloop): it is restarted at once, into the same pipe;
# a gap in the frames is harmless, every frame is dated by the reads that carried it.
cap_start() {
    sh -c 'echo $$ > /tmp/caploop.pid
           while :; do arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -t raw --period-size=96 --buffer-size=4800; done' \
        2>>/tmp/arecord-lat.log | hil-probe capture /tmp/lat.raw /tmp/lat.times &
    CAP=$!
    sleep 0.5
}
cap_stop() {  # $@: event kinds measured in this block
    sleep 0.5
    kill "$(cat /tmp/caploop.pid)" 2>/dev/null; for a in $(pidof arecord); do kill "$a" 2>/dev/null; done; wait "$CAP"
    while pidof arecord > /dev/null; do sleep 0.1; done
    for kind in "$@"; do
        [ -s "/tmp/ev-$kind" ] || continue
        hil-probe respond /tmp/lat.raw /tmp/lat.times "/tmp/ev-$kind" "$kind" 2 >> "/tmp/resp-$kind.txt"
        rm -f "/tmp/ev-$kind"
    done
}
for LCFG in ${LATENCY_CONFIGS:-default}; do
    rm -f /tmp/ev-* /tmp/resp-* /tmp/arecord-lat.log
    if ! start_speaker "/hil/latency-$LCFG.json" "/tmp/speaker-$LCFG.log"; then fail "latency ($LCFG): speaker comes online" "not online"; continue; fi
    settings=$(sed -n 's/.*device "hw:Loopback,0,0": \(.*\)/\1/p' "/tmp/speaker-$LCFG.log" | head -1)
    bench "{\"config\":\"$LCFG\",\"audio\":\"$settings\",\"debounceMs\":30,\"tapMs\":100,\"detentStepUs\":3000}"
    first="a-high"; [ "$LCFG" = mix ] && first="m4a"
    mosquitto_pub -h "$BROKER" -t "$T/command" -q 1 -m "{\"id\":\"l1\",\"action\":\"select\",\"soundID\":\"$first\"}"
    wait_for session '"isPlaying":true' 10 || fail "latency ($LCFG): select $first plays" "$(retained session)"
    sleep 1
    # The cost of the configuration on the real driver, steady playing, 10 s:
    # CPU (utime+stime of all threads, USER_HZ 100) and context switches of
    # every thread (the busiest is the audio thread: its wake-ups).
    cost() {
        ticks=$(awk '{ print $14 + $15 }' /proc/"$SPK"/stat)
        for t in /proc/"$SPK"/task/*; do
            awk '/ctxt_switches/ { n += $2 } END { print n }' "$t/status"
        done | awk -v ticks="$ticks" '{ s += $1; if ($1 > m) m = $1 } END { print ticks, s, m }'
    }
    c0=$(cost); sleep 10; c1=$(cost)
    echo "$c0 $c1" | awk -v cfg="$LCFG" -v v="$V" '{
        printf "HIL BENCH [%s] {\"metric\":\"playing_cpu_%s\",\"value\":%.1f,\"unit\":\"%% of one CPU, 10 s, TCG guest\"}\n", v, cfg, ($4 - $1) / 10
        printf "HIL BENCH [%s] {\"metric\":\"playing_wakeups_%s\",\"value\":%.1f,\"unit\":\"context switches/s, all threads\",\"busiestThread\":%.1f}\n", v, cfg, ($5 - $2) / 10, ($6 - $3) / 10 }'
    b=0
    while [ $b -lt 4 ]; do
        cap_start
        i=0
        while [ $i -lt 5 ]; do
            hil-probe tap "$SIM"/sim_gpio17/pull 100 bounce >> /tmp/ev-pause; sleep 1
            hil-probe tap "$SIM"/sim_gpio17/pull 100 bounce >> /tmp/ev-play; sleep 1
            i=$((i + 1))
        done
        cap_stop pause play
        cap_start
        i=0
        while [ $i -lt 3 ]; do
            hil-probe tap "$SIM"/sim_gpio27/pull 100 bounce >> /tmp/ev-next; sleep 0.8
            hil-probe tap "$SIM"/sim_gpio22/pull 100 bounce >> /tmp/ev-next; sleep 0.8
            hil-probe detent "$SIM"/sim_gpio23/pull "$SIM"/sim_gpio24/pull -1 3000 bounce >> /tmp/ev-detent; sleep 0.5
            hil-probe detent "$SIM"/sim_gpio23/pull "$SIM"/sim_gpio24/pull 1 3000 bounce >> /tmp/ev-detent; sleep 0.5
            i=$((i + 1))
        done
        awk '{ print $2 }' /tmp/ev-detent > /tmp/ev-detentlast
        cap_stop next detent detentlast
        b=$((b + 1))
    done
    info "latency ($LCFG): arecord: $(tr '\n' ' ' < /tmp/arecord-lat.log | cut -c1-300)"
    stop_speaker || fail "latency ($LCFG): SIGTERM exits 0" "exit $?"
    for kind in pause play next detent detentlast; do
        n=$(grep -c ' after ' "/tmp/resp-$kind.txt")
        missed=$(grep -c 'no change' "/tmp/resp-$kind.txt")
        stats=$(sed -n 's/.* after \([0-9.]*\) ms/\1/p' "/tmp/resp-$kind.txt" | sort -n \
            | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f %.1f", v[int((NR + 1) / 2)], v[NR] }')
        [ -n "$stats" ] || stats="null null"
        bench "{\"metric\":\"response_${kind}_${LCFG}_p50\",\"value\":${stats% *},\"unit\":\"ms\",\"events\":$n,\"missed\":$missed}"
        bench "{\"metric\":\"response_${kind}_${LCFG}_max\",\"value\":${stats#* },\"unit\":\"ms\",\"events\":$n,\"missed\":$missed}"
        if [ "$n" -ge 20 ] && [ "$missed" -eq 0 ]; then pass "latency ($LCFG): $kind measured on $n events"
        else fail "latency ($LCFG): $kind measured" "$n events, $missed without a change: $(grep 'no change' "/tmp/resp-$kind.txt" | head -3 | tr '\n' ' ')"; fi
    done
    grep -E 'underrun' "/tmp/speaker-$LCFG.log" | tail -1 | while read -r l; do info "latency ($LCFG): $l"; done
    # Rewinds (snd_pcm_rewind on snd-aloop): how many, and the worst refill against the margin.
    grep -E "rewound the device queue|can't rewind" "/tmp/speaker-$LCFG.log" | tail -1 | while read -r l; do info "latency ($LCFG): $l"; done
done
