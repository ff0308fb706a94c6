/* jsonlean.h -- a cJSON tree built from libyajl's tokenizer, with the number
 * arrays of one key kept as blocks of doubles (no cJSON node per number).
 *
 * A run record's timing samples (`"timing": {"samples_us": [...]}`, ~2,000
 * numbers a benchmark step, ~30,000 a run) are three quarters of its nodes:
 * cJSON's parse spends its time on a malloc, a strtod and a localeconv for
 * each. A listing needs them only to write them once, sorted, to samples.txt.
 * json_lean_parse reads the same text with yajl (its SAX callbacks build the
 * same tree cJSON would), except that each array under block_key inside an
 * object under block_parent becomes a cJSON_Raw node (its text exactly as in
 * the file, so it prints and duplicates as JSON) whose numbers are held once,
 * as doubles, beside the tree (json_lean_numbers reads them back).
 *
 * The tree is the one cJSON_Parse gives, or none at all: any text the two
 * parsers could read differently (invalid JSON, a surrogate \u escape, a number
 * cJSON cuts at 63 characters, nesting over cJSON's 1,000, anything but numbers
 * in a block) makes json_lean_parse return 0, and the caller parses with cJSON
 * (whose error then names the file and place). Numbers are converted as strtod
 * does, without it for plain decimals of at most 15 digits (m / 10^d, both
 * exact, correctly rounded: the double strtod gives). */
#ifndef GPUORCH_JSONLEAN_H
#define GPUORCH_JSONLEAN_H

#include <stddef.h>
#include <cjson/cJSON.h>

struct json_block {
	const char *text;   /* the cJSON_Raw node's valuestring (owned by the tree) */
	double *v;          /* its numbers, in order (in json_lean's values) */
	int n, at;          /* how many; where they start in values */
};

struct json_lean {
	cJSON *tree;                /* the tree (owned; NULL after a failed parse) */
	struct json_block *blocks;  /* one per block array, in text order */
	int nblocks, cap;
	double *values;             /* every block's numbers, one array (malloc'd) */
};

/* Parse text (len bytes) into out. 1: parsed (out->tree is the tree); 0: not
 * read here (out is empty): parse it with cJSON instead. */
int json_lean_parse(const char *text, size_t len, const char *block_key,
		    const char *block_parent, struct json_lean *out);
/* Free the tree (unless taken: set out->tree to NULL first) and the blocks. */
void json_lean_release(struct json_lean *l);

/* While a lean tree is open on this thread (one at a time), json_lean_numbers
 * finds a block's numbers without reading its text again. */
void json_lean_open(const struct json_lean *l);
void json_lean_close(void);
/* The numbers of a block node (a cJSON_Raw array of numbers, as
 * json_lean_parse makes them, or a copy of one): a malloc'd array of *n
 * doubles (NULL with *n = 0 when raw is not such a node). */
double *json_lean_numbers(const cJSON *raw, int *n);

/* The double strtod reads from the JSON number text s (len bytes, no NUL
 * needed); 0 when it is longer than cJSON reads (63 characters). */
int json_lean_number(const char *s, size_t len, double *v);

#endif
