/* jsonutil.h -- cJSON helpers: load a file with a located error, typed getters
 * that report the JSON path, and atomic pretty-printed writes. */
#ifndef GPUORCH_JSONUTIL_H
#define GPUORCH_JSONUTIL_H

#include <stdarg.h>
#include <cjson/cJSON.h>
#include "core/error.h"

/* Parse a file. On a syntax error the message names the file, line and
 * column: "FILE:LINE:COL: invalid JSON near '...'". */
enum go_status json_load_file(const char *path, cJSON **out, enum go_status kind,
			      struct strbuf *err);
/* Parse a buffer (for remote output); label names it in errors. */
enum go_status json_parse(const char *text, size_t len, const char *label, cJSON **out,
			  struct strbuf *err);
/* The same, for text that must not be echoed (a run record may be a link to
 * any file): the error names label:LINE:COL and what is wrong, never the text. */
enum go_status json_parse_unquoted(const char *text, size_t len, const char *label, cJSON **out,
				   struct strbuf *err);
/* json_parse for text that may hold comments (a spec, docs/spec.md): //
 * to the end of a line and slash-star ... star-slash, outside strings, as
 * cJSON_Minify reads them. An error's line and column are the text's own;
 * a block comment never closed is an error at its start. */
enum go_status json_parse_commented(const char *text, size_t len, const char *label, cJSON **out,
				    struct strbuf *err);
/* Put item at index pos of arr (pos past the end: appended). */
void json_array_insert(cJSON *arr, int pos, cJSON *item);
/* Write a JSON tree atomically (pretty-printed, trailing newline). */
enum go_status json_write_atomic(const char *path, const cJSON *j, struct strbuf *err);
/* The same through fs_write_derived (no fsync: a file rebuilt when lost). */
enum go_status json_write_derived(const char *path, const cJSON *j, struct strbuf *err);

/* Getters: NULL / fallback when absent or of another type. */
const char *json_str(const cJSON *obj, const char *key);
double json_num(const cJSON *obj, const char *key, double fallback);
int json_has_num(const cJSON *obj, const char *key);
/* Dotted path lookup: "timing.median_us", "trials.0.seed". */
const cJSON *json_path(const cJSON *root, const char *dotted);

/* The validators' error line: "FILE: 'json.path': what is wrong" (no path:
 * "FILE: what is wrong"), written over err. */
void json_verror(struct strbuf *err, const char *label, const char *path, const char *fmt,
		 va_list ap);

/* "a string", "a number", "an object", ... for error messages. */
const char *json_type_name(const cJSON *v);

/* Builders that never return NULL (die on OOM). */
cJSON *json_add_obj(cJSON *parent, const char *key);
cJSON *json_add_arr(cJSON *parent, const char *key);
void json_add_str(cJSON *parent, const char *key, const char *val); /* NULL -> null */
void json_add_num(cJSON *parent, const char *key, double val);
void json_add_bool(cJSON *parent, const char *key, int val);

/* Each member of array or object a that is an object, in x (others passed over). */
#define FOR_EACH_OBJ(x, a) cJSON_ArrayForEach(x, a) if (!cJSON_IsObject(x)) {} else

#endif
