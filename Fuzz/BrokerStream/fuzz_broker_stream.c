// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the broker-to-client byte stream through libmosquitto's
 * packet reader, as the speaker links it (scripts/build-libmosquitto,
 * SANITIZE=fuzzer: the library itself is built with ASan and coverage).
 *
 * Each input is what a broker sends after the client's CONNECT. Byte 0
 * picks the protocol (even: MQTT v5, odd: 3.1.1) and whether the client
 * already counts as connected; the rest is written into one end of a
 * socketpair whose other end becomes the client's socket, then closed, and
 * libmosquitto reads and handles packets until it reports an error or EOF —
 * the same packet__read path mosquitto_loop_read takes. Callbacks are set so
 * CONNACK, PUBLISH, SUBACK, DISCONNECT… run their handlers to the end.
 *
 * This uses libmosquitto's internal headers (installed under
 * include/internal by the fuzzer build only): the client's socket and
 * protocol have no public setter. Built and run by scripts/fuzz-broker-stream. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/socket.h>

#include "config.h"
#include "mosquitto_internal.h"
#include "mosquitto.h"
#include "mqtt_protocol.h"
#include "net_mosq.h"
#include "packet_mosq.h"
#include "util_mosq.h"

static void on_connect(struct mosquitto *m, void *u, int rc, int flags, const mosquitto_property *p)
{
	(void)m; (void)u; (void)rc; (void)flags; (void)p;
}

static void on_message(struct mosquitto *m, void *u, const struct mosquitto_message *msg, const mosquitto_property *p)
{
	(void)m; (void)u; (void)p;
	/* Touch what the speaker's link copies out of every message. */
	volatile size_t n = msg->topic ? strlen(msg->topic) : 0;
	if(msg->payloadlen > 0 && msg->payload){ n += ((const uint8_t *)msg->payload)[msg->payloadlen - 1]; }
	char *text = NULL;
	mosquitto_property_read_string(p, MQTT_PROP_RESPONSE_TOPIC, &text, false);
	free(text);
	void *binary = NULL;
	uint16_t length = 0;
	mosquitto_property_read_binary(p, MQTT_PROP_CORRELATION_DATA, &binary, &length, false);
	free(binary);
	(void)n;
}

static void on_disconnect(struct mosquitto *m, void *u, int rc, const mosquitto_property *p)
{
	(void)m; (void)u; (void)rc; (void)p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int initialised = 0;
	if(!initialised){
		mosquitto_lib_init();
		initialised = 1;
	}
	if(size < 1) return 0;

	struct mosquitto *mosq = mosquitto_new("ambient-speaker-fuzz", true, NULL);
	if(!mosq) return 0;
	mosquitto_connect_v5_callback_set(mosq, on_connect);
	mosquitto_message_v5_callback_set(mosq, on_message);
	mosquitto_disconnect_v5_callback_set(mosq, on_disconnect);

	int sv[2];
	if(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0){
		mosquitto_destroy(mosq);
		return 0;
	}
	mosq->protocol = (data[0] & 1) ? mosq_p_mqtt311 : mosq_p_mqtt5;
	mosquitto__set_state(mosq, (data[0] & 2) ? mosq_cs_active : mosq_cs_new);
	mosq->sock = sv[0];
	fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);

	size_t written = 0;
	while(written < size - 1){
		ssize_t n = write(sv[1], data + 1 + written, size - 1 - written);
		if(n <= 0) break;
		written += (size_t)n;
	}
	close(sv[1]);

	for(int i = 0; i < 10000 && mosq->sock != INVALID_SOCKET; i++){
		if(packet__read(mosq) != MOSQ_ERR_SUCCESS) break;
	}
	mosquitto_destroy(mosq); /* closes sv[0] if still open */
	return 0;
}
