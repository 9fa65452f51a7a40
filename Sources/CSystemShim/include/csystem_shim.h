// SPDX-License-Identifier: Apache-2.0
// Linux system headers that Swift's Glibc module does not export
// (timex, timerfd, eventfd, signalfd, getrandom, epoll, TCP options), and the
// few calls Swift cannot make itself, for SpeakerSystem only: every adapter
// reaches them through SpeakerSystem's funnel (`systemCall`).
#ifndef CSYSTEM_SHIM_H
#define CSYSTEM_SHIM_H
#include <sys/timex.h>
#include <sys/timerfd.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <unistd.h>

/// adjtimex(2) in read-only mode: 1 when the kernel says the clock is
/// NTP-synchronised, 0 when not, -1 with errno on failure.
static inline int csys_clock_synchronised(void) {
    struct timex tx = {0};
    int state = adjtimex(&tx);
    if (state < 0) return -1;
    return (state != TIME_ERROR && !(tx.status & STA_UNSYNC)) ? 1 : 0;
}

/// pthread_setname_np(3) on the calling thread (a GNU extension, hence
/// defined in csystem_shim.c under _GNU_SOURCE): at most 15 bytes. 0, or an
/// error number (ERANGE for a longer name).
int csys_name_this_thread(const char *name);

/// pidfd_open(2), which has no glibc wrapper on bookworm (and syscall(2) is
/// variadic): an fd that becomes readable when the process exits. -1 with
/// errno on failure (ENOSYS before Linux 5.3).
static inline int csys_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/// epoll_ctl(2) for `fd` in `set` with `op` (EPOLL_CTL_ADD/MOD/DEL),
/// watching input, and output too when `output` is set. struct epoll_event
/// is packed on x86-64, which Swift cannot import, hence C. 0, or -1 with errno.
static inline int csys_epoll_ctl(int set, int op, int fd, int output) {
    struct epoll_event event = { .events = EPOLLIN | (output ? EPOLLOUT : 0), .data = { .fd = fd } };
    return epoll_ctl(set, op, fd, &event);
}

/// setsockopt(2) TCP_CORK on (1) or off (0). 0, or -1 with errno.
static inline int csys_set_tcp_cork(int socket, int on) {
    return setsockopt(socket, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
}
#endif
