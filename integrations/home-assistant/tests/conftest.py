# SPDX-License-Identifier: Apache-2.0
"""Fixtures: a real mosquitto (the root's Debian package) per test, and Home
Assistant's real MQTT integration connected to it — no mocked client. The
"speaker" side publishes contract payloads through the same broker."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.components import mqtt
from homeassistant.core import HomeAssistant

PREFIX = "ambient-speaker"


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(enable_custom_integrations: None) -> None:
    """Load integrations from custom_components/."""


@pytest.fixture
def mosquitto(socket_enabled: None) -> Iterator[int]:
    """A private mosquitto on a free loopback port."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with tempfile.TemporaryDirectory() as work:
        conf = f"{work}/mosquitto.conf"
        with open(conf, "w") as f:
            f.write(f"listener {port} 127.0.0.1\nallow_anonymous true\n")
        proc = subprocess.Popen(["mosquitto", "-c", conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError("mosquitto exited")
                time.sleep(0.05)
        yield port
        proc.terminate()
        proc.wait()


@pytest.fixture
async def mqtt_entry(hass: HomeAssistant, mosquitto: int, tmp_path) -> AsyncIterator[MockConfigEntry]:
    """Home Assistant's MQTT integration, connected to the private broker.
    (MQTT reads configuration.yaml at setup: an empty one in a temp dir.)"""
    (tmp_path / "configuration.yaml").write_text("")
    hass.config.config_dir = str(tmp_path)
    entry = MockConfigEntry(domain="mqtt", data={"broker": "127.0.0.1", "port": mosquitto},
                            version=2, minor_version=1)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    await until(lambda: mqtt.is_connected(hass))
    yield entry
    await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()


async def until(predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Waits for something a real broker delivers; the timeout only bounds a
    failure (this is not a timing assertion)."""
    async with asyncio.timeout(timeout):
        while not (value := predicate()):
            await asyncio.sleep(0.02)
    return value


async def publish(hass: HomeAssistant, topic: str, payload: Any, retain: bool = True) -> None:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    await mqtt.async_publish(hass, topic, text, qos=1, retain=retain)


def device(device_id: str, name: str, control: str = "absolute", level: float = 0.4) -> dict[str, Any]:
    volume: dict[str, Any] = {"control": control}
    if control == "absolute":
        volume |= {"level": level, "step": 0.05}
    return {"id": device_id, "name": name, "type": "speaker", "volume": volume, "audio": "ok",
            "muted": False, "nightCap": None, "software": "ambient-speaker 0.1.0"}


CATALOG = [{"id": "rain", "name": "Rain on the roof", "summary": "", "kind": "sound"},
           {"id": "surf", "name": "Ocean surf", "summary": "", "kind": "sound"},
           {"id": "pink", "name": "Pink noise", "summary": "", "kind": "sound"},
           {"id": "night", "name": "Night", "summary": "rain over pink noise", "kind": "mix",
            "layers": [{"soundID": "rain", "level": 0.6}, {"soundID": "pink", "level": 0.3}]}]


def session(revision: int, dev: dict[str, Any], playing: bool = False, ended: bool = True,
            sound: dict[str, str] = CATALOG[0]) -> dict[str, Any]:
    commands = ["pause" if playing else "play", "toggle"] + ([] if ended else ["stop"]) + ["next", "previous", "select"]
    if dev["volume"]["control"] == "absolute":
        commands.append("setVolume")
    commands += ["volumeUp", "volumeDown", "unmute" if dev.get("muted") else "mute", "setSleepTimer"]
    return {"id": None if ended and not playing else "s-1", "soundID": sound["id"], "soundName": sound["name"],
            "isPlaying": playing, "intendsPlayback": playing, "updatedAt": "2026-11-30T12:00:00.000Z",
            "clockSynced": True, "revision": revision, "ended": ended, "commands": commands, "devices": [dev],
            "sleepTimer": None, "layers": sound.get("layers")}


async def announce(hass: HomeAssistant, device_id: str, name: str, control: str = "absolute",
                   online: bool = True) -> dict[str, Any]:
    """A speaker's retained picture, in the contract's publish order."""
    root = f"{PREFIX}/{device_id}"
    dev = device(device_id, name, control)
    await publish(hass, f"{root}/device", dev)
    await publish(hass, f"{root}/catalog", CATALOG)
    await publish(hass, f"{root}/session", session(1, dev))
    await publish(hass, f"{root}/availability", "online" if online else "offline")
    return dev
