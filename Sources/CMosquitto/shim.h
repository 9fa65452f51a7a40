#include <mosquitto.h>
#include <mqtt_protocol.h>

#include <errno.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* Small helpers Swift cannot call directly (variadic syscall). */

/* pidfd_open(2): an fd that becomes readable when the process exits.
 * Returns -1 with errno set on failure (e.g. kernels before 5.3). */
static inline int cmosq_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

/* The MQTT link's readiness set (MQTTLink+Owner): one pollable descriptor
 * for the main loop, readable when any member is (the mailbox's eventfd, the
 * keepalive timerfd, and the broker socket while the main thread owns it).
 * struct epoll_event is packed on x86-64, hence C. */
static inline int cmosq_readiness_new(void) { return epoll_create1(EPOLL_CLOEXEC); }

/* Watches `fd` for input, and for output too when `output` is set; adds it
 * or updates it. 0, or -1 with errno. */
static inline int cmosq_readiness_watch(int set, int fd, int output) {
    struct epoll_event event = { .events = EPOLLIN | (output ? EPOLLOUT : 0), .data = { .fd = fd } };
    if (epoll_ctl(set, EPOLL_CTL_MOD, fd, &event) == 0) return 0;
    if (errno != ENOENT) return -1;
    return epoll_ctl(set, EPOLL_CTL_ADD, fd, &event);
}

/* Stops watching `fd` (a no-op when it is not watched). */
static inline void cmosq_readiness_forget(int set, int fd) {
    struct epoll_event unused = { 0 };
    (void)epoll_ctl(set, EPOLL_CTL_DEL, fd, &unused);
}

/* A non-blocking CLOCK_MONOTONIC timerfd. */
static inline int cmosq_timer_new(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }

/* Fires every `milliseconds` from now, or never (0). 0, or -1 with errno. */
static inline int cmosq_timer_every(int timer, long milliseconds) {
    struct itimerspec spec = { { milliseconds / 1000, (milliseconds % 1000) * 1000000L },
                               { milliseconds / 1000, (milliseconds % 1000) * 1000000L } };
    return timerfd_settime(timer, 0, &spec, NULL);
}

/* TCP_CORK on (1) or off (0): while on, the kernel holds partial segments,
 * so packets written back to back leave as one segment when it goes off. */
static inline int cmosq_cork(int socket, int on) {
    return setsockopt(socket, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
}
