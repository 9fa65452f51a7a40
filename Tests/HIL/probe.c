// hil-probe: the outside world of the HIL VM, as one small static binary.
// It drives gpio-sim lines with real timing (sysfs `pull`), measures pulses on
// gpio-sim outputs (sysfs `value`) and the level of captured audio, which the
// busybox shell cannot do with sub-millisecond timing or arithmetic.
//
//   hil-probe press PULL MS [bounce]               active-low button: pulled down MS ms
//   hil-probe turn PULL_A PULL_B DETENTS STEP_US [bounce]
//                                                  quadrature, DETENTS < 0 turns back; each
//                                                  phase change bounces (3 extra flips in 0.4 ms)
//   hil-probe pulses VALUE_UP VALUE_DOWN MS ACTIVE_LOW
//                                                  samples both outputs for MS ms and prints
//                                                  "pulse up|down width_us=N min_us=N max_us=N
//                                                  gap_min_us=N gap_max_us=N" per pulse (bounds
//                                                  from the samples around each edge)
//   hil-probe rms FILE                             RMS of an S16_LE file, in 1/32768 units
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void sleep_until(uint64_t t) {
    struct timespec ts = { (time_t)(t / 1000000u), (long)(t % 1000000u) * 1000 };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
}

static int open_or_die(const char *path, int flags) {
    int fd = open(path, flags);
    if (fd < 0) { perror(path); exit(2); }
    return fd;
}

/* Active-low contact: active = closed to ground = pulled down. */
static void set_line(int fd, int active) {
    const char *v = active ? "pull-down" : "pull-up";
    if (pwrite(fd, v, strlen(v), 0) < 0) { perror("pull"); exit(2); }
}

/* Sets a line, bouncing first if asked: flip, flip back, flip, settle (within ~0.4 ms). */
static void change(int fd, int active, int bounce) {
    if (bounce) {
        uint64_t t = now_us();
        set_line(fd, active); sleep_until(t + 100);
        set_line(fd, !active); sleep_until(t + 200);
        set_line(fd, active); sleep_until(t + 300);
        set_line(fd, !active); sleep_until(t + 400);
    }
    set_line(fd, active);
}

static int read_value(int fd) {
    char c = '0';
    if (pread(fd, &c, 1, 0) != 1) { perror("value"); exit(2); }
    return c == '1';
}

int main(int argc, char **argv) {
    if (argc >= 4 && !strcmp(argv[1], "press")) {
        int fd = open_or_die(argv[2], O_WRONLY);
        int bounce = argc > 4;
        uint64_t t = now_us();
        change(fd, 1, bounce);
        sleep_until(t + (uint64_t)atoi(argv[3]) * 1000u);
        change(fd, 0, bounce);
        return 0;
    }
    if (argc >= 6 && !strcmp(argv[1], "turn")) {
        int a = open_or_die(argv[2], O_WRONLY), b = open_or_die(argv[3], O_WRONLY);
        int detents = atoi(argv[4]), step = atoi(argv[5]), bounce = argc > 6;
        int lead = detents > 0 ? a : b, lag = detents > 0 ? b : a;
        uint64_t t = now_us();
        for (int i = 0; i < abs(detents); i++) {
            int fds[4] = { lead, lag, lead, lag }, levels[4] = { 1, 1, 0, 0 };
            for (int k = 0; k < 4; k++) {
                change(fds[k], levels[k], bounce);
                t += (uint64_t)step;
                sleep_until(t);
            }
        }
        return 0;
    }
    if (argc >= 6 && !strcmp(argv[1], "pulses")) {
        /* The VM has one CPU, shared with the speaker that makes the pulses, so a
         * sample can come late. Each edge is bracketed by the sample before and
         * the sample that saw it, which gives sound bounds for every width and
         * gap: min_us < true width < max_us. */
        int fds[2] = { open_or_die(argv[2], O_RDONLY), open_or_die(argv[3], O_RDONLY) };
        int active_low = atoi(argv[5]);
        uint64_t end = now_us() + (uint64_t)atoi(argv[4]) * 1000u;
        /* An edge seen by a read happened after the previous read of that line began
         * (prev_before) and before this read ended (after). */
        uint64_t prev_before[2] = { now_us(), now_us() }, start_lo[2] = { 0, 0 }, start_hi[2] = { 0, 0 };
        uint64_t last_end_lo = 0, last_end_hi = 0;
        int state[2] = { 0, 0 };
        while (now_us() < end) {
            for (int k = 0; k < 2; k++) {
                uint64_t before = now_us();
                int active = read_value(fds[k]) != active_low;
                uint64_t after = now_us();
                if (active && !state[k]) { start_lo[k] = prev_before[k]; start_hi[k] = after; }
                if (!active && state[k]) {
                    uint64_t end_lo = prev_before[k], end_hi = after;
                    printf("pulse %s width_us=%llu min_us=%llu max_us=%llu gap_min_us=%lld gap_max_us=%lld\n",
                           k == 0 ? "up" : "down",
                           (unsigned long long)(end_hi - start_hi[k]),
                           (unsigned long long)(end_lo > start_hi[k] ? end_lo - start_hi[k] : 0),
                           (unsigned long long)(end_hi - start_lo[k]),
                           last_end_hi ? (long long)(start_lo[k] - last_end_hi) : -1LL,
                           last_end_hi ? (long long)(start_hi[k] - last_end_lo) : -1LL);
                    last_end_lo = end_lo; last_end_hi = end_hi;
                }
                state[k] = active;
                prev_before[k] = before;
            }
        }
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "rms")) {
        FILE *f = fopen(argv[2], "rb");
        if (!f) { perror(argv[2]); return 2; }
        int16_t s[4096];
        size_t n;
        double sum = 0;
        unsigned long long count = 0;
        while ((n = fread(s, 2, 4096, f)) > 0) {
            for (size_t i = 0; i < n; i++) sum += (double)s[i] * s[i];
            count += n;
        }
        fclose(f);
        printf("%ld\n", count ? lrint(sqrt(sum / (double)count)) : -1L);
        return 0;
    }
    fprintf(stderr, "usage: see the comment at the top of probe.c\n");
    return 2;
}
