// SPDX-License-Identifier: Apache-2.0
// cgpiod: libgpiod v1/v2 behind one small API (see include/cgpiod.h).
// GPIOD_LINE_BULK_MAX_LINES is defined only by the v1 header.
#define _GNU_SOURCE
#include "cgpiod.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <gpiod.h>

static void copy_text(char *dst, const char *src) {
    if (!src) { dst[0] = '\0'; return; }
    strncpy(dst, src, CGPIOD_TEXT_MAX - 1);
    dst[CGPIOD_TEXT_MAX - 1] = '\0';
}

#define EVENT_BATCH 16

#ifdef GPIOD_LINE_BULK_MAX_LINES
/* ---------------------------------------------------------------- v1 API */

struct cgpiod_request {
    struct gpiod_chip *chip;
    struct gpiod_line *line;
};

int cgpiod_api_major(void) { return 1; }
const char *cgpiod_library_version(void) { return gpiod_version_string(); }
int cgpiod_has_kernel_debounce(void) { return 0; }

int cgpiod_chip_describe(const char *path, cgpiod_chip_info *out) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return -1;
    copy_text(out->name, gpiod_chip_name(chip));
    copy_text(out->label, gpiod_chip_label(chip));
    out->num_lines = gpiod_chip_num_lines(chip);
    gpiod_chip_close(chip);
    return 0;
}

int cgpiod_chip_describe_lines(const char *path, cgpiod_line_info *out, unsigned int count) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return -1;
    unsigned int n = gpiod_chip_num_lines(chip);
    if (n > count) n = count;
    for (unsigned int i = 0; i < n; i++) {
        struct gpiod_line *line = gpiod_chip_get_line(chip, i);
        if (!line) { int e = errno; gpiod_chip_close(chip); errno = e; return -1; }
        copy_text(out[i].name, gpiod_line_name(line));
        copy_text(out[i].consumer, gpiod_line_consumer(line));
        out[i].used = gpiod_line_is_used(line) ? 1 : 0;
        out[i].output = gpiod_line_direction(line) == GPIOD_LINE_DIRECTION_OUTPUT;
    }
    gpiod_chip_close(chip);
    return (int)n;
}

static cgpiod_request *request_v1(const char *path, unsigned int offset, const char *consumer,
                                  int type, int flags, int value) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return NULL;
    struct gpiod_line *line = gpiod_chip_get_line(chip, offset);
    struct gpiod_line_request_config config = { .consumer = consumer, .request_type = type, .flags = flags };
    if (!line || gpiod_line_request(line, &config, value) < 0) {
        int e = errno; gpiod_chip_close(chip); errno = e;
        return NULL;
    }
    cgpiod_request *r = calloc(1, sizeof *r);
    if (!r) { gpiod_line_release(line); gpiod_chip_close(chip); errno = ENOMEM; return NULL; }
    r->chip = chip;
    r->line = line;
    return r;
}

cgpiod_request *cgpiod_request_input(const char *path, unsigned int offset, const char *consumer,
                                     cgpiod_bias bias, int active_low, unsigned long debounce_us) {
    (void)debounce_us; /* the v1 uAPI has no debounce */
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    switch (bias) {
    case CGPIOD_BIAS_DISABLED: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE; break;
    case CGPIOD_BIAS_PULL_UP: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP; break;
    case CGPIOD_BIAS_PULL_DOWN: flags |= GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN; break;
    default: break;
    }
    return request_v1(path, offset, consumer, GPIOD_LINE_REQUEST_EVENT_BOTH_EDGES, flags, 0);
}

cgpiod_request *cgpiod_request_output(const char *path, unsigned int offset, const char *consumer,
                                      int active_low, int value) {
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    return request_v1(path, offset, consumer, GPIOD_LINE_REQUEST_DIRECTION_OUTPUT, flags, value ? 1 : 0);
}

int cgpiod_request_fd(cgpiod_request *r) { return gpiod_line_event_get_fd(r->line); }

int cgpiod_request_read(cgpiod_request *r, cgpiod_event *out, int max) {
    struct gpiod_line_event events[EVENT_BATCH];
    if (max > EVENT_BATCH) max = EVENT_BATCH;
    int n = gpiod_line_event_read_multiple(r->line, events, (unsigned int)max);
    for (int i = 0; i < n; i++) {
        out[i].timestamp_ns = (uint64_t)events[i].ts.tv_sec * 1000000000ull + (uint64_t)events[i].ts.tv_nsec;
        out[i].rising = events[i].event_type == GPIOD_LINE_EVENT_RISING_EDGE;
        out[i].lost = 0; /* the v1 uAPI has no sequence numbers */
    }
    return n;
}

int cgpiod_request_set(cgpiod_request *r, int value) { return gpiod_line_set_value(r->line, value ? 1 : 0); }

int cgpiod_request_get_value(cgpiod_request *r) { return gpiod_line_get_value(r->line); }

int cgpiod_event_queue_size(void) { return 16; /* the kernel's lineevent kfifo (GPIO_CDEV_V1) */ }

void cgpiod_request_release(cgpiod_request *r) {
    if (!r) return;
    gpiod_line_release(r->line);
    gpiod_chip_close(r->chip);
    free(r);
}

#else
/* ---------------------------------------------------------------- v2 API */

/* The kernel's per-request edge queue; 1024 is its maximum (16 per line x 64 lines). */
#define V2_QUEUE_SIZE 1024

struct cgpiod_request {
    struct gpiod_line_request *request;
    struct gpiod_edge_event_buffer *buffer;
    unsigned int offset;
    unsigned long last_seqno; /* line sequence number of the last event read, 0 before the first */
};

int cgpiod_api_major(void) { return 2; }
const char *cgpiod_library_version(void) { return gpiod_api_version(); }
int cgpiod_has_kernel_debounce(void) { return 1; }

int cgpiod_chip_describe(const char *path, cgpiod_chip_info *out) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return -1;
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip);
    if (!info) { int e = errno; gpiod_chip_close(chip); errno = e; return -1; }
    copy_text(out->name, gpiod_chip_info_get_name(info));
    copy_text(out->label, gpiod_chip_info_get_label(info));
    out->num_lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    gpiod_chip_close(chip);
    return 0;
}

int cgpiod_chip_describe_lines(const char *path, cgpiod_line_info *out, unsigned int count) {
    cgpiod_chip_info chip_info;
    if (cgpiod_chip_describe(path, &chip_info) < 0) return -1;
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return -1;
    unsigned int n = chip_info.num_lines < count ? chip_info.num_lines : count;
    for (unsigned int i = 0; i < n; i++) {
        struct gpiod_line_info *info = gpiod_chip_get_line_info(chip, i);
        if (!info) { int e = errno; gpiod_chip_close(chip); errno = e; return -1; }
        copy_text(out[i].name, gpiod_line_info_get_name(info));
        copy_text(out[i].consumer, gpiod_line_info_get_consumer(info));
        out[i].used = gpiod_line_info_is_used(info) ? 1 : 0;
        out[i].output = gpiod_line_info_get_direction(info) == GPIOD_LINE_DIRECTION_OUTPUT;
        gpiod_line_info_free(info);
    }
    gpiod_chip_close(chip);
    return (int)n;
}

static cgpiod_request *request_v2(const char *path, unsigned int offset, const char *consumer,
                                  struct gpiod_line_settings *settings, int with_events) {
    cgpiod_request *r = NULL;
    struct gpiod_chip *chip = gpiod_chip_open(path);
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    int e = ENOMEM;
    if (!chip) { e = errno; goto out; }
    if (!line_config || !request_config) goto out;
    if (gpiod_line_config_add_line_settings(line_config, &offset, 1, settings) < 0) { e = errno; goto out; }
    gpiod_request_config_set_consumer(request_config, consumer);
    if (with_events) gpiod_request_config_set_event_buffer_size(request_config, V2_QUEUE_SIZE);
    r = calloc(1, sizeof *r);
    if (!r) goto out;
    r->offset = offset;
    if (with_events && !(r->buffer = gpiod_edge_event_buffer_new(EVENT_BATCH))) { free(r); r = NULL; goto out; }
    r->request = gpiod_chip_request_lines(chip, request_config, line_config);
    if (!r->request) {
        e = errno;
        gpiod_edge_event_buffer_free(r->buffer);
        free(r);
        r = NULL;
    }
out:
    gpiod_request_config_free(request_config);
    gpiod_line_config_free(line_config);
    gpiod_line_settings_free(settings);
    if (chip) gpiod_chip_close(chip); /* a v2 request outlives its chip handle */
    if (!r) errno = e;
    return r;
}

cgpiod_request *cgpiod_request_input(const char *path, unsigned int offset, const char *consumer,
                                     cgpiod_bias bias, int active_low, unsigned long debounce_us) {
    struct gpiod_line_settings *s = gpiod_line_settings_new();
    if (!s) { errno = ENOMEM; return NULL; }
    static const enum gpiod_line_bias biases[] = {
        GPIOD_LINE_BIAS_AS_IS, GPIOD_LINE_BIAS_DISABLED, GPIOD_LINE_BIAS_PULL_UP, GPIOD_LINE_BIAS_PULL_DOWN };
    gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_INPUT);
    gpiod_line_settings_set_edge_detection(s, GPIOD_LINE_EDGE_BOTH);
    gpiod_line_settings_set_bias(s, biases[(unsigned)bias < 4 ? bias : 0]);
    gpiod_line_settings_set_active_low(s, active_low != 0);
    gpiod_line_settings_set_debounce_period_us(s, debounce_us);
    gpiod_line_settings_set_event_clock(s, GPIOD_LINE_CLOCK_MONOTONIC);
    return request_v2(path, offset, consumer, s, 1);
}

cgpiod_request *cgpiod_request_output(const char *path, unsigned int offset, const char *consumer,
                                      int active_low, int value) {
    struct gpiod_line_settings *s = gpiod_line_settings_new();
    if (!s) { errno = ENOMEM; return NULL; }
    gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_OUTPUT);
    gpiod_line_settings_set_active_low(s, active_low != 0);
    gpiod_line_settings_set_output_value(s, value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
    return request_v2(path, offset, consumer, s, 0);
}

int cgpiod_request_fd(cgpiod_request *r) { return gpiod_line_request_get_fd(r->request); }

int cgpiod_request_read(cgpiod_request *r, cgpiod_event *out, int max) {
    if (!r->buffer) { errno = EINVAL; return -1; }
    if (max > EVENT_BATCH) max = EVENT_BATCH;
    int n = gpiod_line_request_read_edge_events(r->request, r->buffer, (size_t)max);
    for (int i = 0; i < n; i++) {
        struct gpiod_edge_event *ev = gpiod_edge_event_buffer_get_event(r->buffer, (unsigned long)i);
        out[i].timestamp_ns = gpiod_edge_event_get_timestamp_ns(ev);
        out[i].rising = gpiod_edge_event_get_event_type(ev) == GPIOD_EDGE_EVENT_RISING_EDGE;
        unsigned long seqno = gpiod_edge_event_get_line_seqno(ev);
        out[i].lost = (r->last_seqno && seqno > r->last_seqno + 1) ? (unsigned int)(seqno - r->last_seqno - 1) : 0;
        r->last_seqno = seqno;
    }
    return n;
}

int cgpiod_request_get_value(cgpiod_request *r) {
    enum gpiod_line_value v = gpiod_line_request_get_value(r->request, r->offset);
    return v == GPIOD_LINE_VALUE_ERROR ? -1 : v == GPIOD_LINE_VALUE_ACTIVE;
}

int cgpiod_event_queue_size(void) { return V2_QUEUE_SIZE; }

int cgpiod_request_set(cgpiod_request *r, int value) {
    return gpiod_line_request_set_value(r->request, r->offset,
                                        value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

void cgpiod_request_release(cgpiod_request *r) {
    if (!r) return;
    gpiod_line_request_release(r->request);
    gpiod_edge_event_buffer_free(r->buffer);
    free(r);
}
#endif
