/* test_localeconv.c -- core/localeconv.c: the process's localeconv() is
 * gpuorch's (so cJSON's per-number call writes no shared state), it gives
 * the "C" locale's conventions, and cJSON parses numbers right with it, on
 * many threads at once. */
#define _GNU_SOURCE   /* RTLD_NEXT: the C library's own localeconv */
#include "check.h"

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <locale.h>
#include <pthread.h>
#include <string.h>

#define THREADS 8
#define ROUNDS 500

static const char numbers[] = "[0.5, -1.25e3, 243.552, 1e-9, 17, -0.0, 1.7976931348623157e308]";
static const double expect[] = { 0.5, -1250.0, 243.552, 1e-9, 17.0, -0.0, 1.7976931348623157e308 };
#define N_EXPECT ((int)(sizeof(expect) / sizeof(expect[0])))

/* 0 when `text` parses to exactly `expect` */
static int parse_matches(void)
{
	cJSON *a = cJSON_Parse(numbers), *x;
	int i = 0, bad = !cJSON_IsArray(a);
	cJSON_ArrayForEach(x, a) {
		if (i >= N_EXPECT || !cJSON_IsNumber(x) || x->valuedouble != expect[i])
			bad = 1;
		i++;
	}
	cJSON_Delete(a);
	return bad || i != N_EXPECT;
}

static void *parse_many(void *arg)
{
	int r, *bad = arg;
	for (r = 0; r < ROUNDS; r++)
		*bad += parse_matches();
	return NULL;
}

int main(void)
{
	void *found = dlsym(RTLD_DEFAULT, "localeconv");
	struct lconv *lc = localeconv();
	pthread_t t[THREADS];
	int bad[THREADS] = { 0 }, i, started = 0, failed = 0;

	CHECK(found == (void *)localeconv, "the process resolves localeconv to gpuorch's",
	      "dlsym found %p, gpuorch's is %p", found, (void *)localeconv);
	CHECK(lc && strcmp(lc->decimal_point, ".") == 0 && strcmp(lc->thousands_sep, "") == 0,
	      "its decimal point is '.', no thousands separator", "got '%s' '%s'",
	      lc ? lc->decimal_point : "(null)", lc ? lc->thousands_sep : "(null)");
	{
		struct lconv *(*libc_lc)(void) = (struct lconv *(*)(void))dlsym(RTLD_NEXT, "localeconv");
		struct lconv *theirs = libc_lc ? libc_lc() : NULL;
		CHECK(localeconv() == lc && theirs && theirs != lc,
		      "every call returns the same constant, not the C library's shared struct",
		      "%p vs %p (libc's %p)", (void *)localeconv(), (void *)lc, (void *)theirs);
	}
	CHECK(parse_matches() == 0, "cJSON parses fractions, exponents and extremes exactly", "%s",
	      numbers);
	for (i = 0; i < THREADS; i++)
		started += pthread_create(&t[i], NULL, parse_many, &bad[i]) == 0;
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < THREADS; i++)
		failed += bad[i];
	CHECK(started == THREADS && failed == 0, "8 threads parse 500 times each, every number exact",
	      "%d threads started, %d wrong parses", started, failed);
	return check_summary();
}
