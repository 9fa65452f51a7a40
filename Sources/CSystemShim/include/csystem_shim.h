// Linux system headers that Swift's Glibc module does not export
// (timex, timerfd, eventfd, signalfd, getrandom), for SpeakerSystem only.
#ifndef CSYSTEM_SHIM_H
#define CSYSTEM_SHIM_H
#include <sys/timex.h>
#include <sys/timerfd.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/random.h>
#include <sys/socket.h>

/// adjtimex(2) in read-only mode: 1 when the kernel says the clock is
/// NTP-synchronised, 0 when not, -1 with errno on failure.
static inline int csys_clock_synchronised(void) {
    struct timex tx = {0};
    int state = adjtimex(&tx);
    if (state < 0) return -1;
    return (state != TIME_ERROR && !(tx.status & STA_UNSYNC)) ? 1 : 0;
}
#endif
