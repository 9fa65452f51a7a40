#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Accelerated soak of the built speaker: scripts/soak HOURS [SEED].

Runs `ambient-speaker run` with the simulated board (control socket), a FIFO
file pcm drained here, its state directory on a small tmpfs, and a private
mosquitto. A seeded random mix of presses, knob turns, commands (valid and
hostile), broker restarts, disk-full episodes and SIGHUPs replays HOURS of
use at COMPRESSION x (one simulated day in three real minutes: user actions
arrive every ~3 simulated minutes). After every step it checks:

  * revisions: every `session` a subscriber sees has a revision greater than
    all before it (a retained re-send of the same message is allowed);
  * results: every command got exactly one `command/result` (within 10 s),
    or after a power cut perhaps the same result once more (the next process
    sends again what the journal still owed: mqtt-contract.md, "Delivery");
  * audio: while the speaker says it is playing, the pcm keeps receiving bytes;
  * schedules: the speaker runs on the simulated board's wall clock, which
    the soak steps (forward up to a day, often to just before a rule; back
    by less than a day from the furthest time reached) without touching the
    host's; no rule occurrence fires twice, across steps and power cuts;
  * rule firings: of the occurrences the clock was stepped to just before
    while synchronised, those of a rule the soak left enabled for that day
    (`RulePlan`: the config's rules, then the accepted schedule commands),
    at least one fired (when there were any);
  * memory: each process first tours every valid command (a mix played
    among them), so that what a feature allocates once is allocated before
    the warm-up ends; after warm-up, RSS never rises more than 1 MB above
    the highest level the warm-up saw (a level that merely depends on what
    plays, one sound or a mix, is not a leak; growth is).

Prints the figures and `N passed, N failed` last; exits 1 on any violation.
Needs root (mounts the tmpfs), mosquitto, mosquitto_sub/pub.
"""
import json, os, random, signal, subprocess, sys, tempfile, time

from soaklib import HOSTILE, VALID, Audio, Broker, RulePlan, StateDisk, Watcher, control, rss_kb, self_test

COMPRESSION = 480.0          # simulated seconds per real second
MEAN_GAP_S = 180.0           # simulated seconds between user actions
RSS_BOUND_KB = 1024
# The config file's rules (zone UTC); the clock steps aim at these times.
SCHEDULES = [{"at": "07:00", "action": "play", "soundID": "rain", "fadeSeconds": 5},
             {"at": "22:30", "action": "stop", "fadeSeconds": 5}]


def log(msg):
    print(msg, flush=True)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: scripts/soak HOURS [SEED]  (simulated hours of use; one day takes ~3 real minutes)")
    hours = float(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    binary = os.environ["SOAK_BIN"]
    if os.geteuid() != 0:
        sys.exit("scripts/soak: needs root (mounts a tmpfs for the state directory)")
    self_test()
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="speaker-soak-")
    broker = Broker(work)
    broker.start()
    disk = StateDisk(f"{work}/state")
    audio = Audio(f"{work}/pcm.fifo")
    root = "ambient-speaker/soak"
    config_path = f"{work}/config.json"

    def write_config(step):
        with open(config_path, "w") as f:
            json.dump({"device": {"id": "soak", "name": f"Soak {step}"},
                       "board": {"kind": "simulated", "controlSocket": f"{work}/control.sock"},
                       "audio": {"device": f"file:'{audio.path}',raw", "fadeMs": 50, "crossfadeMs": 100,
                                 "soundsDirectory": f"{work}/sounds"},
                       "volume": {"step": 0.05 if step % 2 == 0 else 0.04},
                       "clock": {"timeZone": "UTC"},
                       "schedules": SCHEDULES,
                       "session": {"idleTimeoutSeconds": 3},
                       "mqtt": {"host": "127.0.0.1", "port": broker.port, "homeAssistant": {"enabled": False}},
                       "stateDirectory": disk.path}, f)

    os.makedirs(f"{work}/sounds")
    write_config(0)
    watcher = Watcher(broker.port, root)
    def launch():
        return subprocess.Popen([binary, "run", "--config", config_path, "--log-level", "info"],
                                stdout=subprocess.DEVNULL, stderr=open(f"{work}/speaker.log", "ab"))

    speaker = launch()
    power_cuts = 0
    clock = {"offset": 0, "furthest": time.time(), "steps": 0, "synced": False}  # the simulated clock, seconds from the host's
    plan = RulePlan(SCHEDULES)
    aimed = []  # (occurrence, schedule commands sent before) for each step to just before a rule's time while synced

    def clock_setup():
        """A new process starts on the host's clock: synced, and moved to where the last one was."""
        control(f"{work}/control.sock", "clock synced on")
        clock["synced"] = True
        if clock["offset"]:
            control(f"{work}/control.sock", f"clock {clock['offset']:+d}")

    def clock_step():
        now = time.time() + clock["offset"]
        clock["furthest"] = max(clock["furthest"], now)  # the speaker's schedule has seen time pass since the last step
        to_rule = rng.random() < 0.8
        if to_rule:  # to 2 s before the next 07:00 or 22:30 (UTC) not yet passed, at most a day on
            ahead = clock["furthest"]
            day = int(ahead) // 86400 * 86400
            targets = [t - 2 for d in (0, 86400) for t in (day + d + 7 * 3600, day + d + 22 * 3600 + 1800) if t - 2 > ahead]
            delta = int(min(targets) - now)
        else:  # anywhere within a day on, or back to less than a day before the furthest time reached
            delta = rng.randint(int(clock["furthest"] - now) - 80000, 86400)
        reply = control(f"{work}/control.sock", f"clock {delta:+d}")
        if reply.startswith("ok"):
            clock["offset"] += delta
            clock["steps"] += 1
            clock["furthest"] = max(clock["furthest"], time.time() + clock["offset"])
            if to_rule and clock["synced"]:
                aimed.append((min(targets) + 2, len(plan.changes)))
        return reply, to_rule
    warm_step = None  # the step at which this process's warm-up ends
    expected = {}   # id -> results expected
    answered_before_cut = set()  # ids with a result before the last power cut
    repeats = [0]   # results sent again by the process after a power cut (identical)
    sent_at = {}    # id -> real time of the last send
    counts = {"commands": 0, "hostile": 0, "presses": 0, "turns": 0, "sighups": 0, "duplicates": 0}
    violations = []
    rss = {"start": None, "warm": None, "peak": None, "end": None, "min": None, "max": None}
    sim_s = 0.0
    total_sim_s = hours * 3600
    warm_at = total_sim_s * 0.15
    hostile_n = 0
    audio_mark = None  # (time, bytes) when the speaker was last seen playing
    disk_until = None
    started = time.time()

    def publish(payload):
        subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(broker.port), "-q", "1",
                        "-t", f"{root}/command", "-s"], input=payload, check=True, stderr=subprocess.DEVNULL)
        plan.sent(payload)

    def expect(rid):
        expected[rid] = expected.get(rid, 0) + 1
        sent_at[rid] = time.time()

    def check_results(final=False):
        now = time.time()
        with watcher.lock:
            got = {k: len(v) for k, v in watcher.results.items()}
            for rid, n in expected.items():
                have = got.get(rid, 0)
                if have > n:
                    texts = watcher.results[rid]
                    if rid in answered_before_cut and all(t in texts[:n] for t in texts[n:]):
                        repeats[0] += have - n  # the same answer again, from the next process
                    else:
                        violations.append(f"command {rid!r}: {have} results for {n} sends")
                    expected[rid] = have  # report once
                elif have < n and (final or now - sent_at[rid] > 10):
                    violations.append(f"command {rid!r}: {have} results for {n} sends after 10 s")
                    expected[rid] = have
            for rid in got:
                if rid not in expected:
                    violations.append(f"a result for {rid!r}, which was never sent")
                    expected[rid] = got[rid]

    def quiesce():
        watcher.wait(lambda: all(len(watcher.results.get(k, [])) >= n for k, n in expected.items()), 10)

    tours = [0]

    def tour():
        """Every valid command once, in order (the mix is saved, played and its
        layers changed before it is deleted), each given time to be heard."""
        tours[0] += 1
        for i, body in enumerate(VALID):
            rid = f"t{tours[0]}-{i}"
            publish(("{" + f'"id":"{rid}",' + body + "}").encode())
            expect(rid)
            time.sleep(0.05)
        quiesce()

    try:
        if not watcher.wait(lambda: watcher.online_count >= 1 and watcher.last_session is not None, 20):
            raise RuntimeError("the speaker never came online")
        rss["start"] = rss_kb(speaker.pid)
        clock_setup()
        tour()
        step = 0
        while sim_s < total_sim_s:
            step += 1
            gap = rng.expovariate(1 / MEAN_GAP_S)
            sim_s += gap
            time.sleep(min(gap / COMPRESSION, 2.0))
            roll = rng.random()
            if disk_until is not None and step >= disk_until:
                disk.free()
                disk_until = None
            if roll < 0.003:                                   # power cut: kill -9, start again
                quiesce()
                with watcher.lock:
                    answered_before_cut.update(k for k, v in watcher.results.items() if v)
                speaker.kill()
                speaker.wait()
                before = watcher.online_count
                speaker = launch()
                power_cuts += 1
                audio_mark = None  # the new process's audio is judged from its own sessions
                rss["warm"] = None
                rss["peak"] = None
                warm_step = step + 100
                if not watcher.wait(lambda: watcher.online_count > before, 20):
                    violations.append(f"step {step}: speaker not back online 20 s after a power cut")
                clock_setup()
                tour()
            elif roll < 0.007:                                 # broker restart
                quiesce()
                before = watcher.online_count
                broker.restart(rng.uniform(0.1, 1.5))
                if not watcher.wait(lambda: watcher.online_count > before, 20):
                    violations.append(f"step {step}: speaker not back online 20 s after a broker restart")
            elif roll < 0.010 and disk_until is None:          # disk-full episode
                disk.fill()
                disk_until = step + rng.randint(50, 400)
            elif roll < 0.035:                                 # the wall clock steps
                reply, to_rule = clock_step()
                if not reply.startswith("ok"):
                    violations.append(f"step {step}: clock: {reply}")
                if to_rule:  # give the rule its time to fire before the next action
                    time.sleep(3)
            elif roll < 0.040:                                 # SIGHUP with changed live keys
                write_config(step)
                speaker.send_signal(signal.SIGHUP)
                counts["sighups"] += 1
            elif roll < 0.25:
                button = rng.choice(["playPause", "playPause", "next", "previous", "encoderSwitch"])
                verb = "hold" if button == "encoderSwitch" and rng.random() < 0.5 else "press"
                line = f"hold {button} 900" if verb == "hold" else f"press {button}"  # hold: the sleep timer's cycle
                reply = control(f"{work}/control.sock", line)
                counts["presses"] += 1
                if not reply.startswith("ok"):
                    violations.append(f"step {step}: press {button}: {reply}")
            elif roll < 0.45:
                reply = control(f"{work}/control.sock", f"turn {rng.choice(['+', '-'])}{rng.randint(1, 6)}")
                counts["turns"] += 1
                if not reply.startswith("ok"):
                    violations.append(f"step {step}: turn: {reply}")
            elif roll < 0.55:
                hostile_n += 1
                make, rid = rng.choice(HOSTILE)
                publish(make(hostile_n))
                expect(rid % hostile_n if rid else None)
                counts["hostile"] += 1
            elif roll < 0.57 and expected:
                rid = rng.choice([k for k in expected if k is not None and k.startswith("c")] or [None])
                if rid is not None:
                    publish(json.dumps({"id": rid, "action": "play"}).encode())
                    expect(rid)
                    counts["duplicates"] += 1
            else:
                rid = f"c{step}"
                publish(("{" + f'"id":"{rid}",' + rng.choice(VALID) + "}").encode())
                expect(rid)
                counts["commands"] += 1
            check_results()
            with watcher.lock:
                # While `session` is withheld (device.problem) the last one seen is stale: no audio claim to check.
                withheld = bool(watcher.device and '"problem"' in watcher.device)
                playing = bool(watcher.last_session and watcher.last_session.get("isPlaying")) and not withheld
                violations.extend(f"step {step}: {v}" for v in watcher.violations)
                watcher.violations.clear()
            now = time.time()
            if playing:
                if audio_mark is None:
                    audio_mark = (now, audio.bytes)
                elif now - audio_mark[0] > 3:
                    if audio.bytes <= audio_mark[1]:
                        violations.append(f"step {step}: no audio for {now - audio_mark[0]:.1f} s while playing")
                    audio_mark = (now, audio.bytes)
            else:
                audio_mark = None
            kb = rss_kb(speaker.pid)
            if rss["warm"] is None:
                rss["peak"] = max(rss["peak"] or kb, kb)  # the warm-up's highest level
                if sim_s >= warm_at and (warm_step is None or step >= warm_step):
                    rss["warm"] = rss["peak"]
            if rss["warm"] is not None:
                rss["min"] = min(rss["min"] or kb, kb)
                rss["max"] = max(rss["max"] or kb, kb)
                if kb - rss["warm"] > RSS_BOUND_KB:
                    violations.append(f"step {step}: RSS {kb} kB, warm-up peak {rss['warm']} kB")
                    rss["warm"] = kb  # report each drift once
            if speaker.poll() is not None:
                violations.append(f"step {step}: the speaker exited with {speaker.returncode}")
                break
            if step % 500 == 0:
                log(f"soak: step {step}, {sim_s / 3600:.1f} simulated h, {time.time() - started:.0f} s, "
                    f"RSS {kb} kB, revision {watcher.max_rev}, {len(violations)} violations")
        if disk_until is not None:
            disk.free()
        quiesce()
        check_results(final=True)
        rss["end"] = rss_kb(speaker.pid) if speaker.poll() is None else 0
    finally:
        speaker.send_signal(signal.SIGTERM)
        try:
            code = speaker.wait(10)
        except subprocess.TimeoutExpired:
            speaker.kill()
            code = "killed after 10 s"
        watcher.stop()
        broker.stop()
        disk.unmount()
    if code != 0:
        violations.append(f"exit status after SIGTERM: {code}")
    real = time.time() - started
    log(f"seed {seed}: {sim_s / 3600:.1f} simulated hours in {real / 60:.1f} real minutes ({step} steps)")
    log(f"commands {counts['commands']} valid + {counts['hostile']} hostile + {counts['duplicates']} duplicate ids "
        f"+ {tours[0]} tours of {len(VALID)}, "
        f"presses {counts['presses']}, knob turns {counts['turns']}, SIGHUPs {counts['sighups']}")
    log(f"results sent again after a power cut (identical): {repeats[0]}")
    log(f"broker restarts {broker.restarts}, power cuts (kill -9) {power_cuts}, disk-full episodes {disk.episodes}, "
        f"sessions seen {watcher.sessions}, "
        f"last revision {watcher.max_rev}, audio {audio.bytes / 192000:.0f} s of 48 kHz stereo S16")
    log(f"RSS start {rss['start']} kB, warm-up peak {rss['warm']} kB (of the last process; range after warm-up over "
        f"all processes {rss['min']}-{rss['max']}), end {rss['end']} kB")
    refused = sum(1 for v in watcher.results.values() for p in v if "state-unavailable" in p)
    with open(f"{work}/speaker.log", "rb") as f:
        text = f.read()
    log(f"session publishing stopped {text.count(b'session publishing stopped')} times, resumed "
        f"{text.count(b'session publishing resumed')} times; {refused} commands refused with state-unavailable")
    # An occurrence fires once. The one exception the speaker cannot avoid: the state file could not
    # be written after it fired (a full disk) and a power cut came before it could be.
    fires, unsaved, lost, excused = [], set(), set(), 0
    for line in text.split(b"\n"):
        if b"schedule rule " in line and line.endswith(b" fires"):
            occurrence = line.split(b"occurrence ")[1].split(b" ")[0] + b" " + line.split(b" at ")[1].split(b",")[0]
            if occurrence in lost:
                excused += 1
            elif occurrence in fires:
                violations.append(f"schedule occurrence {occurrence.decode()} fired again")
            fires.append(occurrence)
            unsaved.discard(occurrence)
            lost.discard(occurrence)
        elif b"cannot save the state" in line and fires:
            unsaved.add(fires[-1])     # its fired mark may not be on disk
        elif line.endswith(b"main: ready"):
            lost |= unsaved            # a new process: what was not saved is forgotten
            unsaved = set()
    log(f"clock steps {clock['steps']} (simulated clock {clock['offset']:+d} s from the host's at the end), "
        f"schedule rules fired {len(fires)} times for {len(set(fires))} occurrences "
        f"({excused} again after a power cut while the state file could not be written)")
    # The floor under "fires once": a soak whose rules never fire checks nothing about them.
    with watcher.lock:
        results = {k: list(v) for k, v in watcher.results.items()}
    due = {t for t, sent in aimed if plan.expects(t, sent, results)}
    fired_at = {int(f.split(b" ")[0]) for f in fires}
    log(f"clock steps to just before a rule {len(aimed)}, of an enabled rule {len(due)}, "
        f"of which fired {len(due & fired_at)}")
    if due and not due & fired_at:
        violations.append(f"no rule fired at any of the {len(due)} occurrences of an enabled rule "
                          f"the synchronised clock was stepped to ({len(fires)} fires in all)")
    for v in violations[:50]:
        log(f"VIOLATION {v}")
    log(f"violations {len(violations)}; speaker log: {work}/speaker.log")
    kinds = {"revisions": ("revision",), "results": ("command", "result"), "audio": ("audio",),
             "memory": ("RSS",), "schedules": ("schedule", "clock:"), "rule firings": ("no rule fired",),
             "speaker": ("exit", "online", "press", "turn", "session without")}
    failed = [k for k, words in kinds.items() if any(any(w in v for w in words) for v in violations)]
    log(f"checks failed: {', '.join(failed) or 'none'}")
    log(f"{len(kinds) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()
