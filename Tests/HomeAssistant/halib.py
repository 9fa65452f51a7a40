# SPDX-License-Identifier: Apache-2.0
"""The parts Tests/HomeAssistant/check.py drives, with Python's standard
library only (it runs on the host, beside the speaker it starts): a private
mosquitto, a topic recorder (mosquitto_sub with QoS and retain flags), a
drained FIFO pcm, a minimal WebSocket client for Home Assistant's websocket
API and Chromium's DevTools protocol, Home Assistant's REST API, and
programs run inside the cached trixie root (Home Assistant, pytest,
chromium) in a private mount namespace."""
import base64
import json
import os
import queue
import socket
import struct
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for_port(port, timeout, proc=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


class Broker:
    """A private mosquitto on a free loopback port (log: connections and subscriptions)."""

    def __init__(self, work):
        self.port = free_port()
        self.log = f"{work}/mosquitto.log"
        with open(f"{work}/mosquitto.conf", "w") as f:
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous true\nset_tcp_nodelay true\n"
                    f"log_dest file {self.log}\nlog_type all\n")
        self.proc = subprocess.Popen(["mosquitto", "-c", f"{work}/mosquitto.conf"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_for_port(self.port, 10, self.proc):
            raise RuntimeError("mosquitto did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class Recorder:
    """Every message on the given topics, with the QoS it was delivered at
    (subscribed at QoS 2, so a message arrives at its publisher's QoS) and
    its retain flag, stamped with the host's monotonic clock on arrival."""

    def __init__(self, port, topics):
        self.messages = []
        self.cond = threading.Condition()
        args = ["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-q", "2", "-v", "-F", "%q %r %t %p"]
        for t in topics:
            args += ["-t", t]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            qos, retain, topic, payload = (line.rstrip("\n").split(" ", 3) + ["", "", "", ""])[:4]
            with self.cond:
                self.messages.append({"qos": int(qos), "retain": retain == "1", "topic": topic,
                                      "payload": payload, "t": time.monotonic()})
                self.cond.notify_all()

    def mark(self):
        with self.cond:
            return len(self.messages)

    def since(self, mark, topic=None):
        with self.cond:
            return [m for m in self.messages[mark:] if topic is None or m["topic"] == topic]

    def wait(self, predicate, timeout, mark=0, topic=None):
        """The first message from `mark` on (on `topic`) whose JSON payload satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        with self.cond:
            i = mark
            while True:
                while i < len(self.messages):
                    m = self.messages[i]
                    i += 1
                    if topic is not None and m["topic"] != topic:
                        continue
                    try:
                        value = json.loads(m["payload"])
                    except ValueError:
                        value = m["payload"]
                    try:
                        if predicate(value):
                            return value
                    except (KeyError, TypeError, AttributeError):
                        pass
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def last(self, topic):
        with self.cond:
            for m in reversed(self.messages):
                if m["topic"] == topic:
                    try:
                        return json.loads(m["payload"])
                    except ValueError:
                        return m["payload"]
        return None

    def stop(self):
        self.proc.terminate()


class DrainedFIFO:
    """The speaker's pcm: a FIFO read and discarded."""

    def __init__(self, path):
        self.path = path
        os.mkfifo(path, 0o600)
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        while True:
            with open(self.path, "rb", buffering=0) as f:
                while f.read(65536):
                    pass


def control(path, line):
    """One command on the simulated board's control socket; its one-line reply."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    try:
        s.connect(path)
        s.sendall(line.encode() + b"\n")
        return s.makefile().readline().strip()
    finally:
        s.close()


# MARK: programs in the trixie root

ROOT_PATH = "/opt/ha/bin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_IN_ROOT = r'''r=$1; w=$2; shift 2
mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" && mount --rbind /sys "$r/sys" && mount --bind "$w" "$r/mnt" || exit 125
exec chroot "$r" /usr/bin/env -i PATH=''' + ROOT_PATH + r''' HOME=/root LANG=C.UTF-8 TZ=UTC "$@"'''


def in_root(root, work, argv, **kwargs):
    """Starts argv in `root` (chroot, private mount namespace: /proc, /dev,
    /sys and the host directory `work` at /mnt). The returned process is the
    program itself (every step execs), so signals reach it directly."""
    return subprocess.Popen(["unshare", "--mount", "--propagation", "private", "bash", "-c", _IN_ROOT, "_",
                             root, work, *argv], **kwargs)


# MARK: WebSocket (RFC 6455, client side, text frames)

class WebSocket:
    def __init__(self, port, path, timeout=30):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            self.buf += chunk
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(f"websocket handshake refused: {head[:200]!r}")
        self.sock.settimeout(None)
        self.send_lock = threading.Lock()

    def _frame(self, opcode, data):
        header = bytearray([0x80 | opcode])
        n = len(data)
        if n < 126:
            header.append(0x80 | n)
        elif n < 65536:
            header.append(0x80 | 126)
            header += struct.pack(">H", n)
        else:
            header.append(0x80 | 127)
            header += struct.pack(">Q", n)
        mask = os.urandom(4)
        header += mask
        masked = (int.from_bytes(data, "big") ^ int.from_bytes((mask * (n // 4 + 1))[:n], "big")).to_bytes(n, "big") if n else b""
        with self.send_lock:
            self.sock.sendall(bytes(header) + masked)

    def send(self, obj):
        self._frame(0x1, json.dumps(obj).encode())

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                raise EOFError("websocket closed by peer")
            if opcode == 0x9:
                self._frame(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            message += payload
            if b0 & 0x80:
                return json.loads(message)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class RPCError(Exception):
    def __init__(self, error):
        super().__init__(json.dumps(error))
        self.error = error


class HomeAssistantWS:
    """Home Assistant's websocket API: commands by id; state changes queued
    with the host's monotonic arrival time."""

    def __init__(self, port, token):
        self.ws = WebSocket(port, "/api/websocket")
        if self.ws.recv().get("type") != "auth_required":
            raise ConnectionError("no auth_required")
        self.ws.send({"type": "auth", "access_token": token})
        reply = self.ws.recv()
        if reply.get("type") != "auth_ok":
            raise ConnectionError(f"auth failed: {reply}")
        self.next_id = 1
        self.results = {}
        self.cond = threading.Condition()
        self.states = queue.Queue()
        self.latest = {}
        self.events = {}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            while True:
                msg = self.ws.recv()
                if msg.get("type") == "event":
                    event = msg["event"]
                    if event.get("event_type") != "state_changed":
                        with self.cond:  # a subscription's own events (subscribe_trigger)
                            self.events.setdefault(msg.get("id"), []).append(event)
                            self.cond.notify_all()
                        continue
                    if event.get("event_type") == "state_changed":
                        self.states.put((time.monotonic(), event["data"]))
                        with self.cond:
                            self.latest[event["data"]["entity_id"]] = event["data"]["new_state"]
                            self.cond.notify_all()
                    continue
                with self.cond:
                    self.results[msg.get("id")] = msg
                    self.cond.notify_all()
        except (EOFError, OSError):
            with self.cond:
                self.results[None] = {"closed": True}
                self.cond.notify_all()

    def call(self, kind, timeout=30, **fields):
        with self.cond:
            mid = self.next_id
            self.next_id += 1
        self.ws.send({"id": mid, "type": kind, **fields})
        with self.cond:
            if not self.cond.wait_for(lambda: mid in self.results or None in self.results, timeout):
                raise TimeoutError(f"{kind}: no answer in {timeout} s")
            if mid not in self.results:
                raise ConnectionError("websocket closed")
            msg = self.results.pop(mid)
        if not msg.get("success"):
            raise RPCError(msg.get("error"))
        return msg.get("result")

    def service(self, domain, service, data=None, target=None, timeout=30):
        fields = {"domain": domain, "service": service, "service_data": data or {}}
        if target:
            fields["target"] = target
        return self.call("call_service", timeout=timeout, **fields)

    def subscribe_states(self):
        """Follow every state change; `latest` starts from get_states."""
        self.call("subscribe_events", event_type="state_changed")
        for state in self.call("get_states"):
            with self.cond:
                self.latest.setdefault(state["entity_id"], state)

    def subscribe_trigger(self, trigger):
        """Follows a trigger (e.g. a device trigger); returns the subscription id for `wait_event`."""
        with self.cond:
            sub = self.next_id
        self.call("subscribe_trigger", trigger=trigger)
        return sub

    def wait_event(self, sub, timeout):
        """The subscription's next event not yet taken, or None on timeout."""
        with self.cond:
            if self.cond.wait_for(lambda: self.events.get(sub), timeout):
                return self.events[sub].pop(0)
        return None

    def state(self, entity_id):
        with self.cond:
            return self.latest.get(entity_id)

    def wait_state(self, entity_id, predicate, timeout=20):
        """The entity's state object once `predicate` holds for it (None: it is
        removed), or None on timeout; woken by state_changed events."""
        def ok():
            try:
                return predicate(self.latest.get(entity_id))
            except (KeyError, TypeError, AttributeError):
                return False
        with self.cond:
            if self.cond.wait_for(ok, timeout):
                return self.latest.get(entity_id) or {}
        return None

    def drain_states(self):
        out = []
        while True:
            try:
                out.append(self.states.get_nowait())
            except queue.Empty:
                return out

    def close(self):
        self.ws.close()


# MARK: REST

def http(port, method, path, body=None, token=None, form=False, timeout=30):
    """(status, decoded JSON or text)."""
    headers = {}
    data = None
    if body is not None:
        if form:
            data = urllib.parse.urlencode(body).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        else:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, text = resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        status, text = err.code, err.read().decode()
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text

