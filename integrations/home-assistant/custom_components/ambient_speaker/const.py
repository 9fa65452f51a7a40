# SPDX-License-Identifier: Apache-2.0
"""Constants of the Ambient speaker integration (the speaker's MQTT contract v1)."""

DOMAIN = "ambient_speaker"
CONF_PREFIX = "prefix"
CONF_DEVICE_ID = "device_id"
DEFAULT_PREFIX = "ambient-speaker"
# Every command is published at QoS 1 and answered on command/result; a
# speaker that does not answer within this time is reported as an error.
COMMAND_TIMEOUT_S = 10.0
# The config flow listens this long for retained announcements (they arrive
# right after the subscription; the window only bounds a silent broker).
SCAN_WINDOW_S = 2.0
# A good result names the revision of the `session` that shows its change and
# leaves just before it (MQTT orders messages only within a topic): a service
# call returns once that session is applied, waiting at most this long for it.
STATE_WAIT_S = 2.0
