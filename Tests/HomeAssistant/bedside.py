# SPDX-License-Identifier: Apache-2.0
"""The bedside entities (sleep timer, mute, schedules, night cap) and mixes,
used both ways from a real Home Assistant: each is set from Home Assistant
and seen on the speaker's topics, and set over MQTT and seen in Home
Assistant. Called by check.py with the speaker running as an absolute
(software volume) device, playing; `relative` after its gpio-step restart."""
import json
import subprocess
import time
from datetime import datetime

from haparts import DEVICE

TOPIC = f"ambient-speaker/{DEVICE}"
MIX = {"id": "night", "name": "Night",
       "layers": [{"soundID": "pink", "level": 0.6}, {"soundID": "brown", "level": 0.3}]}
# Rule times far from when CI runs; the second rule starts disabled.
RULES = [{"at": "04:17", "action": "play", "soundID": "pink"},
         {"at": "04:47", "days": ["sat", "sun"], "action": "stop", "enabled": False}]
CONFIG = {"mixes": [MIX], "schedules": RULES}


def unique(key):
    return f"ambient-speaker-{DEVICE}-{key}"


def entity_ids(ws):
    """unique_id → entity_id for the speaker's discovery entities."""
    return {e.get("unique_id"): e["entity_id"] for e in ws.call("config/entity_registry/list")
            if str(e.get("unique_id", "")).startswith(unique(""))}


def wait_entity(ws, key, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        entity = entity_ids(ws).get(unique(key))
        if entity and ws.state(entity):
            return entity
        time.sleep(0.3)
    return None


def mqtt_command(port, action, **fields):
    """A command from another controller (a phone), straight to the speaker."""
    payload = json.dumps({"id": f"phone-{time.monotonic_ns()}", "action": action, **fields})
    subprocess.run(["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-t", f"{TOPIC}/command",
                    "-m", payload], check=True, timeout=10)


def same_instant(a, b):
    """Two ISO-8601 instants in the same second (Home Assistant shows a timestamp sensor to the second)."""
    try:
        return int(datetime.fromisoformat(a.replace("Z", "+00:00")).timestamp()) == \
            int(datetime.fromisoformat(b.replace("Z", "+00:00")).timestamp())
    except (AttributeError, ValueError):
        return False


def sleep_timer_of(session):
    return (session or {}).get("sleepTimer")


def number(state):
    """A numeric entity state as a float; None while unknown or unavailable."""
    try:
        return float(state["state"])
    except (TypeError, ValueError):
        return None


def run(ws, rec, port, mp, device_id, check):
    """Every bedside entity both ways; the sleep timer's end last (a real
    one-minute timer, its device trigger and the paused session). Playing
    first: the speaker takes a sleep timer only while playback is intended."""
    ws.service("media_player", "media_play", target={"entity_id": mp})
    ws.wait_state(mp, lambda s: s["state"] == "playing")
    ids = {key: wait_entity(ws, key) for key in
           ("sleep_timer", "sleep_timer_cancel", "sleep_timer_ends", "mute", "night_cap", "night_cap_level",
            "schedule_1", "schedule_2", "sound")}
    check("discovery: sleep timer select, cancel button, end sensor, mute, night cap, two schedule switches",
          all(ids.values()), {k: v for k, v in ids.items()})
    registered = entity_ids(ws)
    check("... and no switch for a schedule rule that does not exist (schedule_3 … schedule_16 retired)",
          not any(unique(f"schedule_{n}") in registered for n in range(3, 17)))

    triggers = ws.call("device_automation/trigger/list", device_id=device_id)
    ended = next((t for t in triggers if t.get("type") == "sleep_timer_ended" and t.get("subtype") == "Sleep timer"), None)
    check("device trigger `sleep_timer_ended` (subtype \"Sleep timer\") listed for the device", ended is not None,
          sorted({t.get("type") for t in triggers}))
    sub = ws.subscribe_trigger(ended) if ended else None

    for part, arguments in ((sleep_timer, (ws, rec, port, mp, ids)), (mute, (ws, rec, port, mp, ids)),
                            (schedules, (ws, rec, port, ids)), (night_cap, (ws, rec, port, ids)),
                            (mixes, (ws, rec, port, mp, ids)), (timer_end, (ws, rec, port, mp, sub))):
        try:
            part(*arguments, check)
        except Exception as err:  # noqa: BLE001 — a refused service call fails this part, not the rest
            check(f"{part.__name__}: its service calls succeed", False, f"{type(err).__name__}: {err}")


def sleep_timer(ws, rec, port, mp, ids, check):
    mark = rec.mark()
    ws.service("select", "select_option", {"option": "30 min"}, target={"entity_id": ids["sleep_timer"]})
    timer = sleep_timer_of(rec.wait(lambda v: v["sleepTimer"]["minutes"] == 30, 10, mark, f"{TOPIC}/session"))
    ends = ws.wait_state(ids["sleep_timer_ends"], lambda s: same_instant(s["state"], timer["endsAt"])) if timer else None
    check("HA sleep timer select '30 min' -> session.sleepTimer (30 min), HA end sensor = its endsAt",
          timer is not None and ends is not None, f"{timer} / {(ws.state(ids['sleep_timer_ends']) or {}).get('state')}")
    check("... and the media player shows it (sleep_timer_minutes, sleep_timer_ends_at)",
          ws.wait_state(mp, lambda s: s["attributes"].get("sleep_timer_minutes") == 30
                        and same_instant(s["attributes"].get("sleep_timer_ends_at"), timer["endsAt"])) is not None
          if timer else False, {k: v for k, v in ws.state(mp)["attributes"].items() if k.startswith("sleep")})
    mark = rec.mark()
    mqtt_command(port, "setSleepTimer", minutes=60)
    timer = sleep_timer_of(rec.wait(lambda v: v["sleepTimer"]["minutes"] == 60, 10, mark, f"{TOPIC}/session"))
    check("timer set over MQTT (60 min) -> HA select '60 min' and the end sensor follow",
          timer is not None and ws.wait_state(ids["sleep_timer"], lambda s: s["state"] == "60 min") is not None
          and ws.wait_state(ids["sleep_timer_ends"], lambda s: same_instant(s["state"], timer["endsAt"])) is not None,
          f"{ws.state(ids['sleep_timer'])['state']} / {ws.state(ids['sleep_timer_ends'])['state']}")
    mark = rec.mark()
    ws.service("button", "press", target={"entity_id": ids["sleep_timer_cancel"]})
    check("HA 'Cancel sleep timer' -> session.sleepTimer null, HA select 'Off', end sensor unknown",
          rec.wait(lambda v: v["sleepTimer"] is None, 10, mark, f"{TOPIC}/session") is not None
          and ws.wait_state(ids["sleep_timer"], lambda s: s["state"] == "Off") is not None
          and ws.wait_state(ids["sleep_timer_ends"], lambda s: s["state"] == "unknown") is not None,
          f"{ws.state(ids['sleep_timer'])['state']} / {ws.state(ids['sleep_timer_ends'])['state']}")


def mute(ws, rec, port, mp, ids, check):
    mark = rec.mark()
    ws.service("switch", "turn_on", target={"entity_id": ids["mute"]})
    check("HA mute switch on -> device.muted true, media player is_volume_muted",
          rec.wait(lambda v: v["muted"] is True, 10, mark, f"{TOPIC}/device") is not None
          and ws.wait_state(mp, lambda s: s["attributes"].get("is_volume_muted") is True) is not None,
          ws.state(mp)["attributes"].get("is_volume_muted"))
    mark = rec.mark()
    ws.service("media_player", "volume_mute", {"is_volume_muted": False}, target={"entity_id": mp})
    check("media_player.volume_mute false -> device.muted false, HA mute switch off",
          rec.wait(lambda v: v["muted"] is False, 10, mark, f"{TOPIC}/device") is not None
          and ws.wait_state(ids["mute"], lambda s: s["state"] == "off") is not None, ws.state(ids["mute"])["state"])
    mqtt_command(port, "mute")
    check("mute over MQTT -> HA mute switch on and the media player muted",
          ws.wait_state(ids["mute"], lambda s: s["state"] == "on") is not None
          and ws.wait_state(mp, lambda s: s["attributes"].get("is_volume_muted") is True) is not None,
          ws.state(ids["mute"])["state"])
    mqtt_command(port, "unmute")
    ws.wait_state(ids["mute"], lambda s: s["state"] == "off")


def schedules(ws, rec, port, ids, check):
    check("schedule switches show the rules' `enabled` (rule 1 on, rule 2 off)",
          ws.wait_state(ids["schedule_1"], lambda s: s["state"] == "on") is not None
          and ws.wait_state(ids["schedule_2"], lambda s: s["state"] == "off") is not None,
          f"{ws.state(ids['schedule_1'])['state']} / {ws.state(ids['schedule_2'])['state']}")
    check("... with the rule as attributes", ws.state(ids["schedule_1"])["attributes"].get("at") == "04:17",
          ws.state(ids["schedule_1"])["attributes"])
    mark = rec.mark()
    ws.service("switch", "turn_off", target={"entity_id": ids["schedule_1"]})
    check("HA schedule switch 1 off -> retained schedules rule 0 disabled (rule 1 untouched)",
          rec.wait(lambda v: v["rules"][0]["enabled"] is False and v["rules"][1]["enabled"] is False, 10, mark,
                   f"{TOPIC}/schedules") is not None
          and ws.wait_state(ids["schedule_1"], lambda s: s["state"] == "off") is not None)
    mqtt_command(port, "setScheduleEnabled", index=1, enabled=True)
    check("setScheduleEnabled index 1 over MQTT -> HA schedule switch 2 on",
          ws.wait_state(ids["schedule_2"], lambda s: s["state"] == "on") is not None, ws.state(ids["schedule_2"])["state"])
    mqtt_command(port, "setSchedules", schedules=RULES + [{"at": "05:05", "action": "stop"}])
    third = wait_entity(ws, "schedule_3")
    check("setSchedules with a third rule over MQTT -> discovery re-sent, HA gains schedule switch 3 (on)",
          third is not None and ws.wait_state(third, lambda s: s["state"] == "on") is not None, third)


def night_cap(ws, rec, port, ids, check):
    mark = rec.mark()
    ws.service("switch", "turn_on", target={"entity_id": ids["night_cap"]})
    cap = rec.wait(lambda v: v["nightCap"]["maxLevel"] > 0, 10, mark, f"{TOPIC}/device")
    check("HA night cap switch on -> device.nightCap set (22:00–07:00), HA level number shows its maxLevel",
          cap is not None and cap["nightCap"]["from"] == "22:00" and ws.wait_state(
              ids["night_cap_level"], lambda s: abs(number(s) - cap["nightCap"]["maxLevel"] * 100) < 1e-3) is not None,
          (cap or {}).get("nightCap"))
    mark = rec.mark()
    ws.service("number", "set_value", {"value": 20}, target={"entity_id": ids["night_cap_level"]})
    check("HA night cap level 20 % -> device.nightCap.maxLevel 0.2, window kept",
          rec.wait(lambda v: abs(v["nightCap"]["maxLevel"] - 0.2) < 1e-6 and v["nightCap"]["to"] == "07:00", 10, mark,
                   f"{TOPIC}/device") is not None)
    mqtt_command(port, "setNightCap", nightCap=None)
    check("setNightCap null over MQTT -> HA night cap switch off, level unknown",
          ws.wait_state(ids["night_cap"], lambda s: s["state"] == "off") is not None
          and ws.wait_state(ids["night_cap_level"], lambda s: s["state"] == "unknown") is not None,
          f"{ws.state(ids['night_cap'])['state']} / {ws.state(ids['night_cap_level'])['state']}")


def mixes(ws, rec, port, mp, ids, check):
    options = ws.state(ids["sound"])["attributes"].get("options", [])
    check("the sound select and the media player's sources list the mix",
          MIX["name"] in options and MIX["name"] in ws.state(mp)["attributes"].get("source_list", []), options)
    mark = rec.mark()
    ws.service("select", "select_option", {"option": MIX["name"]}, target={"entity_id": ids["sound"]})
    session = rec.wait(lambda v: v["soundID"] == MIX["id"] and v["layers"], 10, mark, f"{TOPIC}/session")
    check("HA selects the mix -> session plays it with its layers; media player source = the mix, kind mix",
          session is not None and [la["soundID"] for la in session["layers"]] == ["pink", "brown"]
          and ws.wait_state(mp, lambda s: s["attributes"].get("source") == MIX["name"]
                            and s["attributes"].get("sound_kind") == "mix") is not None,
          (session or {}).get("layers"))
    mqtt_command(port, "saveMix", mixID="dusk", name="Dusk", layers=[{"soundID": "brown", "level": 0.5}])
    check("saveMix over MQTT -> discovery re-sent, the sound select gains the new mix",
          ws.wait_state(ids["sound"], lambda s: "Dusk" in s["attributes"]["options"]) is not None,
          ws.state(ids["sound"])["attributes"].get("options"))


def timer_end(ws, rec, port, mp, sub, check):
    """A real one-minute timer with a short fade: the trigger fires, the session pauses."""
    ws.service("media_player", "media_play", target={"entity_id": mp})
    ws.wait_state(mp, lambda s: s["state"] == "playing")
    mark = rec.mark()
    mqtt_command(port, "setSleepTimer", minutes=1, fadeSeconds=5)
    event = ws.wait_event(sub, 100) if sub is not None else None
    check("a one-minute timer runs out -> the `sleep_timer_ended` device trigger fires in HA",
          event is not None, (event or {}).get("variables", {}).get("trigger", {}).get("description"))
    check("... playback stops (sleepTimer null, not playing); HA media player paused or idle",
          rec.wait(lambda v: v["sleepTimer"] is None and not v["isPlaying"], 10, mark, f"{TOPIC}/session") is not None
          and ws.wait_state(mp, lambda s: s["state"] in ("paused", "idle")) is not None, ws.state(mp)["state"])


def relative(ws, check):
    """After the restart as a gpio-step speaker: no level, so no night cap."""
    gone = [key for key in ("night_cap", "night_cap_level") if unique(key) not in entity_ids(ws)]
    deadline = time.monotonic() + 20
    while len(gone) < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
        gone = [key for key in ("night_cap", "night_cap_level") if unique(key) not in entity_ids(ws)]
    check("relative speaker: the night cap switch and level are removed (a step-only amp has no level to cap)",
          len(gone) == 2, gone)
