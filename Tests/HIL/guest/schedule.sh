# SPDX-License-Identifier: Apache-2.0
# Schedule scenario, sourced by scenarios.sh (uses its pass/fail/wait_for/
# start_speaker): the VM's own clock starts in 1970 and unsynchronised, so
# the 07:00 (Europe/Berlin) rule must not fire; then the clock is marked
# synchronised and stepped to 06:59:40 local, as NTP does at boot. The speaker
# must notice the step (a cancel-on-set timerfd) and the sync that follows it
# (setting the clock clears the kernel's sync flag, so NTP — and this
# scenario — marks it synchronised after stepping), publish the rule as next,
# fire it at 07:00 on the VM's clock and play audio into snd-aloop.
# shellcheck shell=sh
T_SAVED=$T
T=ambient-speaker/hilsched
CLOCK_BEFORE=$(date +%s)
RULE_AT=1796191200   # 2026-12-02T06:00:00Z = 07:00 in Berlin
mosquitto_sub -h "$BROKER" -v -t "$T/#" > /tmp/mqtt-sched.log 2>&1 &
SCHEDSUB=$!
date -s @100000 > /dev/null
if start_speaker /hil/schedule.json /tmp/speaker-sched.log; then pass "schedule speaker starts with the clock in 1970"
else fail "schedule speaker starts" "not online"; fi
if wait_for schedules '"clockSynced":false,"next":null' 5 && ! retained session | grep -q '"isPlaying":true'; then
    pass "unsynchronised clock: no next rule claimed, nothing plays"
else fail "unsynchronised clock" "$(retained schedules) $(retained session)"; fi
date -s @$((RULE_AT - 240)) > /dev/null
hil-probe sync-clock > /tmp/sync-clock.txt 2>&1 || info "sync-clock: $(cat /tmp/sync-clock.txt)"
if wait_for schedules '"next":{"rule":0,"at":"2026-12-02T06:00:00.000Z"}' 200 && grep -q 'the wall clock was set' /tmp/speaker-sched.log; then
    pass "the clock step is noticed at once and the 07:00 Berlin rule is next (06:00Z)"
else fail "clock step noticed" "$(retained schedules) $(grep -i clock /tmp/speaker-sched.log | tail -3 | tr '\n' ';')"; fi
if retained session | grep -q '"isPlaying":true'; then fail "no rule before its time" "playing at $(date -u +%T)"
else pass "nothing plays before 07:00"; fi
if wait_for session '"isPlaying":true' 300; then
    FIRED=$(date +%s)
    if [ "$FIRED" -ge "$RULE_AT" ]; then pass "the rule fires on the VM clock (playing at $(date -u +%T)Z, rule at 06:00:00Z)"
    else fail "the rule fires on time" "playing at $FIRED, before $RULE_AT"; fi
else fail "the rule fires on the VM clock" "$(retained session) $(tail -5 /tmp/speaker-sched.log | tr '\n' ';')"; fi
sleep 2   # the 2 s fade-in
arecord -q -D hw:Loopback,1,0 -f S16_LE -r 48000 -c 2 -t raw -d 1 /tmp/s1.raw 2>/tmp/arecord-sched.log
RS=$(hil-probe rms /tmp/s1.raw)
if [ "${RS:-0}" -gt 10 ]; then pass "the scheduled playback reaches hw:Loopback,1,0 (rms $RS)"
else fail "scheduled audio on hw:Loopback,1,0" "rms $RS $(cat /tmp/arecord-sched.log)"; fi
info "schedule speaker: $(grep -E 'schedule rule|wall clock' /tmp/speaker-sched.log | sed 's/^<[0-9]>main: //' | tr '\n' ';')"
stop_speaker || fail "schedule speaker: SIGTERM exits 0" "exit $?"
kill $SCHEDSUB 2>/dev/null
date -s @$((CLOCK_BEFORE + 60)) > /dev/null
T=$T_SAVED
