/* clock.h - CLOCK_MONOTONIC and CLOCK_BOOTTIME in nanoseconds (vDSO: no
 * syscall, no lock). */
#ifndef HI_PAYLOAD_CLOCK_H
#define HI_PAYLOAD_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t pl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_BOOTTIME, the clock of a process's start time in /proc/PID/stat
 * (vDSO too). */
static inline uint64_t pl_boottime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* HI_PAYLOAD_CLOCK_H */
