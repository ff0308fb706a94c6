/* check.h -- the unit tests' one check macro and summary (TAP-like lines).
 *
 *   CHECK(cond, "what is checked", "printf format for the failure", args...);
 *   return check_summary();
 * Prints "ok N - what" or "not ok N - what (detail)"; tests/run-tests.sh counts
 * them and fails a binary that printed none. */
#ifndef GPUORCH_TEST_CHECK_H
#define GPUORCH_TEST_CHECK_H

#include <stdio.h>

static int n_checks, n_failed;

#define CHECK(cond, what, ...) do { \
	n_checks++; \
	if (cond) { \
		printf("ok %d - %s\n", n_checks, what); \
	} else { \
		n_failed++; \
		printf("not ok %d - %s (", n_checks, what); \
		printf(__VA_ARGS__); \
		printf(")\n"); \
	} \
} while (0)

static inline int check_summary(void)
{
	printf("# %d checks, %d failed\n", n_checks, n_failed);
	return n_failed ? 1 : 0;
}

#endif
