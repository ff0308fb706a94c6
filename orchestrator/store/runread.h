/* runread.h -- the one typed reader of a run record (run.json, or its summary).
 *
 * Every field is read through these getters: a missing or mistyped field is
 * "absent" (NULL, or 0 from rr_num), never an error, so a record from an
 * older or interrupted run is read like any other. rr_find_step is the one
 * search for a host's step; rr_measure the one way to read a metric of the
 * vocabulary (metric.h) from a host: which step, which path, whether the
 * impossible-timing rule struck it out. Gates, expectations, the report,
 * compare, history and find all read through here. */
#ifndef GPUORCH_RUNREAD_H
#define GPUORCH_RUNREAD_H

#include <cjson/cJSON.h>
#include "core/strbuf.h"
#include "core/vocab.h"

const cJSON *rr_obj(const cJSON *o, const char *key);    /* an object member, or NULL */
const cJSON *rr_arr(const cJSON *o, const char *key);    /* an array member, or NULL */
const char *rr_str(const cJSON *o, const char *key);     /* a string member, or NULL */
/* A finite number at a dotted path under o: 1 and *v, or 0. */
int rr_num(const cJSON *o, const char *path, double *v);
/* The number at path, or NAN. */
double rr_num_or_nan(const cJSON *o, const char *path);
int rr_true(const cJSON *o, const char *path);           /* path is JSON true */
int rr_streq(const char *a, const char *b);              /* both non-NULL and equal */

/* The step's "kind" is k's name (vocab.h); never for STEP_ANY. */
int rr_is_kind(const cJSON *step, enum step_kind k);
/* A step's role ("kernel" when it names none) and its result object. */
const char *rr_role(const cJSON *step);
const cJSON *rr_result(const cJSON *step);

/* The first step of host h that matches; STEP_ANY and a NULL argument match
 * anything (role compares against rr_role, so "kernel" matches a step naming none). */
const cJSON *rr_find_step(const cJSON *h, enum step_kind kind, const char *program,
			  const char *problem, const char *role, const char *tool);
/* The next such step after `after` (NULL: the first). */
const cJSON *rr_next_step(const cJSON *h, const cJSON *after, enum step_kind kind,
			  const char *program, const char *problem, const char *role,
			  const char *tool);
/* While the record run does not change, searches that name a problem go
 * through an index of each host's steps by problem (this thread's; nested
 * begin/end pairs share the outermost). Same answers, O(log n) not O(n). */
void rr_index_begin(const cJSON *run);
/* Each step of host h on problem (of that kind; STEP_ANY: any), in record order. */
#define FOR_EACH_STEP_OF(s, h, kind, problem) \
	for ((s) = rr_next_step((h), NULL, (kind), NULL, (problem), NULL, NULL); (s); \
	     (s) = rr_next_step((h), (s), (kind), NULL, (problem), NULL, NULL))
void rr_index_end(void);

/* The step a run is summed up by on host h (the `runs` headline, `history`'s
 * default figure): a passing kernel benchmark (not a baseline, not struck out
 * as impossible) with a median, of the spec's "headline" program (and problem)
 * when it names one, else on the largest problem (the most model FLOPs; the
 * first one timed when none has a model), the fastest program there. NULL
 * when h timed no kernel. */
const cJSON *rr_headline_step(const cJSON *run, const cJSON *h);

/* A result metric (latency_us, tflops, max_abs, timing.p90_us, ...) of one
 * program and problem on host h. */
struct rr_measure {
	const char *path;       /* where it was looked for in a step's result */
	enum step_kind prefer;  /* the step kind read first: correctness, benchmark, kernel_timing */
	const cJSON *step;      /* the step it came from; when absent, the preferred
				   step (NULL: no such step ran) */
	double value;
	int has_value;          /* a value was found (even an impossible one) */
	int impossible;         /* ... but the timing beats the roofline floor:
				   not a measurement to judge */
	double bad_outputs;     /* an error metric whose check had outputs that are
				   not numbers (rr_bad_outputs): not an error to judge */
};
void rr_measure(const cJSON *h, const char *program, const char *problem, const char *metric,
		struct rr_measure *out);

/* The outputs of a correctness check (a result's "correctness") that were
 * NaN, Inf or never written where the reference is finite: their count (0:
 * none), and, when why is given, "NaN in 1,048,576 of 1,048,576 outputs"
 * (also "Inf in ...", "N of M outputs never written"). Read from the
 * harness's correctness.nonfinite/nan/unwritten/outputs, or from its trials
 * in a record made before those existed. */
double rr_bad_outputs(const cJSON *result, struct strbuf *why);

#endif
