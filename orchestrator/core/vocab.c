/* vocab.c -- the string tables of the run record's vocabularies (vocab.h). */
#include "core/vocab.h"

#include <string.h>
#include "core/banned.h"

const char *const step_kind_names[STEP_KIND_COUNT + 1] = {
	[STEP_CORRECTNESS] = "correctness",
	[STEP_BENCHMARK] = "benchmark",
	[STEP_PROFILE] = "profile",
	[STEP_SANITIZE] = "sanitize",
	[STEP_SWEEP] = "sweep",
	[STEP_KERNEL_TIMING] = "kernel_timing",
	[STEP_KIND_COUNT] = NULL,
};

const char *step_kind_name(enum step_kind k)
{
	return k >= 0 && k < STEP_KIND_COUNT ? step_kind_names[k] : NULL;
}

int step_kind_parse(const char *s, enum step_kind *k)
{
	int i;
	for (i = 0; s && i < STEP_KIND_COUNT; i++)
		if (!strcmp(s, step_kind_names[i])) {
			*k = (enum step_kind)i;
			return 1;
		}
	return 0;
}
