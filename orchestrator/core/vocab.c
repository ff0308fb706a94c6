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

const char *const run_status_names[RUN_STATUS_COUNT + 1] = {
	[RUN_RUNNING] = "running",
	[RUN_COMPLETE] = "complete",
	[RUN_INCOMPLETE] = "incomplete",
	[RUN_STATUS_COUNT] = NULL,
};

const char *const run_outcome_names[RUN_OUTCOME_COUNT + 1] = {
	[OUTCOME_PASSED] = "passed",
	[OUTCOME_FAILED] = "failed",
	[OUTCOME_INFRA_ERROR] = "infra_error",
	[RUN_OUTCOME_COUNT] = NULL,
};

const char *const host_status_names[HOST_STATUS_COUNT + 1] = {
	[HOST_PENDING] = "pending",
	[HOST_OK] = "ok",
	[HOST_FAILED] = "failed",
	[HOST_UNREACHABLE] = "unreachable",
	[HOST_SKIPPED] = "skipped",
	[HOST_PREEMPTED] = "preempted",
	[HOST_STATUS_COUNT] = NULL,
};

const char *const item_status_names[ITEM_STATUS_COUNT + 1] = {
	[ST_PASS] = "PASS",
	[ST_FAIL] = "FAIL",
	[ST_SKIPPED] = "SKIPPED",
	[ST_INFRA_ERROR] = "INFRA_ERROR",
	[ST_TIMEOUT] = "TIMEOUT",
	[ST_KILLED] = "KILLED",
	[ITEM_STATUS_COUNT] = NULL,
};

const char *const gate_verdict_names[VERDICT_COUNT + 1] = {
	[VERDICT_PASS] = "PASS",
	[VERDICT_FAIL] = "FAIL",
	[VERDICT_NA] = "N/A",
	[VERDICT_COUNT] = NULL,
};

/* The one lookup behind every vocabulary: names[i] for i in [0, n), else NULL. */
static const char *name_of(const char *const *names, int n, int i)
{
	return i >= 0 && i < n ? names[i] : NULL;
}

/* The index of s among names[0..n): it, or -1 (s NULL or none's name). */
static int index_of(const char *const *names, int n, const char *s)
{
	int i;
	for (i = 0; s && i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

const char *step_kind_name(enum step_kind k)
{
	return name_of(step_kind_names, STEP_KIND_COUNT, k);
}

int step_kind_parse(const char *s, enum step_kind *k)
{
	int i = index_of(step_kind_names, STEP_KIND_COUNT, s);
	if (i >= 0)
		*k = (enum step_kind)i;
	return i >= 0;
}

/* NAME, PARSE and IS of one vocabulary, over its table. */
#define VOCAB_FUNCS(prefix, type, count)                                        \
	const char *prefix##_name(enum type v)                                  \
	{                                                                       \
		return name_of(prefix##_names, count, (int)v);                  \
	}                                                                       \
	int prefix##_parse(const char *s, enum type *out)                       \
	{                                                                       \
		int i = index_of(prefix##_names, count, s);                     \
		if (i >= 0)                                                     \
			*out = (enum type)i;                                    \
		return i >= 0;                                                  \
	}                                                                       \
	int prefix##_is(const char *s, enum type want)                          \
	{                                                                       \
		int i = index_of(prefix##_names, count, s);                     \
		return i >= 0 && i == (int)want;                                \
	}

VOCAB_FUNCS(run_status, run_status, RUN_STATUS_COUNT)
VOCAB_FUNCS(run_outcome, run_outcome, RUN_OUTCOME_COUNT)
VOCAB_FUNCS(host_status, host_status, HOST_STATUS_COUNT)
VOCAB_FUNCS(item_status, item_status, ITEM_STATUS_COUNT)
VOCAB_FUNCS(gate_verdict, gate_verdict, VERDICT_COUNT)
