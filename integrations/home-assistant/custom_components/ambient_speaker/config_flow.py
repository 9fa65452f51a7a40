# SPDX-License-Identifier: Apache-2.0
"""Config flow: pick one of the speakers announcing themselves on the broker.

A speaker announces itself with retained `device`, `session` and
`availability` messages under `{prefix}/{deviceId}/`. The user step scans a
prefix for them (through Home Assistant's MQTT integration) and lists the
ones not yet set up; a speaker on the default prefix is also discovered by
itself (the manifest's `mqtt` topic) and only needs confirming.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import voluptuous as vol

from homeassistant.components import mqtt
from homeassistant.config_entries import ConfigFlow, ConfigFlowResult
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.service_info.mqtt import MqttServiceInfo

from .const import CONF_DEVICE_ID, CONF_PREFIX, DEFAULT_PREFIX, DOMAIN, SCAN_WINDOW_S

_DEVICE_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


def _valid_prefix(prefix: str) -> bool:
    """The contract's rule: no wildcards, NUL or empty levels."""
    return bool(prefix) and not any(c in prefix for c in "+#\0") and "" not in prefix.split("/")


def _decode(payload: Any) -> Any:
    try:
        return json.loads(payload)
    except (TypeError, ValueError):
        return None


async def async_scan(hass: HomeAssistant, prefix: str) -> dict[str, dict[str, Any]]:
    """The speakers whose retained announcements are on the broker under `prefix`:
    device id -> {"name", "availability"}; only those with a device descriptor."""
    found: dict[str, dict[str, Any]] = {}

    @callback
    def on_message(msg: mqtt.ReceiveMessage) -> None:
        device_id, leaf = msg.topic.split("/")[-2:]
        if not _DEVICE_ID.match(device_id) or not msg.payload:
            return
        info = found.setdefault(device_id, {"availability": "unknown"})
        if leaf == "device":
            data = _decode(msg.payload)
            if isinstance(data, dict):
                info["name"] = str(data.get("name") or device_id)
        elif leaf == "availability":
            info["availability"] = str(msg.payload)

    unsubscribes = [
        await mqtt.async_subscribe(hass, f"{prefix}/+/{leaf}", on_message, qos=1)
        for leaf in ("device", "session", "availability")
    ]
    try:
        # Retained messages arrive right after the subscription is made; the
        # window bounds a broker that holds none.
        await asyncio.sleep(SCAN_WINDOW_S)
    finally:
        for unsubscribe in unsubscribes:
            unsubscribe()
    return {k: v for k, v in found.items() if "name" in v}


class AmbientSpeakerConfigFlow(ConfigFlow, domain=DOMAIN):
    """One config entry per speaker (unique id `{prefix}/{deviceId}`)."""

    VERSION = 1

    def __init__(self) -> None:
        self._prefix = DEFAULT_PREFIX
        self._found: dict[str, dict[str, Any]] = {}
        self._discovered: tuple[str, str] | None = None

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Ask for the topic prefix, then scan it."""
        errors: dict[str, str] = {}
        if user_input is not None:
            prefix = user_input[CONF_PREFIX].strip().strip("/")
            if not _valid_prefix(prefix):
                errors[CONF_PREFIX] = "invalid_prefix"
            else:
                self._prefix = prefix
                configured = {entry.unique_id for entry in self._async_current_entries()}
                found = await async_scan(self.hass, prefix)
                self._found = {k: v for k, v in found.items() if f"{prefix}/{k}" not in configured}
                if self._found:
                    return await self.async_step_pick()
                errors["base"] = "all_configured" if found else "no_speakers"
        return self.async_show_form(
            step_id="user",
            data_schema=vol.Schema({vol.Required(CONF_PREFIX, default=self._prefix): str}),
            errors=errors,
        )

    async def async_step_pick(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """List the speakers found; create the entry for the one picked."""
        if user_input is not None:
            device_id = user_input[CONF_DEVICE_ID]
            return await self._async_create(device_id, self._found[device_id]["name"])
        options = {
            device_id: f"{info['name']} ({device_id}, {info['availability']})"
            for device_id, info in sorted(self._found.items())
        }
        return self.async_show_form(
            step_id="pick",
            data_schema=vol.Schema({vol.Required(CONF_DEVICE_ID): vol.In(options)}),
            description_placeholders={"prefix": self._prefix},
        )

    async def async_step_mqtt(self, discovery_info: MqttServiceInfo) -> ConfigFlowResult:
        """A speaker's retained `device` on the default prefix was seen."""
        *levels, device_id, _ = discovery_info.topic.split("/")
        data = _decode(discovery_info.payload)
        if not levels or not _DEVICE_ID.match(device_id) or not isinstance(data, dict):
            return self.async_abort(reason="invalid_discovery_info")
        self._prefix = "/".join(levels)
        await self.async_set_unique_id(f"{self._prefix}/{device_id}")
        self._abort_if_unique_id_configured()
        name = str(data.get("name") or device_id)
        self._discovered = (device_id, name)
        self.context["title_placeholders"] = {"name": name}
        return await self.async_step_confirm()

    async def async_step_confirm(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Confirm a discovered speaker."""
        assert self._discovered is not None
        device_id, name = self._discovered
        if user_input is not None:
            return await self._async_create(device_id, name)
        self._set_confirm_only()
        return self.async_show_form(
            step_id="confirm", description_placeholders={"name": name, "device_id": device_id}
        )

    async def _async_create(self, device_id: str, name: str) -> ConfigFlowResult:
        # A discovery flow for the same speaker may be open: this one wins
        # (creating the entry aborts the other).
        await self.async_set_unique_id(f"{self._prefix}/{device_id}", raise_on_progress=False)
        self._abort_if_unique_id_configured()
        return self.async_create_entry(
            title=name, data={CONF_PREFIX: self._prefix, CONF_DEVICE_ID: device_id}
        )
