// SPDX-License-Identifier: Apache-2.0
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
//   hil-probe tap PULL MS [bounce]                 like press; prints the first edge's CLOCK_MONOTONIC µs
//   hil-probe detent PULL_A PULL_B DIR STEP_US [bounce]
//                                                  one detent (DIR +1/-1); prints "FIRST_US LAST_US":
//                                                  the first edge and the edge that completes the cycle
//   hil-probe wav FILE VALUE SECONDS               a 48 kHz stereo S16 WAV holding the constant VALUE
//   hil-probe capture RAW TIMES                    copies S16_LE stereo from stdin to RAW; per read, a
//                                                  line "ARRIVAL_US END_FRAME" to TIMES (common clock)
//   hil-probe respond RAW TIMES EVENTS NAME THRESHOLD
//                                                  per event time (µs, first column of EVENTS), the first
//                                                  captured frame after it that differs by > THRESHOLD
//                                                  from the frame at the event; prints the latencies and
//                                                  a JSON line with p50/max (see respond() below)
//   hil-probe sync-clock                           marks the kernel clock NTP-synchronised (adjtimex:
//                                                  status 0, max/est error 0), as an NTP daemon would
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/timex.h>
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

/* With HIL_TRACE set, `turn` records every pull it writes (line A = fd trace_a). */
static struct { uint64_t ns; int fd, active; } trace[8192];
static int trace_n, trace_on, trace_a = -1;

/* Active-low contact: active = closed to ground = pulled down. */
static void set_line(int fd, int active) {
    const char *v = active ? "pull-down" : "pull-up";
    if (trace_on && trace_n < 8192) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        trace[trace_n].ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        trace[trace_n].fd = fd; trace[trace_n].active = active; trace_n++;
    }
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

/* Frame i was played (reached the loopback capture) no later than the arrival of
 * any read that carried it, minus the frames that followed it in that read: the
 * tightest such bound, from a backward pass over the reads. */
static double *frame_times(const char *times_path, size_t frames) {
    FILE *f = fopen(times_path, "r");
    if (!f) { perror(times_path); exit(2); }
    double *t = malloc(frames * sizeof *t);
    size_t cap = 1024, n = 0;
    unsigned long long *arr = malloc(cap * sizeof *arr), *end = malloc(cap * sizeof *end);
    unsigned long long a, e;
    while (fscanf(f, "%llu %llu", &a, &e) == 2) {
        if (n == cap) { cap *= 2; arr = realloc(arr, cap * sizeof *arr); end = realloc(end, cap * sizeof *end); }
        arr[n] = a; end[n] = e; n++;
    }
    fclose(f);
    size_t c = n;
    for (size_t i = frames; i-- > 0;) {
        /* A bound for frame i+1 bounds frame i one frame earlier. */
        double best = i + 1 < frames ? t[i + 1] - 1e6 / 48000.0 : 1e300;
        while (c > 0 && end[c - 1] > i) {
            c--;
            double bound = (double)arr[c] - (double)(end[c] - 1 - i) * 1e6 / 48000.0;
            if (bound < best) best = bound;
        }
        t[i] = best;
    }
    free(arr); free(end);
    return t;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* For each event time: the frame at the event is the reference (the last frame
 * played before it); the response is the first later frame whose left sample
 * differs from it by more than THRESHOLD. Prints each latency and a JSON line. */
static int respond(const char *raw, const char *times, const char *events, const char *name, int threshold) {
    FILE *f = fopen(raw, "rb");
    if (!f) { perror(raw); return 2; }
    fseek(f, 0, SEEK_END);
    size_t frames = (size_t)ftell(f) / 4;
    fseek(f, 0, SEEK_SET);
    int16_t *s = malloc(frames * 4 + 4);
    if (fread(s, 4, frames, f) != frames) { perror("read"); return 2; }
    fclose(f);
    double *t = frame_times(times, frames);
    FILE *ev = fopen(events, "r");
    if (!ev) { perror(events); return 2; }
    double lat[1024];
    int n = 0, missed = 0;
    char line[256];
    while (fgets(line, sizeof line, ev) && n < 1024) {
        double te = atof(line);
        if (te <= 0) continue;
        size_t i0 = 0;
        while (i0 + 1 < frames && t[i0 + 1] <= te) i0++;
        int ref = s[2 * i0];
        size_t j = i0 + 1;
        while (j < frames && abs(s[2 * j] - ref) <= threshold) j++;
        if (j >= frames || t[j] - te > 5e6) { missed++; printf("%s event at %.0f: no change\n", name, te); continue; }
        lat[n] = (t[j] - te) / 1000.0;
        printf("%s event at %.0f: ref %d -> %d after %.2f ms\n", name, te, ref, s[2 * j], lat[n]);
        n++;
    }
    fclose(ev);
    if (n == 0) { printf("{\"metric\":\"%s\",\"events\":0,\"missed\":%d}\n", name, missed); return 1; }
    qsort(lat, (size_t)n, sizeof lat[0], cmp_double);
    printf("{\"metric\":\"%s_p50\",\"value\":%.1f,\"unit\":\"ms\",\"events\":%d,\"missed\":%d}\n", name, lat[(n - 1) / 2], n, missed);
    printf("{\"metric\":\"%s_max\",\"value\":%.1f,\"unit\":\"ms\",\"events\":%d,\"missed\":%d}\n", name, lat[n - 1], n, missed);
    return missed ? 1 : 0;
}

/* Pulls `pull` active for `ms` ms (with bounce bursts if asked), then inactive;
 * returns the monotonic µs of the first edge. */
static uint64_t press(const char *pull, int ms, int bounce) {
    int fd = open_or_die(pull, O_WRONLY);
    uint64_t t = now_us();
    change(fd, 1, bounce);
    sleep_until(t + (uint64_t)ms * 1000u);
    change(fd, 0, bounce);
    return t;
}

int main(int argc, char **argv) {
    if (argc >= 4 && !strcmp(argv[1], "tap")) {
        /* A press that prints when its first edge was pulled (for latency.sh). */
        printf("%llu\n", (unsigned long long)press(argv[2], atoi(argv[3]), argc > 4));
        return 0;
    }
    if (argc >= 6 && !strcmp(argv[1], "detent")) {
        int a = open_or_die(argv[2], O_WRONLY), b = open_or_die(argv[3], O_WRONLY);
        int dir = atoi(argv[4]), step = atoi(argv[5]), bounce = argc > 6;
        int lead = dir > 0 ? a : b, lag = dir > 0 ? b : a;
        int fds[4] = { lead, lag, lead, lag }, levels[4] = { 1, 1, 0, 0 };
        uint64_t first = now_us(), t = first, last = first;
        for (int k = 0; k < 4; k++) {
            last = now_us();
            change(fds[k], levels[k], bounce);
            t += (uint64_t)step;
            if (k < 3) sleep_until(t);
        }
        printf("%llu %llu\n", (unsigned long long)first, (unsigned long long)last);
        return 0;
    }
    if (argc >= 5 && !strcmp(argv[1], "wav")) {
        FILE *f = fopen(argv[2], "wb");
        if (!f) { perror(argv[2]); return 2; }
        int16_t v = (int16_t)atoi(argv[3]);
        uint32_t frames = (uint32_t)atoi(argv[4]) * 48000u, data = frames * 4u, rate = 48000, bytes = 48000 * 4;
        uint32_t riff = 36 + data, fmt_len = 16;
        uint16_t pcm = 1, ch = 2, align = 4, bits = 16;
        fwrite("RIFF", 1, 4, f); fwrite(&riff, 4, 1, f); fwrite("WAVEfmt ", 1, 8, f);
        fwrite(&fmt_len, 4, 1, f); fwrite(&pcm, 2, 1, f); fwrite(&ch, 2, 1, f); fwrite(&rate, 4, 1, f);
        fwrite(&bytes, 4, 1, f); fwrite(&align, 2, 1, f); fwrite(&bits, 2, 1, f);
        fwrite("data", 1, 4, f); fwrite(&data, 4, 1, f);
        int16_t chunk[2 * 4800];
        for (int i = 0; i < 2 * 4800; i++) chunk[i] = v;
        for (uint32_t done = 0; done < frames; done += 4800) fwrite(chunk, 4, 4800, f);
        return fclose(f) ? 2 : 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "capture")) {
        int raw = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644), times = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (raw < 0 || times < 0) { perror("capture"); return 2; }
        static char buf[65536];
        unsigned long long bytes = 0;
        ssize_t n;
        while ((n = read(0, buf, sizeof buf)) > 0) {
            uint64_t arrival = now_us();
            if (write(raw, buf, (size_t)n) != n) { perror("capture write"); return 2; }
            bytes += (unsigned long long)n;
            char line[64];
            int len = snprintf(line, sizeof line, "%llu %llu\n", (unsigned long long)arrival, bytes / 4);
            if (write(times, line, (size_t)len) != len) { perror("capture times"); return 2; }
        }
        return 0;
    }
    if (argc >= 7 && !strcmp(argv[1], "respond")) return respond(argv[2], argv[3], argv[4], argv[5], atoi(argv[6]));
    if (argc >= 4 && !strcmp(argv[1], "press")) {
        press(argv[2], atoi(argv[3]), argc > 4);
        return 0;
    }
    if (argc >= 6 && !strcmp(argv[1], "turn")) {
        int a = open_or_die(argv[2], O_WRONLY), b = open_or_die(argv[3], O_WRONLY);
        int detents = atoi(argv[4]), step = atoi(argv[5]), bounce = argc > 6;
        int lead = detents > 0 ? a : b, lag = detents > 0 ? b : a;
        const char *trace_path = getenv("HIL_TRACE");
        trace_on = trace_path != NULL; trace_a = a;
        uint64_t t = now_us();
        for (int i = 0; i < abs(detents); i++) {
            int fds[4] = { lead, lag, lead, lag }, levels[4] = { 1, 1, 0, 0 };
            for (int k = 0; k < 4; k++) {
                change(fds[k], levels[k], bounce);
                t += (uint64_t)step;
                sleep_until(t);
            }
        }
        if (trace_path) {
            /* "NS A|B LEVEL" per pull written, before the write (kernel timestamps follow it). */
            FILE *f = fopen(trace_path, "w");
            if (!f) { perror(trace_path); return 2; }
            for (int i = 0; i < trace_n; i++)
                fprintf(f, "%llu %c %d\n", (unsigned long long)trace[i].ns, trace[i].fd == trace_a ? 'A' : 'B', trace[i].active);
            fclose(f);
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
        /* Said on stderr (stdout is the pulse list), so a caller can wait for it. */
        fputs("sampling\n", stderr);
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
    if (argc >= 2 && !strcmp(argv[1], "sync-clock")) {
        struct timex tx = { .modes = ADJ_STATUS | ADJ_MAXERROR | ADJ_ESTERROR, .status = 0, .maxerror = 0, .esterror = 0 };
        int state = adjtimex(&tx);
        if (state < 0) { perror("adjtimex"); return 1; }
        printf("clock state %d status 0x%x\n", state, tx.status);
        return state == TIME_ERROR ? 1 : 0;
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
