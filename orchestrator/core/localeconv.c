/* localeconv.c -- gpuorch's own localeconv(): the "C" locale's, from a
 * constant, instead of glibc's, which rewrites one static struct on every
 * call.
 *
 * cJSON calls localeconv() for every number it parses (its decimal point).
 * glibc's localeconv() fills a single static `struct lconv` each time, so
 * threads parsing run records at once (core/parmap.c) all write the same
 * cache lines: on the 16-CPU GPU machine `gpuorch runs` over 2,000 records
 * without summaries took 12.5 user-s on one thread and 103.6 user-s on 16
 * (6.6 s wall); with this file 14.3 user-s on 16 threads (1.05 s wall),
 * the same listing (docs/design.md, "Runs, history").
 *
 * The executable's definition takes the place of libc's for every library
 * it loads (cJSON's call resolves here: test_localeconv checks it). It is
 * right as long as gpuorch's locale stays "C": gpuorch never calls
 * setlocale(), so the C library's numeric conventions are those of "C" for
 * the whole process (C11 7.11.1.1: "At program startup, the equivalent of
 * setlocale(LC_ALL, "C") is executed"); core/banned.h refuses a
 * setlocale() in orchestrator/. */
#include <limits.h>
#include <locale.h>

#include "core/banned.h"

static struct lconv c_locale_conv = {
	.decimal_point = ".",
	.thousands_sep = "",
	.grouping = "",
	.int_curr_symbol = "",
	.currency_symbol = "",
	.mon_decimal_point = "",
	.mon_thousands_sep = "",
	.mon_grouping = "",
	.positive_sign = "",
	.negative_sign = "",
	.int_frac_digits = CHAR_MAX,
	.frac_digits = CHAR_MAX,
	.p_cs_precedes = CHAR_MAX,
	.p_sep_by_space = CHAR_MAX,
	.n_cs_precedes = CHAR_MAX,
	.n_sep_by_space = CHAR_MAX,
	.p_sign_posn = CHAR_MAX,
	.n_sign_posn = CHAR_MAX,
	.int_p_cs_precedes = CHAR_MAX,
	.int_p_sep_by_space = CHAR_MAX,
	.int_n_cs_precedes = CHAR_MAX,
	.int_n_sep_by_space = CHAR_MAX,
	.int_p_sign_posn = CHAR_MAX,
	.int_n_sign_posn = CHAR_MAX,
};

struct lconv *localeconv(void)
{
	return &c_locale_conv;
}
