/* vocab.h -- the run record's vocabularies, one string table each: a step's
 * kind, a run's status and outcome, a host's status, a build's or step's (or
 * phase's) status and a gate's verdict, as docs/run-record.md names them and
 * docs/schema/run.schema.json enumerates them. Code compares enums; the
 * strings live in vocab.c alone (issue 33: "benchmark" was a literal at 33
 * sites in 14 files, "PASS" at more). Each vocabulary has NAME(e) -> string,
 * PARSE(s, &e) -> 1 or 0, IS(s, e) -> whether s is e's name (s may be NULL:
 * a record read from disk may lack the key), and a NULL-terminated names
 * table (the schema check in tests/unit/test_vocab.c). */
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

/* run.json "status": the run as a whole (running until its end). */
enum run_status {
	RUN_RUNNING,
	RUN_COMPLETE,
	RUN_INCOMPLETE,         /* interrupted */
	RUN_STATUS_COUNT
};
const char *run_status_name(enum run_status s);
int run_status_parse(const char *s, enum run_status *out);
int run_status_is(const char *s, enum run_status want);
extern const char *const run_status_names[RUN_STATUS_COUNT + 1];

/* run.json "outcome" (null while running): what the run found. */
enum run_outcome {
	OUTCOME_PASSED,
	OUTCOME_FAILED,
	OUTCOME_INFRA_ERROR,
	RUN_OUTCOME_COUNT
};
const char *run_outcome_name(enum run_outcome o);
int run_outcome_parse(const char *s, enum run_outcome *out);
int run_outcome_is(const char *s, enum run_outcome want);
extern const char *const run_outcome_names[RUN_OUTCOME_COUNT + 1];

/* A host's "status" in run.json. */
enum host_status {
	HOST_PENDING,           /* not started yet */
	HOST_OK,
	HOST_FAILED,
	HOST_UNREACHABLE,
	HOST_SKIPPED,
	HOST_PREEMPTED,
	HOST_STATUS_COUNT
};
const char *host_status_name(enum host_status s);
int host_status_parse(const char *s, enum host_status *out);
int host_status_is(const char *s, enum host_status want);
extern const char *const host_status_names[HOST_STATUS_COUNT + 1];

/* A build's, a step's or a host phase's "status" (docs/run-record.md "Step
 * statuses"). */
enum item_status {
	ST_NONE = -1,           /* not given: the caller's event or files decide */
	ST_PASS,
	ST_FAIL,
	ST_SKIPPED,
	ST_INFRA_ERROR,
	ST_TIMEOUT,
	ST_KILLED,
	ITEM_STATUS_COUNT
};
/* The status's name; NULL for ST_NONE or out of range. */
const char *item_status_name(enum item_status s);
int item_status_parse(const char *s, enum item_status *out);
int item_status_is(const char *s, enum item_status want);
extern const char *const item_status_names[ITEM_STATUS_COUNT + 1];

/* A gate's "verdict". */
enum gate_verdict {
	VERDICT_PASS,
	VERDICT_FAIL,
	VERDICT_NA,             /* not measured: "N/A" */
	VERDICT_COUNT
};
const char *gate_verdict_name(enum gate_verdict v);
int gate_verdict_parse(const char *s, enum gate_verdict *out);
int gate_verdict_is(const char *s, enum gate_verdict want);
extern const char *const gate_verdict_names[VERDICT_COUNT + 1];

#endif
