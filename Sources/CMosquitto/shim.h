// SPDX-License-Identifier: Apache-2.0
/* libmosquitto's headers for the MQTTLink adapter and the test peer. Any
 * macro Swift cannot import becomes a small prefixed (cmosq_) function
 * here; system calls belong to CSystemShim, behind SpeakerSystem. */
#include <mosquitto.h>
#include <mqtt_protocol.h>
