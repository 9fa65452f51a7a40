#!/usr/bin/env python3
"""Accelerated soak of the built speaker (issue 11): scripts/soak HOURS.

Runs `ambient-speaker run` with the simulated board (control socket), a FIFO
file pcm drained here, its state directory on a small tmpfs, and a private
mosquitto. A seeded random mix of presses, knob turns, commands (valid and
hostile), broker restarts, disk-full episodes and SIGHUPs replays HOURS of
use at COMPRESSION x (one simulated day in three real minutes: user actions
arrive every ~3 simulated minutes). After every step it checks:

  * revisions: every `session` a subscriber sees has a revision greater than
    all before it (a retained re-send of the same message is allowed);
  * results: every command got exactly one `command/result` (within 10 s);
  * audio: while the speaker says it is playing, the pcm keeps receiving bytes;
  * memory: after warm-up, RSS stays within +-1 MB of its warm-up level.

Prints the figures and `N passed, N failed` last; exits 1 on any violation.
Needs root (mounts the tmpfs), mosquitto, mosquitto_sub/pub.
"""
import json, os, random, signal, socket, subprocess, sys, tempfile, threading, time

COMPRESSION = 480.0          # simulated seconds per real second
MEAN_GAP_S = 180.0           # simulated seconds between user actions
RSS_BOUND_KB = 1024


def log(msg):
    print(msg, flush=True)


class Broker:
    def __init__(self, work):
        self.work = work
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        with open(f"{work}/mosquitto.conf", "w") as f:
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\nset_tcp_nodelay true\n")
        self.proc = None
        self.restarts = 0

    def start(self):
        self.proc = subprocess.Popen(["mosquitto", "-c", f"{self.work}/mosquitto.conf"],
                                     stdout=subprocess.DEVNULL, stderr=open(f"{self.work}/mosquitto.log", "a"))
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not start")

    def restart(self, down_s):
        self.proc.kill()
        self.proc.wait()
        time.sleep(down_s)
        self.start()
        self.restarts += 1

    def stop(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()


class Watcher:
    """mosquitto_sub -F %j on the speaker's topics; checks revisions as they arrive."""

    def __init__(self, port, root):
        self.root = root
        self.lock = threading.Condition()
        self.max_rev = 0
        self.max_payload = None
        self.sessions = 0
        self.violations = []
        self.results = {}          # id (or None) -> list of payload texts
        self.online_count = 0
        self.last_session = None
        self.device = None
        self.proc = subprocess.Popen(
            ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-F", "%j",
             "-t", f"{root}/session", "-t", f"{root}/device", "-t", f"{root}/command/result", "-t", f"{root}/availability"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.proc.stdout:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            topic, payload = m.get("topic", ""), m.get("payload", "")
            with self.lock:
                if topic.endswith("/session"):
                    self.session(payload)
                elif topic.endswith("/command/result"):
                    try:
                        rid = json.loads(payload).get("id")
                    except ValueError:
                        self.violations.append(f"unparseable result {payload!r}")
                        continue
                    self.results.setdefault(rid, []).append(payload)
                elif topic.endswith("/availability") and payload == "online":  # live, or retained when we reconnect late
                    self.online_count += 1
                elif topic.endswith("/device"):
                    self.device = payload
                self.lock.notify_all()

    def session(self, payload):
        self.sessions += 1
        try:
            s = json.loads(payload)
            r = s["revision"]
        except (ValueError, KeyError):
            self.violations.append(f"session without a revision: {payload[:200]}")
            return
        self.last_session = s
        if r < self.max_rev or (r == self.max_rev and payload != self.max_payload):
            self.violations.append(f"revision {r} after {self.max_rev}")
        if r > self.max_rev:
            self.max_rev, self.max_payload = r, payload

    def wait(self, predicate, timeout):
        with self.lock:
            return self.lock.wait_for(predicate, timeout)

    def stop(self):
        self.proc.kill()


class Audio:
    """Drains the speaker's FIFO pcm and counts the bytes."""

    def __init__(self, path):
        self.path = path
        self.bytes = 0
        os.mkfifo(path, 0o600)
        threading.Thread(target=self.drain, daemon=True).start()

    def drain(self):
        while True:
            with open(self.path, "rb", buffering=0) as f:
                while True:
                    chunk = f.read(65536)
                    if not chunk:
                        break
                    self.bytes += len(chunk)


class StateDisk:
    """A small tmpfs for the state directory, filled and freed in episodes."""

    def __init__(self, path):
        self.path = path
        os.makedirs(path)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k,mode=0755", "tmpfs", path], check=True)
        self.full = False
        self.episodes = 0

    def fill(self):
        fd = os.open(f"{self.path}/fill", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError:
            pass  # ENOSPC: full
        finally:
            os.close(fd)
        self.full = True
        self.episodes += 1

    def free(self):
        try:
            os.unlink(f"{self.path}/fill")
        except FileNotFoundError:
            pass
        self.full = False

    def unmount(self):
        subprocess.run(["umount", "-l", self.path], check=False)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def control(path, line):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    try:
        s.connect(path)
        s.sendall(line.encode() + b"\n")
        return s.makefile().readline().strip()
    finally:
        s.close()


HOSTILE = [  # (payload bytes, the id its result carries: a string, or None when it cannot be read)
    (lambda i: b"not json", None),
    (lambda i: b'{"action":"play"}', None),
    (lambda i: b'{"id":"h%d","action":"x\\n<0>main: FORGED"}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"setVolume","level":NaN}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"volumeUp","steps":99}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"select","soundID":"\\u0000\\u001b[2J"}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"play","id":"dup"}' % i, None),  # duplicate key: the id is not trusted
    (lambda i: b'{"id":"h%d","action":"play","pad":"' % i + b"x" * 5000 + b'"}', None),
    (lambda i: b'{"id":"h%d","action":"setVolume","level":1e308}' % i, "h%d"),
    (lambda i: b"\xff\xfe\x00garbage", None),
]

VALID = ['"action":"play"', '"action":"pause"', '"action":"toggle"', '"action":"next"', '"action":"previous"',
         '"action":"select","soundID":"rain"', '"action":"select","soundID":"surf"', '"action":"volumeUp"',
         '"action":"volumeDown","steps":2', '"action":"setVolume","level":0.3', '"action":"setVolume","level":0.6',
         '"action":"stop"']


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: scripts/soak HOURS [SEED]  (simulated hours of use; one day takes ~3 real minutes)")
    hours = float(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    binary = os.environ["SOAK_BIN"]
    if os.geteuid() != 0:
        sys.exit("scripts/soak: needs root (mounts a tmpfs for the state directory)")
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
    warm_step = None  # the step at which this process's warm-up ends
    expected = {}   # id -> results expected
    sent_at = {}    # id -> real time of the last send
    counts = {"commands": 0, "hostile": 0, "presses": 0, "turns": 0, "sighups": 0, "duplicates": 0}
    violations = []
    rss = {"start": None, "warm": None, "end": None, "min": None, "max": None}
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

    try:
        if not watcher.wait(lambda: watcher.online_count >= 1 and watcher.last_session is not None, 20):
            raise RuntimeError("the speaker never came online")
        rss["start"] = rss_kb(speaker.pid)
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
                speaker.kill()
                speaker.wait()
                before = watcher.online_count
                speaker = launch()
                power_cuts += 1
                rss["warm"] = None
                warm_step = step + 100
                if not watcher.wait(lambda: watcher.online_count > before, 20):
                    violations.append(f"step {step}: speaker not back online 20 s after a power cut")
            elif roll < 0.007:                                 # broker restart
                quiesce()
                before = watcher.online_count
                broker.restart(rng.uniform(0.1, 1.5))
                if not watcher.wait(lambda: watcher.online_count > before, 20):
                    violations.append(f"step {step}: speaker not back online 20 s after a broker restart")
            elif roll < 0.010 and disk_until is None:          # disk-full episode
                disk.fill()
                disk_until = step + rng.randint(50, 400)
            elif roll < 0.015:                                 # SIGHUP with changed live keys
                write_config(step)
                speaker.send_signal(signal.SIGHUP)
                counts["sighups"] += 1
            elif roll < 0.25:
                button = rng.choice(["playPause", "playPause", "next", "previous"])
                reply = control(f"{work}/control.sock", f"press {button}")
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
                playing = bool(watcher.last_session and watcher.last_session.get("isPlaying"))
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
            if rss["warm"] is None and sim_s >= warm_at and (warm_step is None or step >= warm_step):
                rss["warm"] = kb
            if rss["warm"] is not None:
                rss["min"] = min(rss["min"] or kb, kb)
                rss["max"] = max(rss["max"] or kb, kb)
                if abs(kb - rss["warm"]) > RSS_BOUND_KB:
                    violations.append(f"step {step}: RSS {kb} kB, warm-up level {rss['warm']} kB")
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
    log(f"commands {counts['commands']} valid + {counts['hostile']} hostile + {counts['duplicates']} duplicate ids, "
        f"presses {counts['presses']}, knob turns {counts['turns']}, SIGHUPs {counts['sighups']}")
    log(f"broker restarts {broker.restarts}, power cuts (kill -9) {power_cuts}, disk-full episodes {disk.episodes}, "
        f"sessions seen {watcher.sessions}, "
        f"last revision {watcher.max_rev}, audio {audio.bytes / 192000:.0f} s of 48 kHz stereo S16")
    log(f"RSS start {rss['start']} kB, after warm-up {rss['warm']} kB (of the last process; range after warm-up over "
        f"all processes {rss['min']}-{rss['max']}), end {rss['end']} kB")
    refused = sum(1 for v in watcher.results.values() for p in v if "state-unavailable" in p)
    with open(f"{work}/speaker.log", "rb") as f:
        text = f.read()
    log(f"session publishing stopped {text.count(b'session publishing stopped')} times, resumed "
        f"{text.count(b'session publishing resumed')} times; {refused} commands refused with state-unavailable")
    for v in violations[:50]:
        log(f"VIOLATION {v}")
    log(f"violations {len(violations)}; speaker log: {work}/speaker.log")
    kinds = {"revisions": ("revision",), "results": ("command", "result"), "audio": ("audio",),
             "memory": ("RSS",), "speaker": ("exit", "online", "press", "turn", "session without")}
    failed = [k for k, words in kinds.items() if any(any(w in v for w in words) for v in violations)]
    log(f"checks failed: {', '.join(failed) or 'none'}")
    log(f"{len(kinds) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()
