# SPDX-License-Identifier: Apache-2.0
"""The speaker as a Home Assistant media player.

State follows the retained topics: `availability` (offline -> unavailable),
`session` (ended -> idle, isPlaying -> playing, else paused; a session whose
revision is not newer than the last applied is dropped, as the contract
says), `device` (volume control and level, audio status) and `catalog`
(source list). Supported features are recomputed from every `session`
(its `commands`) and `device` (its volume control), so the card only offers
what the speaker accepts right now: VOLUME_SET and a level only for an
absolute device, VOLUME_STEP only for a relative one.

Every service call publishes one command with a fresh id at QoS 1 and waits
for its `command/result`; a refusal or no answer is raised to the user as a
HomeAssistantError.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from homeassistant.components import mqtt
from homeassistant.components.media_player import (
    MediaPlayerDeviceClass,
    MediaPlayerEntity,
    MediaPlayerEntityFeature,
    MediaPlayerState,
    MediaType,
)
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import COMMAND_TIMEOUT_S, CONF_DEVICE_ID, CONF_PREFIX, DOMAIN, STATE_WAIT_S

F = MediaPlayerEntityFeature
# session.commands entry -> the features it offers.
_COMMAND_FEATURES = {
    "play": F.PLAY,
    "pause": F.PAUSE,
    "toggle": F.PLAY | F.PAUSE,
    "stop": F.STOP,
    "next": F.NEXT_TRACK,
    "previous": F.PREVIOUS_TRACK,
    "select": F.SELECT_SOURCE,
}


async def async_setup_entry(
    hass: HomeAssistant, entry: ConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """One media player per config entry (per speaker)."""
    async_add_entities([AmbientSpeakerPlayer(entry)])


def features_for(session: dict[str, Any] | None, device: dict[str, Any] | None) -> MediaPlayerEntityFeature:
    """The features the speaker accepts right now (pure: tested on its own)."""
    features = MediaPlayerEntityFeature(0)
    commands = session.get("commands", []) if session else []
    for command in commands if isinstance(commands, list) else []:
        features |= _COMMAND_FEATURES.get(command, 0)
    control = volume_of(device).get("control")
    if control == "absolute" and "setVolume" in commands:
        features |= F.VOLUME_SET
    elif control == "relative" and ("volumeUp" in commands or "volumeDown" in commands):
        features |= F.VOLUME_STEP
    return features


def volume_of(device: dict[str, Any] | None) -> dict[str, Any]:
    volume = device.get("volume") if device else None
    return volume if isinstance(volume, dict) else {}


class AmbientSpeakerPlayer(MediaPlayerEntity):
    """A speaker found on the broker, followed through HA's MQTT integration."""

    _attr_has_entity_name = True
    _attr_name = None
    _attr_should_poll = False
    _attr_device_class = MediaPlayerDeviceClass.SPEAKER
    _attr_media_content_type = MediaType.MUSIC

    def __init__(self, entry: ConfigEntry) -> None:
        self._device_id: str = entry.data[CONF_DEVICE_ID]
        self._root = f"{entry.data[CONF_PREFIX]}/{self._device_id}"
        self._attr_unique_id = self._root
        self._attr_device_info = DeviceInfo(
            # The second identifier is the one the speaker's own MQTT discovery
            # uses, so the media player joins the same device page.
            identifiers={(DOMAIN, self._root), ("mqtt", f"ambient-speaker-{self._device_id}")},
            name=entry.title,
            manufacturer="ambient-speaker",
            model="Ambient speaker",
        )
        self._online = False
        self._session: dict[str, Any] | None = None
        self._device: dict[str, Any] | None = None
        self._catalog: list[dict[str, Any]] = []
        self._revision = -1
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        # Service calls waiting for the session revision their result named.
        self._revision_waiters: list[tuple[int, asyncio.Future[None]]] = []

    async def async_added_to_hass(self) -> None:
        """Subscribe (QoS 1) to the speaker's retained state and its command results."""
        handlers = {
            "availability": self._on_availability,
            "device": self._on_device,
            "session": self._on_session,
            "catalog": self._on_catalog,
            "command/result": self._on_result,
        }
        for leaf, handler in handlers.items():
            self.async_on_remove(
                await mqtt.async_subscribe(self.hass, f"{self._root}/{leaf}", handler, qos=1)
            )

    async def async_will_remove_from_hass(self) -> None:
        for future in self._pending.values():
            future.cancel()
        for _, waiter in self._revision_waiters:
            waiter.cancel()

    # MARK: incoming

    @callback
    def _on_availability(self, msg: mqtt.ReceiveMessage) -> None:
        self._online = msg.payload == "online"
        self.async_write_ha_state()

    @callback
    def _on_device(self, msg: mqtt.ReceiveMessage) -> None:
        data = _decode(msg.payload)
        if isinstance(data, dict):
            self._device = data
            self.async_write_ha_state()

    @callback
    def _on_session(self, msg: mqtt.ReceiveMessage) -> None:
        data = _decode(msg.payload)
        if not isinstance(data, dict):
            return
        revision = data.get("revision")
        if isinstance(revision, int):
            if revision <= self._revision:
                return  # stale or repeated: the contract says drop it
            self._revision = revision
        self._session = data
        devices = data.get("devices")
        if isinstance(devices, list) and devices and isinstance(devices[0], dict):
            self._device = devices[0]
        self.async_write_ha_state()
        for wanted, waiter in self._revision_waiters:
            if wanted <= self._revision and not waiter.done():
                waiter.set_result(None)

    @callback
    def _on_catalog(self, msg: mqtt.ReceiveMessage) -> None:
        data = _decode(msg.payload)
        if isinstance(data, list):
            self._catalog = [s for s in data if isinstance(s, dict) and "id" in s]
            self.async_write_ha_state()

    @callback
    def _on_result(self, msg: mqtt.ReceiveMessage) -> None:
        data = _decode(msg.payload)
        if isinstance(data, dict):
            future = self._pending.get(data.get("id"))
            if future is not None and not future.done():
                future.set_result(data)

    # MARK: state

    @property
    def available(self) -> bool:
        return self._online

    @property
    def state(self) -> MediaPlayerState | None:
        session = self._session
        if session is None or session.get("ended"):
            return MediaPlayerState.IDLE
        return MediaPlayerState.PLAYING if session.get("isPlaying") else MediaPlayerState.PAUSED

    @property
    def supported_features(self) -> MediaPlayerEntityFeature:
        return features_for(self._session, self._device)

    @property
    def media_title(self) -> str | None:
        return self._session.get("soundName") if self._session else None

    @property
    def media_content_id(self) -> str | None:
        return self._session.get("soundID") if self._session else None

    @property
    def source(self) -> str | None:
        return self.media_title

    @property
    def source_list(self) -> list[str] | None:
        return [str(s.get("name") or s["id"]) for s in self._catalog] or None

    @property
    def volume_level(self) -> float | None:
        volume = volume_of(self._device)
        level = volume.get("level")
        if volume.get("control") == "absolute" and isinstance(level, (int, float)):
            return float(level)
        return None  # a relative device has no level: never a made-up one

    @property
    def volume_step(self) -> float:
        step = volume_of(self._device).get("step")
        return float(step) if isinstance(step, (int, float)) and step > 0 else 0.05

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        device = self._device or {}
        session = self._session or {}
        return {
            "volume_control": volume_of(device).get("control"),
            "audio": device.get("audio"),
            "underruns": device.get("underruns"),
            "sound_id": session.get("soundID"),
            "session_id": session.get("id"),
            "revision": session.get("revision"),
        }

    # MARK: commands

    async def async_media_play(self) -> None:
        await self._command("play")

    async def async_media_pause(self) -> None:
        await self._command("pause")

    async def async_media_play_pause(self) -> None:
        await self._command("toggle")

    async def async_media_stop(self) -> None:
        await self._command("stop")

    async def async_media_next_track(self) -> None:
        await self._command("next")

    async def async_media_previous_track(self) -> None:
        await self._command("previous")

    async def async_select_source(self, source: str) -> None:
        """Select by catalog name (or id); an unknown one is the speaker's to refuse."""
        sound_id = next(
            (s["id"] for s in self._catalog if source in (s.get("name"), s["id"])), source
        )
        await self._command("select", soundID=sound_id)

    async def async_set_volume_level(self, volume: float) -> None:
        await self._command("setVolume", level=volume)

    async def async_volume_up(self) -> None:
        await self._command("volumeUp")

    async def async_volume_down(self) -> None:
        await self._command("volumeDown")

    async def _command(self, action: str, **fields: Any) -> dict[str, Any]:
        """Publish one command (fresh id, QoS 1) and wait for its result."""
        command_id = f"ha-{uuid.uuid4().hex[:20]}"
        future: asyncio.Future[dict[str, Any]] = self.hass.loop.create_future()
        self._pending[command_id] = future
        payload = json.dumps({"id": command_id, "action": action, **fields})
        try:
            await mqtt.async_publish(self.hass, f"{self._root}/command", payload, qos=1, retain=False)
            async with asyncio.timeout(COMMAND_TIMEOUT_S):
                result = await future
        except TimeoutError as err:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="no_result",
                translation_placeholders={"action": action, "seconds": f"{COMMAND_TIMEOUT_S:g}"},
            ) from err
        finally:
            self._pending.pop(command_id, None)
        if result.get("ok") is not True:
            error = result.get("error") if isinstance(result.get("error"), dict) else {}
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="command_failed",
                translation_placeholders={
                    "action": action,
                    "code": str(error.get("code", "unknown")),
                    "message": str(error.get("message", "")),
                },
            )
        await self._state_named_by(result)
        return result

    async def _state_named_by(self, result: dict[str, Any]) -> None:
        """Waits (at most STATE_WAIT_S) until the session whose revision a good
        result names is applied, so the entity's state shows the command when
        the service call returns: the speaker sends the result just before
        that session. Not arriving in time is not an error — the command was
        done; the state follows when the speaker publishes it."""
        revision = result.get("revision")
        if not isinstance(revision, int) or revision <= self._revision:
            return
        entry = (revision, self.hass.loop.create_future())
        self._revision_waiters.append(entry)
        try:
            async with asyncio.timeout(STATE_WAIT_S):
                await entry[1]
        except TimeoutError:
            pass
        finally:
            self._revision_waiters.remove(entry)


def _decode(payload: Any) -> Any:
    try:
        return json.loads(payload)
    except (TypeError, ValueError):
        return None
