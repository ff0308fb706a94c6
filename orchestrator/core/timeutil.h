/* timeutil.h -- monotonic clock for deadlines, UTC timestamps for records. */
#ifndef GPUORCH_TIMEUTIL_H
#define GPUORCH_TIMEUTIL_H

#include <stdint.h>
#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t time_mono_ms(void);
/* Microseconds on CLOCK_MONOTONIC. */
int64_t time_mono_us(void);
/* "2026-11-22T05:10:03Z" into out (at least 21 bytes). */
void time_iso8601(time_t t, char out[32]);
/* Sleep for ms milliseconds (EINTR-safe). */
void time_sleep_ms(int64_t ms);

#endif
