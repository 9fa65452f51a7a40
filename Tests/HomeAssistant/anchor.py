# SPDX-License-Identifier: Apache-2.0
"""Anchors for the Home Assistant latency benchmark, measured in the same run
(check.py runs this in the trixie root, with Home Assistant's own paho-mqtt):
the broker's QoS 1 round trip (publish -> this client's own subscription
delivers it), and the speaker's toggle without Home Assistant (QoS 1
`toggle` command -> the `session` that shows it).

Usage: anchor.py BROKER_PORT TOPIC_ROOT N   (prints two JSON lines)"""
import json
import socket
import statistics
import sys
import threading
import time
import uuid

import paho.mqtt.client as mqtt

port, root, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
cond = threading.Condition()
inbox = []


def on_message(client, userdata, msg):
    with cond:
        inbox.append((time.monotonic(), msg.topic, msg.payload))
        cond.notify_all()


def wait_for(predicate, start, timeout=20):
    """The first (time, topic, payload) from inbox[start:] that satisfies predicate."""
    deadline = time.monotonic() + timeout
    i = start
    with cond:
        while True:
            while i < len(inbox):
                if predicate(inbox[i]):
                    return inbox[i]
                i += 1
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("anchor: no answer")
            cond.wait(left)


probe = f"anchor/{uuid.uuid4().hex[:8]}"
client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"anchor-{uuid.uuid4().hex[:8]}")
client.on_message = on_message
client.connect("127.0.0.1", port)
# Without TCP_NODELAY each publish waits for the broker's delayed ACK of the
# previous PUBACK (~40 ms): that is Nagle, not the broker.
client.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
client.loop_start()
client.subscribe([(probe, 1), (f"{root}/session", 1)])
client.publish(probe, "ready", qos=1)
wait_for(lambda m: m[1] == probe and m[2] == b"ready", 0)

round_trips = []
for i in range(n):
    start = len(inbox)
    sent = time.monotonic()
    client.publish(probe, str(i), qos=1)
    got = wait_for(lambda m: m[1] == probe and m[2] == str(i).encode(), start)
    round_trips.append(got[0] - sent)


def session(m):
    try:
        return json.loads(m[2]) if m[1] == f"{root}/session" else None
    except ValueError:
        return None


toggles = []
for i in range(n):
    with cond:
        before = next(s for s in (session(m) for m in reversed(inbox)) if s)
    start = len(inbox)
    sent = time.monotonic()
    client.publish(f"{root}/command", json.dumps({"id": f"anchor-{i}-{uuid.uuid4().hex[:6]}", "action": "toggle"}), qos=1)
    got = wait_for(lambda m: (s := session(m)) is not None and s["isPlaying"] != before["isPlaying"]
                   and s["revision"] > before["revision"], start)
    toggles.append(got[0] - sent)
client.loop_stop()
client.disconnect()
print(json.dumps({"metric": "broker_qos1_round_trip_p50", "value": round(statistics.median(round_trips) * 1000, 2),
                  "unit": "ms", "n": n}))
print(json.dumps({"metric": "speaker_toggle_to_session_p50_without_ha", "value": round(statistics.median(toggles) * 1000, 2),
                  "unit": "ms", "n": n}))
