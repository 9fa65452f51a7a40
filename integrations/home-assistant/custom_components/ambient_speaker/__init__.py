# SPDX-License-Identifier: Apache-2.0
"""Ambient speaker: a media player for each speaker found on Home Assistant's MQTT broker.

The speaker (https://github.com/ambient-speaker/ambient-speaker) publishes retained `device`,
`session`, `catalog` and `availability` topics under `{prefix}/{deviceId}/`
and takes commands on `command` (QoS 1, each answered on `command/result`).
This integration follows those topics through Home Assistant's own MQTT
integration; it holds no connection of its own.
"""

from __future__ import annotations

from homeassistant.components import mqtt
from homeassistant.config_entries import ConfigEntry
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryNotReady

PLATFORMS = [Platform.MEDIA_PLAYER]


async def async_setup_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    """Set up one speaker once Home Assistant's MQTT client is available."""
    if not await mqtt.async_wait_for_mqtt_client(hass):
        raise ConfigEntryNotReady("Home Assistant's MQTT integration is not available")
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    return True


async def async_unload_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    """Unload the speaker's entities (their MQTT subscriptions end with them)."""
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)
