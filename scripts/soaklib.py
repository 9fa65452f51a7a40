# SPDX-License-Identifier: Apache-2.0
"""The parts scripts/soak.py drives: a private mosquitto, a subscriber that
checks revisions as they arrive, a drained FIFO pcm, a small tmpfs state
directory, and the command mix (valid and hostile payloads)."""
import json, os, socket, subprocess, threading, time


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

    def __init__(self, port, root, subscribe=True):
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
        if not subscribe:
            return  # a checker only (self_test)
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
    (lambda i: b'{"id":"h%d","action":"setSleepTimer","minutes":0}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"setSleepTimer","minutes":5,"fadeSeconds":1e9}' % i, "h%d"),
    (lambda i: b"\xff\xfe\x00garbage", None),
    (lambda i: b'{"id":"h%d","action":"setSchedules","schedules":[{"at":"25:00","action":"play"}]}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"setSchedules","schedules":[{"at":"07:00","action":"play","level":NaN}]}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"setScheduleEnabled","index":99,"enabled":true}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"setNightCap","nightCap":{"from":"22:00","to":"22:00","maxLevel":0.3}}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"saveMix","mixID":"m","name":"M","layers":[{"soundID":"nope","level":0.5}]}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"saveMix","mixID":"m","name":"M","layers":[{"soundID":"rain","level":9}]}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"setLayerLevel","soundID":"\\u0000","level":-1}' % i, "h%d"),
    (lambda i: b'{"id":"h%d","action":"deleteMix","mixID":7}' % i, "h%d"),
]

VALID = ['"action":"play"', '"action":"pause"', '"action":"toggle"', '"action":"next"', '"action":"previous"',
         '"action":"select","soundID":"rain"', '"action":"select","soundID":"surf"', '"action":"volumeUp"',
         '"action":"volumeDown","steps":2', '"action":"setVolume","level":0.3', '"action":"setVolume","level":0.6',
         '"action":"stop"',
         '"action":"setSchedules","schedules":[{"at":"07:00","action":"play","soundID":"rain","fadeSeconds":5},'
         '{"at":"22:30","days":["mon","fri"],"action":"stop","fadeSeconds":5}]',
         '"action":"setScheduleEnabled","index":0,"enabled":false', '"action":"setScheduleEnabled","index":0,"enabled":true',
         '"action":"setNightCap","nightCap":{"from":"22:00","to":"07:00","maxLevel":0.5}', '"action":"setNightCap","nightCap":null',
         '"action":"saveMix","mixID":"soak","name":"Soak","layers":[{"soundID":"rain","level":0.6},{"soundID":"pink","level":0.3}]',
         '"action":"select","soundID":"soak"', '"action":"setLayerLevel","soundID":"rain","level":0.2',
         '"action":"setLayerLevel","soundID":"pink","level":0.9', '"action":"deleteMix","mixID":"soak"',
         '"action":"setSleepTimer","minutes":1,"fadeSeconds":20',
         '"action":"setSleepTimer","minutes":2', '"action":"cancelSleepTimer"', '"action":"mute"', '"action":"unmute"']


class RulePlan:
    """The schedule rules the soak has given the speaker (zone UTC): those of
    its config file, changed by each `setSchedules`/`setScheduleEnabled` it
    sent that the speaker accepted, in the order sent. Tells which of the
    occurrences the soak steps the clock to must fire."""

    DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    def __init__(self, rules):
        self.initial = [self.rule(r) for r in rules]
        self.changes = []  # (id, command) in the order sent

    @classmethod
    def rule(cls, r):
        return {"at": r["at"], "days": set(r.get("days", cls.DAYS)), "enabled": r.get("enabled", True)}

    def sent(self, payload):
        """Notes a command payload if it changes the rules."""
        try:
            command = json.loads(payload)
        except (ValueError, RecursionError):
            return
        if isinstance(command, dict) and command.get("action") in ("setSchedules", "setScheduleEnabled"):
            self.changes.append((command.get("id"), command))

    def rules(self, changes_sent, results):
        """The rules after the first `changes_sent` changes; `results`: id -> result texts, first one first."""
        rules = [dict(r) for r in self.initial]
        for rid, command in self.changes[:changes_sent]:
            try:
                accepted = json.loads(results.get(rid, ["{}"])[0]).get("ok") is True
                if not accepted:
                    continue
                if command["action"] == "setSchedules":
                    rules = [self.rule(r) for r in command["schedules"]]
                else:
                    rules[command["index"]]["enabled"] = command["enabled"]
            except (ValueError, KeyError, IndexError, TypeError):
                continue  # accepted, yet not as the soak reads it: it expects nothing of it
        return rules

    def expects(self, occurrence, changes_sent, results):
        """Whether an enabled rule falls at `occurrence` (Unix seconds)."""
        t = time.gmtime(occurrence)
        at, day = f"{t.tm_hour:02d}:{t.tm_min:02d}", self.DAYS[t.tm_wday]
        return t.tm_sec == 0 and any(r["enabled"] and r["at"] == at and day in r["days"]
                                     for r in self.rules(changes_sent, results))


def self_test():
    """The revision checker must catch what it exists to catch: a repeat
    with different content and a step back (a checker that cannot fail is a defect);
    the rule plan must tell a rule that fires from one that was disabled."""
    w = Watcher(0, "x", subscribe=False)
    for r, extra in [(1, ""), (2, ""), (2, ""), (2, "changed"), (1, ""), (3, "")]:
        w.session(json.dumps({"revision": r, "x": extra}))
    assert w.violations == ["revision 2 after 2", "revision 1 after 2"], w.violations
    plan = RulePlan([{"at": "07:00", "action": "play"}, {"at": "22:30", "days": ["mon"], "action": "stop"}])
    plan.sent(b'{"id":"a","action":"setScheduleEnabled","index":0,"enabled":false}')
    plan.sent(b'{"id":"b","action":"setScheduleEnabled","index":0,"enabled":true}')
    monday_7, tuesday_2230 = 1_800_255_600, 1_800_397_800  # 2027-01-18T07:00Z, 2027-01-19T22:30Z
    results = {"a": ['{"id":"a","ok":true}'], "b": ['{"id":"b","ok":false}']}
    assert plan.expects(monday_7, 0, results) and not plan.expects(tuesday_2230, 0, results)
    assert not plan.expects(monday_7, 2, results) and plan.expects(monday_7, 1, {})
