# SPDX-License-Identifier: Apache-2.0
"""The media player against a real broker: state and features follow the
retained topics; commands go out at QoS 1 with ids; refusals and silence
become Home Assistant errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.components import mqtt
from homeassistant.components.media_player import MediaPlayerEntityFeature as F
from homeassistant.const import STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError

from custom_components.ambient_speaker import media_player as player
from custom_components.ambient_speaker.const import DOMAIN

from .conftest import CATALOG, PREFIX, announce, device, publish, session, until

ROOT = f"{PREFIX}/den"
ENTITY = "media_player.den_speaker"


async def add_speaker(hass: HomeAssistant) -> MockConfigEntry:
    entry = MockConfigEntry(domain=DOMAIN, title="Den speaker", unique_id=ROOT,
                            data={"prefix": PREFIX, "device_id": "den"})
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return entry


def state(hass: HomeAssistant):
    return hass.states.get(ENTITY)


def features(hass: HomeAssistant) -> int:
    return state(hass).attributes.get("supported_features", 0)


async def test_state_and_features_follow_the_speakers_topics(hass: HomeAssistant, mqtt_entry) -> None:
    dev = await announce(hass, "den", "Den speaker")
    await add_speaker(hass)
    await until(lambda: state(hass) and state(hass).state == "idle" and "source_list" in state(hass).attributes)
    assert state(hass).attributes["source_list"] == [s["name"] for s in CATALOG]
    assert state(hass).attributes["volume_level"] == 0.4
    assert features(hass) & F.VOLUME_SET and not features(hass) & F.VOLUME_STEP
    assert not features(hass) & F.STOP  # no session to stop

    await publish(hass, f"{ROOT}/session", session(5, dev, playing=True, ended=False, sound=CATALOG[1]))
    await until(lambda: state(hass).state == "playing")
    assert state(hass).attributes["media_title"] == "Ocean surf"
    assert state(hass).attributes["source"] == "Ocean surf"
    assert features(hass) & F.STOP and features(hass) & F.PAUSE

    # A session whose revision is not newer is dropped: the titles seen go
    # straight from the surf to the pink noise (messages arrive in order).
    titles: list[str] = []

    @callback  # runs in the event loop, in order (a plain function would go to the executor)
    def note_title(event) -> None:
        titles.append(event.data["new_state"].attributes.get("media_title"))

    unlisten = hass.bus.async_listen("state_changed", note_title)
    await publish(hass, f"{ROOT}/session", session(4, dev, playing=False, ended=False))
    await publish(hass, f"{ROOT}/session", session(6, dev, playing=False, ended=False, sound=CATALOG[2]))
    await until(lambda: state(hass).attributes.get("media_title") == "Pink noise")
    unlisten()
    assert titles == ["Pink noise"]
    assert state(hass).state == "paused"

    # A relative device: steps only, never a level.
    rel = device("den", "Den speaker", control="relative")
    await publish(hass, f"{ROOT}/device", rel)
    await publish(hass, f"{ROOT}/session", session(7, rel, playing=False, ended=True))
    await until(lambda: features(hass) & F.VOLUME_STEP)
    assert not features(hass) & F.VOLUME_SET
    assert "volume_level" not in state(hass).attributes
    assert state(hass).state == "idle"

    await publish(hass, f"{ROOT}/availability", "offline")
    await until(lambda: state(hass).state == STATE_UNAVAILABLE)


def test_features_are_the_sessions_commands() -> None:
    dev = device("den", "Den", control="absolute")
    only_one_sound = session(1, dev) | {"commands": ["play", "toggle", "select", "setVolume", "volumeUp"]}
    f = player.features_for(only_one_sound, dev)
    assert f == F.PLAY | F.PAUSE | F.SELECT_SOURCE | F.VOLUME_SET
    audio_gone = session(1, dev) | {"commands": ["volumeUp", "volumeDown"]}
    assert player.features_for(audio_gone, device("den", "Den", control="relative")) == F.VOLUME_STEP
    assert player.features_for(None, None) == F(0)


class Speaker:
    """Answers commands the way the contract says, through the real broker;
    records each command and the QoS it was delivered at (subscribed at 2)."""

    def __init__(self, hass: HomeAssistant, refuse: dict[str, Any] | None = None, silent: bool = False) -> None:
        self.hass, self.refuse, self.silent = hass, refuse, silent
        self.received: list[tuple[int, dict[str, Any]]] = []
        self.revision, self.playing = 1, False

    async def start(self) -> None:
        """Subscribes, and returns once the broker delivers to the subscription
        (HA sends SUBSCRIBE after a short cooldown)."""
        self.probes = 0
        self.unsubscribe = await mqtt.async_subscribe(self.hass, f"{ROOT}/command", self.on_command, qos=2)
        async with asyncio.timeout(10):
            while not self.probes:
                await publish(self.hass, f"{ROOT}/command", {"probe": True}, retain=False)
                await asyncio.sleep(0.2)

    @callback
    def on_command(self, msg: mqtt.ReceiveMessage) -> None:
        command = json.loads(msg.payload)
        if "probe" in command:
            self.probes += 1
            return
        self.received.append((msg.qos, command))
        if self.silent:
            return
        if self.refuse:
            result = {"id": command["id"], "ok": False, "error": self.refuse}
            self.hass.async_create_task(publish(self.hass, f"{ROOT}/command/result", result, retain=False))
            return
        # As the speaker does: the result, then the session whose revision it names.
        self.revision += 1
        result = {"id": command["id"], "ok": True, "revision": self.revision}
        self.playing = not self.playing
        after = session(self.revision, device("den", "Den speaker"), playing=self.playing, ended=False)

        async def answer() -> None:
            await publish(self.hass, f"{ROOT}/command/result", result, retain=False)
            await publish(self.hass, f"{ROOT}/session", after)
        self.hass.async_create_task(answer())


async def test_commands_carry_ids_at_qos_1_and_wait_for_their_result(hass: HomeAssistant, mqtt_entry) -> None:
    await announce(hass, "den", "Den speaker")
    await add_speaker(hass)
    await until(lambda: state(hass) and state(hass).state == "idle")
    speaker = Speaker(hass)
    await speaker.start()
    calls = [("media_play", {}), ("media_play_pause", {}), ("select_source", {"source": "Ocean surf"}),
             ("volume_set", {"volume_level": 0.3}), ("media_next_track", {}), ("volume_up", {})]
    for service, data in calls:
        await hass.services.async_call("media_player", service, {"entity_id": ENTITY, **data}, blocking=True)
        # The call returns once the session its result named is applied.
        assert state(hass).state == ("playing" if speaker.playing else "paused"), service
    actions = [c["action"] for _, c in speaker.received]
    assert actions == ["play", "toggle", "select", "setVolume", "next", "volumeUp"]
    assert {qos for qos, _ in speaker.received} == {1}
    ids = [c["id"] for _, c in speaker.received]
    assert len(set(ids)) == len(ids) and all(i.startswith("ha-") for i in ids)
    assert speaker.received[2][1]["soundID"] == "surf"
    assert speaker.received[3][1]["level"] == 0.3
    speaker.unsubscribe()


async def test_a_refused_command_is_a_home_assistant_error(hass: HomeAssistant, mqtt_entry) -> None:
    await announce(hass, "den", "Den speaker")
    await add_speaker(hass)
    await until(lambda: state(hass) and state(hass).state == "idle")
    speaker = Speaker(hass, refuse={"code": "unknown-sound", "message": "no sound 'x'"})
    await speaker.start()
    with pytest.raises(HomeAssistantError) as err:
        await hass.services.async_call("media_player", "select_source", {"entity_id": ENTITY, "source": "x"},
                                       blocking=True)
    assert err.value.translation_key == "command_failed"
    assert err.value.translation_placeholders["code"] == "unknown-sound"
    speaker.unsubscribe()


async def test_no_answer_is_a_home_assistant_error(hass: HomeAssistant, mqtt_entry,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(player, "COMMAND_TIMEOUT_S", 0.5)
    await announce(hass, "den", "Den speaker")
    await add_speaker(hass)
    await until(lambda: state(hass) and state(hass).state == "idle")
    speaker = Speaker(hass, silent=True)
    await speaker.start()
    with pytest.raises(HomeAssistantError) as err:
        await hass.services.async_call("media_player", "media_play", {"entity_id": ENTITY}, blocking=True)
    assert err.value.translation_key == "no_result"
    assert [c["action"] for _, c in speaker.received] == ["play"]
    speaker.unsubscribe()
