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

#include <sys/epoll.h>

/* The MQTT link's readiness set (MQTTLink+MainRead): one pollable descriptor
 * for the main loop, readable when any member is. */
static inline int cmosq_readiness_new(void) { return epoll_create1(EPOLL_CLOEXEC); }

/* Watches `fd` for input; a descriptor number already present (a closed
 * socket's number reused) is updated. 0, or -1 with errno. */
static inline int cmosq_readiness_add(int set, int fd) {
    struct epoll_event event = { .events = EPOLLIN, .data = { .fd = fd } };
    if (epoll_ctl(set, EPOLL_CTL_ADD, fd, &event) == 0) return 0;
    if (errno != EEXIST) return -1;
    return epoll_ctl(set, EPOLL_CTL_MOD, fd, &event);
}
