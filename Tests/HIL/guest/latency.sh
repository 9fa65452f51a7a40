# Audible response (issue 13), sourced by scenarios.sh: from the FIRST EDGE of an
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
bench() { echo "HIL BENCH [$V] $*"; }
mkdir -p /tmp/lsounds
hil-probe wav /tmp/lsounds/a-high.wav 30000 120 && hil-probe wav /tmp/lsounds/b-low.wav 15000 120
for LCFG in ${LATENCY_CONFIGS:-latency}; do
    rm -f /tmp/ev-*
    if ! start_speaker /hil/$LCFG.json /tmp/speaker-$LCFG.log; then fail "latency ($LCFG): speaker comes online" "not online"; continue; fi
    settings=$(sed -n 's/.*device "hw:Loopback,0,0": \(.*\)/\1/p' /tmp/speaker-$LCFG.log | head -1)
    bench "{\"config\":\"$LCFG\",\"audio\":\"$settings\",\"debounceMs\":30,\"tapMs\":100,\"detentStepUs\":3000}"
    arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -t raw --period-size=96 --buffer-size=4800 2>/tmp/arecord-lat.log \
        | hil-probe capture /tmp/lat.raw /tmp/lat.times &
    CAP=$!
    sleep 1
    mosquitto_pub $MQ -t "$T/command" -q 1 -m '{"id":"l1","action":"select","soundID":"a-high"}'
    wait_for session '"isPlaying":true' 10 || fail "latency ($LCFG): select a-high plays" "$(retained session)"
    sleep 1
    i=0
    while [ $i -lt 20 ]; do
        hil-probe tap $SIM/sim_gpio17/pull 100 bounce >> /tmp/ev-pause; sleep 1
        hil-probe tap $SIM/sim_gpio17/pull 100 bounce >> /tmp/ev-play; sleep 1
        i=$((i + 1))
    done
    i=0
    while [ $i -lt 10 ]; do
        hil-probe tap $SIM/sim_gpio27/pull 100 bounce >> /tmp/ev-next; sleep 0.8
        hil-probe tap $SIM/sim_gpio22/pull 100 bounce >> /tmp/ev-next; sleep 0.8
        i=$((i + 1))
    done
    i=0
    while [ $i -lt 10 ]; do
        hil-probe detent $SIM/sim_gpio23/pull $SIM/sim_gpio24/pull -1 3000 bounce >> /tmp/ev-detent; sleep 0.5
        hil-probe detent $SIM/sim_gpio23/pull $SIM/sim_gpio24/pull 1 3000 bounce >> /tmp/ev-detent; sleep 0.5
        i=$((i + 1))
    done
    sleep 0.5
    kill $(pidof arecord) 2>/dev/null; wait $CAP
    stop_speaker || fail "latency ($LCFG): SIGTERM exits 0" "exit $?"
    awk '{ print $2 }' /tmp/ev-detent > /tmp/ev-detent-last
    for kind in pause play next detent detent-last; do
        hil-probe respond /tmp/lat.raw /tmp/lat.times /tmp/ev-$kind "${kind}_$LCFG" 2 > /tmp/resp-$kind.txt
        rc=$?
        grep '^{' /tmp/resp-$kind.txt | while read -r line; do bench "$line"; done
        n=$(grep -c 'after' /tmp/resp-$kind.txt)
        [ $rc -eq 0 ] && [ "$n" -ge 20 ] && pass "latency ($LCFG): $kind measured on $n events" \
            || fail "latency ($LCFG): $kind measured" "$n events; $(grep -v after /tmp/resp-$kind.txt | head -5 | tr '\n' ' ')"
    done
    grep -E 'underrun' /tmp/speaker-$LCFG.log | tail -1 | while read -r l; do info "latency ($LCFG): $l"; done
done
