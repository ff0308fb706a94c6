/* test_vocab.c -- unit tests for vocab.c: every vocabulary's names and their
 * parse, both ways; unknown words refused; and each table the same words as
 * the enums of docs/schema/run.schema.json and summary.schema.json (read
 * with cJSON), so the code and the schema cannot drift apart. */
#include "core/vocab.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/strbuf.h"
#include "check.h"

#include <cjson/cJSON.h>
#include <string.h>

static void step_kinds(void)
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
}

/* Every value of one status vocabulary: NAME(v) is the table's entry, it
 * parses back to v and IS(name, v) holds but IS(name, w) for no other w;
 * past the end no name; NULL, "", the name in another case and with a
 * character more or less parse to nothing and leave the output untouched;
 * the table ends in NULL. */
#define ROUND_TRIP(prefix, type, count, what)                                           \
	do {                                                                             \
		int i_, w_, ok_ = 0, bad_ = 0;                                           \
		enum type out_ = (enum type)0;                                           \
		for (i_ = 0; i_ < (count); i_++) {                                       \
			enum type back_ = (enum type)-1;                                 \
			int only_ = 1;                                                   \
			for (w_ = 0; w_ < (count); w_++)                                 \
				only_ &= prefix##_is(prefix##_names[i_], (enum type)w_) ==  \
					 (w_ == i_);                                     \
			ok_ += prefix##_name((enum type)i_) == prefix##_names[i_] &&    \
			       prefix##_parse(prefix##_names[i_], &back_) &&             \
			       back_ == (enum type)i_ && only_;                          \
		}                                                                        \
		CHECK(ok_ == (count) && prefix##_names[count] == NULL &&                 \
		      prefix##_name((enum type)(count)) == NULL,                         \
		      what ": each name parses back to its value, and is that value's only", \
		      "%d of %d", ok_, (count));                                         \
		for (i_ = 0; i_ < (count); i_++) {                                       \
			char up_[64], more_[64];                                         \
			size_t n_ = strlen(prefix##_names[i_]), j_;                      \
			for (j_ = 0; j_ <= n_; j_++)                                     \
				up_[j_] = (char)(prefix##_names[i_][j_] ^                \
						 (((prefix##_names[i_][j_] | 32) >= 'a' &&  \
						   (prefix##_names[i_][j_] | 32) <= 'z') ? 32 : 0)); \
			memcpy(more_, prefix##_names[i_], n_);                           \
			more_[n_] = 's';                                                 \
			more_[n_ + 1] = '\0';                                            \
			bad_ += prefix##_parse(up_, &out_) + prefix##_parse(more_, &out_); \
			more_[n_ - 1] = '\0';                                            \
			bad_ += prefix##_parse(more_, &out_);                            \
			for (w_ = 0; w_ < (count); w_++)                                 \
				bad_ += prefix##_is(up_, (enum type)w_) +                \
					prefix##_is(NULL, (enum type)w_);                \
		}                                                                        \
		bad_ += prefix##_parse(NULL, &out_) + prefix##_parse("", &out_) +        \
			prefix##_parse("unknown", &out_);                                \
		CHECK(bad_ == 0 && out_ == (enum type)0,                                 \
		      what ": NULL, empty, another case, a prefix, an extension: refused", \
		      "%d accepted, out %d", bad_, (int)out_);                           \
	} while (0)

static void statuses(void)
{
	ROUND_TRIP(run_status, run_status, RUN_STATUS_COUNT, "run status");
	ROUND_TRIP(run_outcome, run_outcome, RUN_OUTCOME_COUNT, "run outcome");
	ROUND_TRIP(host_status, host_status, HOST_STATUS_COUNT, "host status");
	ROUND_TRIP(item_status, item_status, ITEM_STATUS_COUNT, "build/step status");
	ROUND_TRIP(gate_verdict, gate_verdict, VERDICT_COUNT, "gate verdict");

	CHECK(!strcmp(run_status_name(RUN_INCOMPLETE), "incomplete") &&
	      !strcmp(run_outcome_name(OUTCOME_INFRA_ERROR), "infra_error") &&
	      !strcmp(host_status_name(HOST_UNREACHABLE), "unreachable") &&
	      !strcmp(item_status_name(ST_INFRA_ERROR), "INFRA_ERROR") &&
	      !strcmp(gate_verdict_name(VERDICT_NA), "N/A"),
	      "the record's words (docs/run-record.md)", "%s", gate_verdict_name(VERDICT_NA));
	CHECK(item_status_name(ST_NONE) == NULL && !item_status_is("BOGUS", ST_NONE) &&
	      !item_status_is(NULL, ST_NONE) && !item_status_is("", ST_NONE),
	      "ST_NONE has no name, and no string (unknown, NULL, empty) is ST_NONE", "%d",
	      item_status_is("BOGUS", ST_NONE));
	CHECK(!item_status_is("PASS", ST_FAIL) && !gate_verdict_is("pass", VERDICT_PASS) &&
	      !host_status_is("OK", HOST_OK) && !item_status_is("ok", ST_PASS),
	      "the vocabularies are case-sensitive and apart", "%d", host_status_is("OK", HOST_OK));
}

/* The node at a '/'-separated path of object keys below root, or NULL. */
static const cJSON *at(const cJSON *root, const char *path)
{
	char key[64];
	const char *p = path;
	while (root && *p) {
		size_t n = strcspn(p, "/");
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		root = cJSON_GetObjectItemCaseSensitive(root, key);
		p += n + (p[n] == '/');
	}
	return root;
}

/* Whether the schema's enum at path (its nulls aside) holds exactly the
 * words of names (NULL-terminated): each of one is in the other, no
 * duplicates. A mismatch is said in why. */
static int same_words(const cJSON *schema, const char *path, const char *const *names,
		      struct strbuf *why)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(at(schema, path), "enum"), *x;
	int i, n = 0, nnames = 0;
	if (!cJSON_IsArray(e)) {
		strbuf_addf(why, "%s: no enum; ", path);
		return 0;
	}
	cJSON_ArrayForEach(x, e) {
		int found = 0;
		if (cJSON_IsNull(x))
			continue;
		n++;
		for (i = 0; names[i]; i++)
			found += cJSON_IsString(x) && !strcmp(x->valuestring, names[i]);
		if (found != 1)
			strbuf_addf(why, "%s: '%s' not once in the table; ", path,
				    cJSON_IsString(x) ? x->valuestring : "?");
		if (found != 1)
			return 0;
	}
	for (nnames = 0; names[nnames]; nnames++)
		;
	if (n != nnames)
		strbuf_addf(why, "%s: the schema has %d words, the table %d; ", path, n, nnames);
	return n == nnames;
}

static void against_schema(const char *file, const char *const *paths,
			   const char *const *const *tables)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT, why = STRBUF_INIT;
	cJSON *schema = NULL;
	int i, ok = 0, n = 0;
	if (fs_read_file(file, &text, &err) == GO_OK)
		schema = cJSON_Parse(text.buf);
	CHECK(schema != NULL, "the schema reads and parses", "%s: %s", file, err.buf);
	for (i = 0; schema && paths[i]; i++, n++)
		ok += same_words(schema, paths[i], tables[i], &why);
	CHECK(schema && n && ok == n, file, "%d of %d match: %s", ok, n, why.buf);
	cJSON_Delete(schema);
	strbuf_release(&text);
	strbuf_release(&err);
	strbuf_release(&why);
}

int main(void)
{
	static const char *const run_paths[] = {
		"properties/status", "properties/outcome", "$defs/host/properties/status",
		"$defs/host/properties/phases/items/properties/status",
		"$defs/build/properties/status", "$defs/step/properties/status",
		"$defs/step/properties/kind", "$defs/gate/properties/verdict", NULL,
	};
	static const char *const *const run_tables[] = {
		run_status_names, run_outcome_names, host_status_names, item_status_names,
		item_status_names, item_status_names, step_kind_names, gate_verdict_names,
	};
	static const char *const sum_paths[] = {
		"properties/status", "properties/hosts/items/properties/status",
		"properties/hosts/items/properties/steps/items/properties/status",
		"properties/hosts/items/properties/steps/items/properties/kind", NULL,
	};
	static const char *const *const sum_tables[] = {
		run_status_names, host_status_names, item_status_names, step_kind_names,
	};

	step_kinds();
	statuses();
	against_schema("docs/schema/run.schema.json", run_paths, run_tables);
	against_schema("docs/schema/summary.schema.json", sum_paths, sum_tables);
	return check_summary();
}
