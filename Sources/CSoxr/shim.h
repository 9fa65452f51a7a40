// SPDX-License-Identifier: Apache-2.0
// libsoxr (Debian: libsoxr-dev): the resampler that converts file sounds to
// the output rate. Declarations only, plus macros turned into functions.
#include <soxr.h>

/** soxr_quality_spec(SOXR_MQ, 0): 16-bit precision ("medium"), enough for S16 output and cheap on a Pi Zero. */
static inline soxr_quality_spec_t csoxr_medium_quality(void) {
    return soxr_quality_spec(SOXR_MQ, 0);
}

/** An io spec for interleaved 32-bit float in and out (SOXR_FLOAT32_I). */
static inline soxr_io_spec_t csoxr_float_interleaved(void) {
    return soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
}
