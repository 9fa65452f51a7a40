# SPDX-License-Identifier: Apache-2.0
"""The speaker as a Home Assistant media player.

State follows the retained topics: `availability` (offline -> unavailable),
`session` (ended -> idle, isPlaying -> playing, else paused; a session whose
revision is not newer than the last applied is dropped, as the contract
says), `device` (volume control and level, audio status) and `catalog`
(source list). Supported features are recomputed from every `session`
(its `commands`) and `device` (its volume control), so the card only offers
what the speaker accepts right now: VOLUME_SET and a level only for an
absolute device, VOLUME_STEP only for a relative one, VOLUME_MUTE while the
session lists `mute` or `unmute` (the mute state is `device.muted`).

The source list is the catalog, so mixes (catalog entries of `kind` `mix`)
are sources like sounds. The entity picture is the playing entry's image
from the retained `artwork/{id}` topics (raw PNG or JPEG bytes, served
through Home Assistant's media image proxy). The sleep timer (`session.sleepTimer`), the
playing mix's layers (`session.layers`) and the night cap
(`device.nightCap`) are shown as extra state attributes.

Every service call publishes one command with a fresh id at QoS 1 and waits
for its `command/result`; a refusal or no answer is raised to the user as a
HomeAssistantError.
"""

from __future__ import annotations

import asyncio
import hashlib
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

from .payload_view import (  # noqa: F401  (re-exported: the tests call them as media_player's)
    artwork_content_type,
    features_for,
    session_epoch,
    sleep_timer_attributes,
    source_labels,
    volume_of,
)


async def async_setup_entry(
    hass: HomeAssistant, entry: ConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """One media player per config entry (per speaker)."""
    async_add_entities([AmbientSpeakerPlayer(entry)])


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
        # artwork/{id}: the image bytes and their type, by catalog entry id.
        self._artwork: dict[str, tuple[bytes, str]] = {}
        self._revision = -1
        # The epoch the watermark belongs to, and the epochs left behind (a
        # late message of one of them is stale, never a new start).
        self._epoch: str | None = None
        self._retired_epochs: list[str] = []
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
        # Raw bytes, not text: encoding=None.
        self.async_on_remove(
            await mqtt.async_subscribe(self.hass, f"{self._root}/artwork/+", self._on_artwork, qos=1, encoding=None)
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
        epoch = session_epoch(data)
        if epoch is not None and epoch != self._epoch:
            if epoch in self._retired_epochs:
                return  # from a counter the speaker has started over from: stale
            # The speaker's revision counter started over (a new or lost state
            # directory): the watermark belongs to the old epoch.
            if self._epoch is not None:
                self._retired_epochs = (self._retired_epochs + [self._epoch])[-8:]
            self._epoch = epoch
            self._revision = -1
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
    def _on_artwork(self, msg: mqtt.ReceiveMessage) -> None:
        sound_id = msg.topic.rsplit("/", 1)[-1]
        data = msg.payload if isinstance(msg.payload, bytes) else b""
        content_type = artwork_content_type(data)
        if content_type is None:
            self._artwork.pop(sound_id, None)  # cleared, or not an image
        else:
            self._artwork[sound_id] = (data, content_type)
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
    def media_image_hash(self) -> str | None:
        """Changes with the playing entry's image, so the card fetches it again."""
        image = self._artwork.get(self.media_content_id or "")
        return hashlib.sha256(image[0]).hexdigest()[:16] if image else None

    async def async_get_media_image(self) -> tuple[bytes | None, str | None]:
        """The playing entry's image from its retained artwork topic."""
        image = self._artwork.get(self.media_content_id or "")
        return image if image else (None, None)

    @property
    def source(self) -> str | None:
        sound_id = self.media_content_id
        labels = dict(zip((s["id"] for s in self._catalog), source_labels(self._catalog)))
        return labels.get(sound_id, self.media_title) if sound_id is not None else self.media_title

    @property
    def source_list(self) -> list[str] | None:
        return source_labels(self._catalog) or None

    @property
    def volume_level(self) -> float | None:
        volume = volume_of(self._device)
        level = volume.get("level")
        if volume.get("control") == "absolute" and isinstance(level, (int, float)):
            return float(level)
        return None  # a relative device has no level: never a made-up one

    @property
    def is_volume_muted(self) -> bool | None:
        muted = (self._device or {}).get("muted")
        return muted if isinstance(muted, bool) else None

    @property
    def volume_step(self) -> float:
        step = volume_of(self._device).get("step")
        return float(step) if isinstance(step, (int, float)) and step > 0 else 0.05

    @property
    def extra_state_attributes(self) -> dict[str, Any]:
        device = self._device or {}
        session = self._session or {}
        sound_id = session.get("soundID")
        entry = next((s for s in self._catalog if s["id"] == sound_id), {})
        layers = session.get("layers")
        night_cap = device.get("nightCap")
        return {
            "volume_control": volume_of(device).get("control"),
            "volume_max_level": volume_of(device).get("maxLevel"),
            "volume_cap_source": volume_of(device).get("capSource"),
            "audio": device.get("audio"),
            "underruns": device.get("underruns"),
            "sound_id": sound_id,
            "sound_kind": entry.get("kind", "sound") if entry else None,
            "layers": layers if isinstance(layers, list) else None,
            "session_id": session.get("id"),
            "revision": session.get("revision"),
            **sleep_timer_attributes(session),
            "night_cap": night_cap if isinstance(night_cap, dict) else None,
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
        """Select by the label of `source_list` (or an id, or a name shared by
        no other entry); an unknown one is the speaker's to refuse."""
        labels = source_labels(self._catalog)
        sound_id = next((s["id"] for s, label in zip(self._catalog, labels) if source == label), None)
        if sound_id is None:
            sound_id = next((s["id"] for s in self._catalog if source == s["id"]), None)
        if sound_id is None:
            named = [s["id"] for s in self._catalog if source == s.get("name")]
            sound_id = named[0] if len(named) == 1 else source
        await self._command("select", soundID=sound_id)

    async def async_set_volume_level(self, volume: float) -> None:
        await self._command("setVolume", level=volume)

    async def async_mute_volume(self, mute: bool) -> None:
        await self._command("mute" if mute else "unmute")

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
