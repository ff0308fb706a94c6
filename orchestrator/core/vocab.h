/* vocab.h -- the run record's vocabularies, one string table each: a step's
 * kind as the spec names it and run.json records it. Code compares enums;
 * the strings live in vocab.c alone (issue 33: "benchmark" was a literal at
 * 33 sites in 14 files). */
#ifndef GPUORCH_VOCAB_H
#define GPUORCH_VOCAB_H

enum step_kind {
	STEP_ANY = -1,          /* in a search: a step of any kind */
	STEP_CORRECTNESS,
	STEP_BENCHMARK,
	STEP_PROFILE,
	STEP_SANITIZE,
	STEP_SWEEP,             /* a variant's check or benchmark (its record names its defines) */
	STEP_KERNEL_TIMING,
	STEP_KIND_COUNT
};

/* "correctness", "benchmark", ...; NULL for STEP_ANY or out of range. */
const char *step_kind_name(enum step_kind k);
/* The kind named s: 1 and *k, or 0 (s NULL or no kind's name). */
int step_kind_parse(const char *s, enum step_kind *k);
/* Every kind's name in order, NULL-terminated (a spec's allowed values). */
extern const char *const step_kind_names[STEP_KIND_COUNT + 1];

#endif
