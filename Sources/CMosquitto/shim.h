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
