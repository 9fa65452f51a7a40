// SPDX-License-Identifier: Apache-2.0
#include <alsa/asoundlib.h>
// The audio adapter's thread wake-ups: eventfd(2) is not exported by Swift's
// Glibc module, so it comes in through this header (no code, only declarations).
#include <sys/eventfd.h>

/* alsa-lib prints its own diagnostics to stderr (from whichever thread hit
 * them, the audio thread included). The speaker reports every failure itself
 * with snd_strerror, so those lines are only noise: this handler drops them. */
static void calsa_quiet_error_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

/** Routes alsa-lib's own error messages to nowhere (see above). */
static inline void calsa_silence_library_messages(void) {
    snd_lib_error_set_handler(calsa_quiet_error_handler);
}
