# SPDX-License-Identifier: Apache-2.0
"""The config flow against a real broker: the user step lists the speakers
whose retained announcements are there; discovery finds one by itself."""

from __future__ import annotations

from homeassistant import config_entries
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType

from custom_components.ambient_speaker.const import DOMAIN

from .conftest import PREFIX, announce, publish, until


async def test_user_flow_lists_announcing_speakers_and_creates_the_entry(hass: HomeAssistant, mqtt_entry) -> None:
    await announce(hass, "kitchen", "Kitchen speaker")
    await announce(hass, "porch", "Porch speaker", control="relative", online=False)
    await publish(hass, "elsewhere/other/device", {"name": "not under the prefix"})

    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": config_entries.SOURCE_USER})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "user"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"prefix": PREFIX})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "pick"
    options = result["data_schema"].schema["device_id"].container
    assert options == {"kitchen": "Kitchen speaker (kitchen, online)", "porch": "Porch speaker (porch, offline)"}

    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"device_id": "porch"})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Porch speaker"
    assert result["data"] == {"prefix": PREFIX, "device_id": "porch"}
    assert result["result"].unique_id == f"{PREFIX}/porch"

    # A configured speaker is no longer offered.
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": config_entries.SOURCE_USER})
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"prefix": PREFIX})
    assert list(result["data_schema"].schema["device_id"].container) == ["kitchen"]


async def test_user_flow_says_when_nothing_announces_itself(hass: HomeAssistant, mqtt_entry) -> None:
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": config_entries.SOURCE_USER})
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"prefix": PREFIX})
    assert result["type"] is FlowResultType.FORM and result["errors"] == {"base": "no_speakers"}
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"prefix": "bad/+/prefix"})
    assert result["errors"] == {"prefix": "invalid_prefix"}


async def test_a_speaker_is_discovered_by_itself(hass: HomeAssistant, mqtt_entry) -> None:
    await announce(hass, "attic", "Attic speaker")
    flows = await until(lambda: hass.config_entries.flow.async_progress_by_handler(DOMAIN))
    assert flows[0]["context"]["source"] == "mqtt"
    assert flows[0]["step_id"] == "confirm"
    result = await hass.config_entries.flow.async_configure(flows[0]["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {"prefix": PREFIX, "device_id": "attic"}
