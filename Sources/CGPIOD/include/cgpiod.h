// SPDX-License-Identifier: Apache-2.0
// cgpiod: a thin, version-neutral shim over libgpiod v1 (1.6) and v2 (2.x).
// The API is chosen at build time by whichever <gpiod.h> pkg-config finds
// (cgpiod.c tests GPIOD_LINE_BULK_MAX_LINES, defined only by the v1 header).
// Everything above this header (lookup by name, errors, event fds in the
// poll loop) is shared Swift code in the Board module.
//
// Conventions: functions returning int give 0 (or a count) on success and -1
// with errno set on failure; functions returning a pointer give NULL with
// errno set. Requests are for one line each. Not thread-safe per request;
// the speaker uses them from its event-loop thread only.
#ifndef CGPIOD_H
#define CGPIOD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CGPIOD_TEXT_MAX 64

/// A GPIO chip: kernel name (`gpiochip0`), driver label, number of lines.
typedef struct {
    char name[CGPIOD_TEXT_MAX];
    char label[CGPIOD_TEXT_MAX];
    unsigned int num_lines;
} cgpiod_chip_info;

/// One line of a chip: its name (empty if unnamed), consumer (empty if none),
/// whether the kernel reports it in use, and whether it is an output.
typedef struct {
    char name[CGPIOD_TEXT_MAX];
    char consumer[CGPIOD_TEXT_MAX];
    int used;
    int output;
} cgpiod_line_info;

/// One edge: CLOCK_MONOTONIC timestamp from the kernel, and the new logical
/// level (1 = rose to active, after active-low was applied by the kernel).
/// `lost` counts edges the kernel dropped before this one (its queue was
/// full), from the v2 per-line sequence numbers; always 0 with v1.
typedef struct {
    uint64_t timestamp_ns;
    int rising;
    unsigned int lost;
} cgpiod_event;

/// Pull resistor for an input line.
typedef enum {
    CGPIOD_BIAS_AS_IS = 0,
    CGPIOD_BIAS_DISABLED = 1,
    CGPIOD_BIAS_PULL_UP = 2,
    CGPIOD_BIAS_PULL_DOWN = 3,
} cgpiod_bias;

/// An opaque request for one line (input with edge events, or output).
typedef struct cgpiod_request cgpiod_request;

/// 1 for the libgpiod v1 API, 2 for v2.
int cgpiod_api_major(void);
/// The library's version string (gpiod_version_string / gpiod_api_version).
const char *cgpiod_library_version(void);
/// 1 if this API can ask the kernel to debounce an input line (v2), else 0.
int cgpiod_has_kernel_debounce(void);

/// Opens the chip at `path` (`/dev/gpiochipN`) and describes it.
int cgpiod_chip_describe(const char *path, cgpiod_chip_info *out);
/// Describes up to `count` lines of the chip at `path`, from offset 0;
/// returns how many were described.
int cgpiod_chip_describe_lines(const char *path, cgpiod_line_info *out, unsigned int count);

/// Requests line `offset` of chip `path` as an input reporting both edges with
/// kernel (monotonic) timestamps, the given bias and polarity, and kernel
/// debounce of `debounce_us` microseconds where the API has it (ignored by v1).
/// With v2 the kernel queue holds 1024 edges (v1: fixed at 16).
cgpiod_request *cgpiod_request_input(const char *path, unsigned int offset, const char *consumer,
                                     cgpiod_bias bias, int active_low, unsigned long debounce_us);
/// Requests line `offset` of chip `path` as an output with the given polarity
/// and initial logical value.
cgpiod_request *cgpiod_request_output(const char *path, unsigned int offset, const char *consumer,
                                      int active_low, int value);
/// The file descriptor that becomes readable when edge events are pending.
int cgpiod_request_fd(cgpiod_request *request);
/// Reads up to `max` pending edge events (blocks if none are pending; call
/// when the fd is readable); returns how many were read.
int cgpiod_request_read(cgpiod_request *request, cgpiod_event *out, int max);
/// Reads a line's current logical value (0 or 1), or -1 with errno set.
int cgpiod_request_get_value(cgpiod_request *request);
/// How many edges the kernel queues per input request before it drops some:
/// 16 with v1 (fixed by the uAPI; v1 drops the newest), 1024 with v2 (as
/// requested; v2 drops the oldest and reports the gap in `lost`).
int cgpiod_event_queue_size(void);
/// Sets an output line's logical value (0 or 1).
int cgpiod_request_set(cgpiod_request *request, int value);
/// Releases the line (and, for v1, closes its chip). NULL is ignored.
void cgpiod_request_release(cgpiod_request *request);

#ifdef __cplusplus
}
#endif

#endif
