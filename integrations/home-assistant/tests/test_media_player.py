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
    # Mute while the speaker lists `mute` or `unmute` (never both).
    assert player.features_for(session(1, dev) | {"commands": ["mute"]}, dev) == F.VOLUME_MUTE
    assert player.features_for(session(1, dev) | {"commands": ["unmute"]}, dev) == F.VOLUME_MUTE


def test_the_sleep_timer_attributes_tolerate_any_session() -> None:
    timer = {"endsAt": "2026-11-30T23:00:00Z", "minutes": 30, "fadeSeconds": 300, "remainingSeconds": 1800,
             "fading": False}
    assert player.sleep_timer_attributes({"sleepTimer": timer}) == {
        "sleep_timer_ends_at": "2026-11-30T23:00:00Z", "sleep_timer_minutes": 30,
        "sleep_timer_fade_seconds": 300, "sleep_timer_fading": False}
    for no_timer in (None, {}, {"sleepTimer": None}, {"sleepTimer": "soon"}):
        assert set(player.sleep_timer_attributes(no_timer).values()) == {None}, no_timer


async def test_mute_the_sleep_timer_and_mixes_follow_the_speakers_topics(hass: HomeAssistant, mqtt_entry) -> None:
    dev = await announce(hass, "den", "Den speaker")
    await add_speaker(hass)
    await until(lambda: state(hass) and state(hass).state == "idle" and "source_list" in state(hass).attributes)
    # A mix is a catalog entry: listed among the sources.
    assert "Night" in state(hass).attributes["source_list"]
    assert features(hass) & F.VOLUME_MUTE
    assert state(hass).attributes["is_volume_muted"] is False
    assert state(hass).attributes["sleep_timer_ends_at"] is None

    muted = dev | {"muted": True}
    timer = {"endsAt": "2026-11-30T23:00:00Z", "minutes": 30, "fadeSeconds": 300, "remainingSeconds": 1800,
             "fading": False}
    await publish(hass, f"{ROOT}/device", muted)
    await publish(hass, f"{ROOT}/session", session(2, muted, playing=True, ended=False, sound=CATALOG[3])
                  | {"sleepTimer": timer})
    await until(lambda: state(hass).state == "playing" and state(hass).attributes.get("is_volume_muted"))
    attributes = state(hass).attributes
    assert attributes["source"] == "Night" and attributes["sound_kind"] == "mix"
    assert attributes["layers"] == CATALOG[3]["layers"]
    assert attributes["sleep_timer_ends_at"] == "2026-11-30T23:00:00Z"
    assert attributes["sleep_timer_minutes"] == 30 and attributes["sleep_timer_fading"] is False
    assert features(hass) & F.VOLUME_MUTE  # `unmute` now


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
             ("volume_set", {"volume_level": 0.3}), ("media_next_track", {}), ("volume_up", {}),
             ("volume_mute", {"is_volume_muted": True}), ("volume_mute", {"is_volume_muted": False}),
             ("select_source", {"source": "Night"})]
    for service, data in calls:
        await hass.services.async_call("media_player", service, {"entity_id": ENTITY, **data}, blocking=True)
        # The call returns once the session its result named is applied.
        assert state(hass).state == ("playing" if speaker.playing else "paused"), service
    actions = [c["action"] for _, c in speaker.received]
    assert actions == ["play", "toggle", "select", "setVolume", "next", "volumeUp", "mute", "unmute", "select"]
    assert {qos for qos, _ in speaker.received} == {1}
    ids = [c["id"] for _, c in speaker.received]
    assert len(set(ids)) == len(ids) and all(i.startswith("ha-") for i in ids)
    assert speaker.received[2][1]["soundID"] == "surf"
    assert speaker.received[3][1]["level"] == 0.3
    assert speaker.received[8][1]["soundID"] == "night"  # a mix is selected by its id like a sound
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


def test_source_labels_match_the_discovery_select() -> None:
    twins = [{"id": "rain", "name": "Rain"}, {"id": "rain2", "name": " Rain "}, {"id": "surf", "name": "Surf"},
             {"id": "blank", "name": ""}, {"id": "none", "name": "None"}]
    assert player.source_labels(twins) == ["Rain (rain)", "Rain (rain2)", "Surf", "blank", "none"]
    # A name that is literally another entry's label: every label is the id.
    clash = [{"id": "a", "name": "X"}, {"id": "b", "name": "X"}, {"id": "c", "name": "X (a)"}]
    assert player.source_labels(clash) == ["a", "b", "c"]
    assert player.source_labels([]) == []


def test_the_epoch_of_a_session() -> None:
    dev = device("den", "Den") | {"epoch": "e2"}
    assert player.session_epoch(session(1, dev)) == "e2"
    for old in (session(1, device("den", "Den")), {"devices": []}, {"devices": "x"}, {}):
        assert player.session_epoch(old) is None, old


async def test_sounds_with_equal_names_are_each_selectable(hass: HomeAssistant, mqtt_entry) -> None:
    await announce(hass, "den", "Den speaker")
    twins = [{"id": "rain", "name": "Rain", "summary": "", "kind": "sound"},
             {"id": "rain2", "name": "Rain", "summary": "", "kind": "sound"}]
    await publish(hass, f"{ROOT}/catalog", twins)
    await add_speaker(hass)
    await until(lambda: state(hass) and state(hass).attributes.get("source_list") == ["Rain (rain)", "Rain (rain2)"])
    speaker = Speaker(hass)
    await speaker.start()
    await hass.services.async_call("media_player", "select_source", {"entity_id": ENTITY, "source": "Rain (rain2)"},
                                   blocking=True)
    assert [c.get("soundID") for _, c in speaker.received] == ["rain2"]
    speaker.unsubscribe()


async def test_a_new_epoch_resets_the_revision_watermark(hass: HomeAssistant, mqtt_entry) -> None:
    first = device("den", "Den speaker") | {"epoch": "e1"}
    await publish(hass, f"{ROOT}/device", first)
    await publish(hass, f"{ROOT}/catalog", CATALOG)
    await publish(hass, f"{ROOT}/session", session(5000, first, playing=True, ended=False, sound=CATALOG[1]))
    await publish(hass, f"{ROOT}/availability", "online")
    await add_speaker(hass)
    await until(lambda: state(hass) and state(hass).attributes.get("media_title") == "Ocean surf")
    # Re-flashed: the counter starts over at 1 in a new epoch, and is applied.
    flashed = device("den", "Den speaker") | {"epoch": "e2"}
    await publish(hass, f"{ROOT}/session", session(1, flashed, playing=True, ended=False, sound=CATALOG[2]))
    await until(lambda: state(hass).attributes.get("media_title") == "Pink noise")
    assert state(hass).attributes["revision"] == 1
    # A late message of the old epoch is stale, and so is a repeat in the new
    # one: neither shows (no "Rain on the roof" in between).
    seen: list[tuple[str, str | None]] = []

    @callback
    def note(event) -> None:
        seen.append((event.data["new_state"].state, event.data["new_state"].attributes.get("media_title")))

    unlisten = hass.bus.async_listen("state_changed", note)
    await publish(hass, f"{ROOT}/session", session(5001, first, playing=True, ended=False, sound=CATALOG[0]))
    await publish(hass, f"{ROOT}/session", session(1, flashed, playing=False, ended=True, sound=CATALOG[0]))
    await publish(hass, f"{ROOT}/session", session(2, flashed, playing=False, ended=False, sound=CATALOG[2]))
    await until(lambda: state(hass).state == "paused")
    unlisten()
    assert seen == [("paused", "Pink noise")]
    assert state(hass).attributes["revision"] == 2


def test_the_artwork_type_is_told_by_its_magic_bytes() -> None:
    assert player.artwork_content_type(b"\x89PNG\r\n\x1a\n....") == "image/png"
    assert player.artwork_content_type(b"\xff\xd8\xff\xe0....") == "image/jpeg"
    assert player.artwork_content_type(b"GIF89a") is None
    assert player.artwork_content_type(b"") is None


async def test_the_entity_picture_is_the_playing_entrys_artwork(hass: HomeAssistant, mqtt_entry) -> None:
    dev = device("den", "Den speaker")
    png = b"\x89PNG\r\n\x1a\n" + b"rain"
    await publish(hass, f"{ROOT}/device", dev)
    await publish(hass, f"{ROOT}/catalog", [CATALOG[0] | {"artwork": True}, CATALOG[1], CATALOG[2]])
    await mqtt.async_publish(hass, f"{ROOT}/artwork/rain", png, qos=1, retain=True)
    await publish(hass, f"{ROOT}/session", session(1, dev, playing=True, ended=False, sound=CATALOG[0]))
    await publish(hass, f"{ROOT}/availability", "online")
    await add_speaker(hass)
    await until(lambda: state(hass) and state(hass).attributes.get("entity_picture"))
    picture = state(hass).attributes["entity_picture"]
    assert picture.startswith(f"/api/media_player_proxy/{ENTITY}?token=")
    entity = hass.data["media_player"].get_entity(ENTITY)
    assert await entity.async_get_media_image() == (png, "image/png")
    # Another sound without artwork: no picture; a cleared topic: none either.
    await publish(hass, f"{ROOT}/session", session(2, dev, playing=True, ended=False, sound=CATALOG[1]))
    await until(lambda: state(hass).attributes.get("entity_picture") is None)
    await publish(hass, f"{ROOT}/session", session(3, dev, playing=True, ended=False, sound=CATALOG[0]))
    await until(lambda: state(hass).attributes.get("entity_picture") == picture)
    await mqtt.async_publish(hass, f"{ROOT}/artwork/rain", b"", qos=1, retain=True)
    await until(lambda: state(hass).attributes.get("entity_picture") is None)
