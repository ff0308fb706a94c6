/* spec-int.h -- what spec*.c share: the parse context, TRY, spec_ helpers.
 *
 * Internal to orchestrator/spec/spec*.c; spec.h stays the public contract. */
#ifndef GPUORCH_SPEC_INT_H
#define GPUORCH_SPEC_INT_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "spec/spec.h"
#include "core/strbuf.h"

#define TIMEOUT_MAX 86400
#define DEFAULT_TIMEOUT_S 600

struct spec_ctx {
	const char *label;
	const char *root;
	int check_files;
	struct strbuf *err;
	struct strbuf path;     /* JSON path of the current value */
	struct spec *s;
};

#define TRY(x) do { enum go_status try_st_ = (x); if (try_st_ != GO_OK) return try_st_; } while (0)

/* spec-check.c: messages with the JSON path */
/* A message "LABEL: 'PATH': what is wrong" into c->err; returns GO_ERR_SPEC. */
enum go_status spec_bad(struct spec_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Append ".key" or "[i]" to the JSON path; return the mark for spec_pop(). */
size_t spec_push_key(struct spec_ctx *c, const char *key);
size_t spec_push_index(struct spec_ctx *c, int i);
/* Cut the JSON path back to a mark. */
void spec_pop(struct spec_ctx *c, size_t mark);

/* spec-check.c: checks of keys, types, strings, numbers, arches, paths */
/* 1 when s has control characters (newlines and tabs allowed if asked). */
int spec_has_ctrl(const char *s, int allow_newlines);
/* Unknown and duplicate keys of obj. */
enum go_status spec_check_keys(struct spec_ctx *c, const cJSON *obj, const char *const *allowed);
/* "expected WANT, found TYPE" unless ok. */
enum go_status spec_need_type(struct spec_ctx *c, const cJSON *v, int ok, const char *want);
/* A string member; *out stays NULL when absent and not required. */
enum go_status spec_get_string(struct spec_ctx *c, const cJSON *obj, const char *key,
			       int required, int allow_empty, char **out);
/* An integer member in [lo, hi]; *out keeps its default when absent. */
enum go_status spec_get_int(struct spec_ctx *c, const cJSON *obj, const char *key, int lo,
			    int hi, int required, int *out);
/* v must be a finite number > 0. */
enum go_status spec_get_positive(struct spec_ctx *c, const cJSON *v);
/* "sm_NN[a]" into its number and whether it is arch-specific; 0 if not an arch. */
int spec_arch_parse(const char *s, int *num, int *specific);
/* v must be a string naming an arch ("sm_90a"). */
enum go_status spec_check_arch(struct spec_ctx *c, const cJSON *v);
/* 1 when s is a C identifier. */
int spec_is_c_identifier(const char *s);
/* Names that become parts of file names and step ids: alnum, then alnum or extra. */
int spec_is_safe_name(const char *s, const char *extra);
/* p must be a plain path relative to the repository root. */
enum go_status spec_check_rel_path(struct spec_ctx *c, const char *p);
/* A number as written: integers without ".0", others in the fewest digits. */
char *spec_render_num(double v);
/* 1 when the NULL-terminated v holds s. */
int spec_strv_has(char *const *v, const char *s);
/* The first name of v[0..n) that an earlier one repeats (NULL entries
 * ignored): its index, with the earlier one's in *first; -1 when all differ.
 * Sorts a copy: n log n, for specs of many problems. */
int spec_first_repeat(const char *const *v, int n, int *first);
/* s may reach nvcc's command line: only characters no shell interprets. */
enum go_status spec_check_nvcc_arg(struct spec_ctx *c, const char *what, const char *s,
				   int allow_space);
/* An array of non-empty strings (NULL-terminated copy). */
enum go_status spec_get_str_array(struct spec_ctx *c, const cJSON *v, int allow_empty_array,
				  char ***out);
/* An object of KEY -> number|string, rendered into kv pairs. */
enum go_status spec_get_kv(struct spec_ctx *c, const cJSON *v, int c_ident_keys,
			   struct spec_kv **out, int *nout);
/* val must be one of choices ("unknown WHAT 'val' (did you mean ...?)"). */
enum go_status spec_check_enum(struct spec_ctx *c, const char *val, const char *const *choices,
			       const char *what);

/* spec-byo.c: a program's own build, command line and figures */
enum go_status spec_parse_byo(struct spec_ctx *c, const cJSON *v, struct spec_program *p);
/* After steps: the {placeholders} of build, run and check are all known. */
enum go_status spec_check_byo(struct spec_ctx *c);
void spec_free_byo(struct spec_program *p);

/* spec-steps.c: steps[] */
enum go_status spec_parse_steps(struct spec_ctx *c, const cJSON *root);

/* spec-figures.c: baselines[], references[], expected[], gates[] */
/* baselines[] or references[] (key) copied into *out; [] when absent. */
enum go_status spec_parse_figures(struct spec_ctx *c, const cJSON *root, const char *key,
				  cJSON **out);
/* expected[] into c->s->expected. */
enum go_status spec_parse_expected(struct spec_ctx *c, const cJSON *root);
/* gates[] into c->s->gates. */
/* "headline": {"program": P, "problem": Q}: the figure `runs` shows and `history`
 * follows by default (problem optional); both must name the spec's own. */
enum go_status spec_parse_headline(struct spec_ctx *c, const cJSON *root);
enum go_status spec_parse_gates(struct spec_ctx *c, const cJSON *root);

/* spec-metric.c: the metric names gates and expectations may use */
/* m (no spaces; not profile.*, sanitizer.*, ptxas.*) must name a figure some
 * step of `program` records; else the closest name it does record. */
enum go_status spec_check_metric_name(struct spec_ctx *c, const char *program, const char *m);
/* 1 for a name of core/metric.c's vocabulary ("latency_us", "rel_l2", ...). */
int spec_metric_is_vocabulary(const char *m);

#endif
