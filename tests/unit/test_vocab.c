/* test_vocab.c -- unit tests for vocab.c: every step kind's name and its parse, both ways. */
#include "core/vocab.h"
#include "check.h"

#include <string.h>

int main(void)
{
	enum step_kind k = STEP_ANY;
	int i, round = 0;

	for (i = 0; i < STEP_KIND_COUNT; i++) {
		enum step_kind back = STEP_ANY;
		round += step_kind_name((enum step_kind)i) == step_kind_names[i] &&
			 step_kind_parse(step_kind_names[i], &back) && back == (enum step_kind)i;
	}
	CHECK(round == STEP_KIND_COUNT && step_kind_names[STEP_KIND_COUNT] == NULL,
	      "each kind's name parses back to it; the table ends in NULL", "%d of %d", round,
	      STEP_KIND_COUNT);
	CHECK(!strcmp(step_kind_name(STEP_BENCHMARK), "benchmark") &&
	      !strcmp(step_kind_name(STEP_KERNEL_TIMING), "kernel_timing") &&
	      !strcmp(step_kind_name(STEP_CORRECTNESS), "correctness"),
	      "the record's words (docs/run-record.md)", "%s", step_kind_name(STEP_BENCHMARK));
	CHECK(step_kind_name(STEP_ANY) == NULL && step_kind_name(STEP_KIND_COUNT) == NULL,
	      "no name for STEP_ANY or past the last kind", "%s", "named");
	CHECK(!step_kind_parse(NULL, &k) && !step_kind_parse("", &k) && !step_kind_parse("Benchmark", &k) &&
	      !step_kind_parse("bench", &k) && !step_kind_parse("benchmarks", &k) && k == STEP_ANY,
	      "NULL, empty, another case, a prefix, an extension: no kind, *k untouched", "%d", (int)k);
	return check_summary();
}
