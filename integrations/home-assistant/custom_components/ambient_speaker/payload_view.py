# SPDX-License-Identifier: Apache-2.0
"""What the media player reads off the speaker's payloads: the features a
session and device offer, the sleep timer's attributes, source labels,
the session's epoch, an artwork image's type and the volume section.
Pure functions, no Home Assistant state (tested directly)."""

from __future__ import annotations

from typing import Any

from homeassistant.components.media_player import MediaPlayerEntityFeature

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
    if "mute" in commands or "unmute" in commands:
        features |= F.VOLUME_MUTE
    return features


def sleep_timer_attributes(session: dict[str, Any] | None) -> dict[str, Any]:
    """The running sleep timer as attributes (all None with no timer; pure: tested on its own)."""
    timer = session.get("sleepTimer") if session else None
    timer = timer if isinstance(timer, dict) else {}
    return {
        "sleep_timer_ends_at": timer.get("endsAt"),
        "sleep_timer_minutes": timer.get("minutes"),
        "sleep_timer_fade_seconds": timer.get("fadeSeconds"),
        "sleep_timer_fading": timer.get("fading"),
    }


def source_labels(catalog: list[dict[str, Any]]) -> list[str]:
    """The label shown for each catalog entry, as the speaker's discovery
    select shows it: the trimmed name; a name shared by several entries as
    `name (id)` for each; an empty name (or "None") as the id; should the
    labels still collide, every label is the id (ids are unique)."""
    names = []
    for entry in catalog:
        name = str(entry.get("name") or "").strip()
        names.append(entry["id"] if not name or name.lower() == "none" else name)
    labels = [f"{name} ({entry['id']})" if names.count(name) > 1 else name for name, entry in zip(names, catalog)]
    return labels if len(set(labels)) == len(labels) else [entry["id"] for entry in catalog]


def session_epoch(session: dict[str, Any]) -> str | None:
    """The epoch of the revision counter a session was numbered by
    (`devices[0].epoch`), or None from a speaker that predates epochs."""
    devices = session.get("devices")
    if isinstance(devices, list) and devices and isinstance(devices[0], dict):
        epoch = devices[0].get("epoch")
        return epoch if isinstance(epoch, str) else None
    return None


def artwork_content_type(data: bytes) -> str | None:
    """The image type of an `artwork/{id}` payload by its magic bytes
    (None: not an image, e.g. the empty payload that clears one; pure)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    return None


def volume_of(device: dict[str, Any] | None) -> dict[str, Any]:
    volume = device.get("volume") if device else None
    return volume if isinstance(volume, dict) else {}
