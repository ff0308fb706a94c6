/* ktrace.c -- per-kernel times from a CUPTI kernel trace (ktrace.h): group
 * the launches by kernel name, take the median, min and max of each one's
 * GPU time (core/stats.c), sort by total time. */
#include "tools/ktrace.h"
#include "tools/ptxas.h"
#include "core/jsonutil.h"
#include "core/stats.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

struct kgroup {
	char *name;
	double *us;
	int n, cap;
	double total;
	const cJSON *first;      /* the first launch line: grid, block, registers */
};

static int by_total(const void *a, const void *b)
{
	const struct kgroup *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static cJSON *dup_or_null(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull();
}

/* A kernel's figure key: its demangled name without a leading return type,
 * its parameter list and (unless `full`) its template arguments, with
 * blanks dropped and '.' made '_' (a key is one step of a dotted path):
 * "void sgemm<128, 64>(int, float*)" -> "sgemm", full: "sgemm<128,64>". */
char *ktrace_key(const char *demangled, int full)
{
	struct strbuf k = STRBUF_INIT;
	const char *p = demangled;
	int depth = 0;
	if (!strncmp(p, "void ", 5))
		p += 5;
	for (; *p; p++) {
		if (*p == '(' && depth == 0)
			break;
		if (*p == '<')
			depth++;
		if (*p == '>' && depth > 0) {
			depth--;
			if (!full)
				continue;
		}
		if ((depth > 0 || *p == '<') && !full)
			continue;
		if (*p == ' ')
			continue;
		strbuf_addch(&k, *p == '.' ? '_' : *p);
	}
	if (!k.len)
		strbuf_addstr(&k, "kernel");
	return strbuf_detach(&k, NULL);
}

/* keys[i] for arr's kernel i: the short key, unless two kernels share it;
 * then theirs with template arguments, and "#N" after a key still shared. */
static void name_keys(cJSON *arr, char **keys, int n)
{
	int i, j;
	for (i = 0; i < n; i++) {
		const cJSON *o = cJSON_GetArrayItem(arr, i);
		int clash = 0;
		for (j = 0; j < n; j++)
			clash |= j != i && !strcmp(keys[i], keys[j]);
		if (clash) {
			char *full = ktrace_key(json_str(o, "demangled"), 1);
			free(keys[i]);
			keys[i] = full;
		}
	}
	for (i = 0; i < n; i++) {
		int dup = 1;
		for (j = 0; j < i; j++)
			dup += !strncmp(keys[i], keys[j], strlen(keys[i])) &&
			       (keys[j][strlen(keys[i])] == '\0' || keys[j][strlen(keys[i])] == '#');
		if (dup > 1) {
			char *k = xstrfmt("%s#%d", keys[i], dup);
			free(keys[i]);
			keys[i] = k;
		}
		json_add_str(cJSON_GetArrayItem(arr, i), "key", keys[i]);
	}
}

enum go_status ktrace_summarize(const char *text, size_t len, cJSON **out, struct strbuf *err)
{
	struct kgroup *g = NULL;
	cJSON **lines = NULL, *res = NULL, *arr;
	char **keys = NULL;
	const char *p = text, *end = text + len;
	int ng = 0, nlines = 0, lineno = 0, i, header = 0, complete = 0, nend = 0;
	double dropped = 0, total = 0, launches = 0;
	enum go_status st = GO_OK;
	struct strbuf sb = STRBUF_INIT;

	*out = NULL;
	while (p < end && st == GO_OK) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((eol ? eol : end) - p);
		cJSON *j = NULL;
		lineno++;
		if (n == 0) {
			p = eol ? eol + 1 : end;
			continue;
		}
		if (json_parse(p, n, "trace", &j, &sb) != GO_OK || !cJSON_IsObject(j)) {
			cJSON_Delete(j);
			/* a last line cut in the middle is a trace cut short, not an error */
			if (!eol)
				break;
			st = go_fail(err, GO_ERR_REMOTE, "line %d: not a JSON object", lineno);
			break;
		}
		lines = xrealloc(lines, (size_t)(nlines + 1) * sizeof(*lines));
		lines[nlines++] = j;
		if (json_str(j, "schema")) {
			if (strcmp(json_str(j, "schema"), "gpuorch.ktrace/1"))
				st = go_fail(err, GO_ERR_REMOTE, "line %d: schema '%s', not gpuorch.ktrace/1",
					     lineno, json_str(j, "schema"));
			header++;   /* several traces one after another: one per run */
		} else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "end"))) {
			nend++;
			dropped += json_num(j, "dropped", 0);
		} else if (json_str(j, "name")) {
			double t0 = json_num(j, "start_ns", -1), t1 = json_num(j, "end_ns", -1);
			const char *name = json_str(j, "name");
			struct kgroup *k = NULL;
			if (!header) {
				st = go_fail(err, GO_ERR_REMOTE, "line %d: a kernel before the header line", lineno);
				break;
			}
			if (t0 < 0 || t1 < t0) {
				st = go_fail(err, GO_ERR_REMOTE, "line %d: kernel '%s' has no valid start_ns/end_ns",
					     lineno, name);
				break;
			}
			if (t1 > 9007199254740992.0) {
				st = go_fail(err, GO_ERR_REMOTE, "line %d: kernel '%s': times over 2^53 ns are "
					     "not exact as numbers; the trace must count from its t0_ns "
					     "(rebuild the injection library)", lineno, name);
				break;
			}
			for (i = 0; i < ng; i++)
				if (!strcmp(g[i].name, name))
					k = &g[i];
			if (!k) {
				g = xrealloc(g, (size_t)(ng + 1) * sizeof(*g));
				k = &g[ng++];
				memset(k, 0, sizeof(*k));
				k->name = xstrdup(name);
				k->first = j;
			}
			if (k->n == k->cap) {
				k->cap = k->cap ? k->cap * 2 : 64;
				k->us = xrealloc(k->us, (size_t)k->cap * sizeof(double));
			}
			k->us[k->n++] = (t1 - t0) / 1000.0;
			k->total += (t1 - t0) / 1000.0;
			total += (t1 - t0) / 1000.0;
			launches++;
		} else if (json_str(j, "error")) {
			st = go_fail(err, GO_ERR_REMOTE, "the injection library failed: %s", json_str(j, "error"));
		}
		p = eol ? eol + 1 : end;
	}
	if (st == GO_OK && !header)
		st = go_fail(err, GO_ERR_REMOTE, "no gpuorch.ktrace/1 header: not a kernel trace");
	if (st == GO_OK) {
		qsort(g, (size_t)ng, sizeof(*g), by_total);
		complete = nend == header;
		res = cJSON_CreateObject();
		json_add_num(res, "runs", header);
		json_add_bool(res, "complete", complete);
		json_add_num(res, "dropped", dropped);
		json_add_num(res, "launches", launches);
		json_add_num(res, "gpu_time_us", total);
		arr = json_add_arr(res, "kernels");
		keys = xcalloc((size_t)ng + 1, sizeof(*keys));
		for (i = 0; i < ng; i++) {
			cJSON *o = cJSON_CreateObject();
			struct strbuf dm = STRBUF_INIT;
			double mn = g[i].us[0], mx = g[i].us[0];
			int q;
			for (q = 1; q < g[i].n; q++) {
				if (g[i].us[q] < mn)
					mn = g[i].us[q];
				if (g[i].us[q] > mx)
					mx = g[i].us[q];
			}
			ptxas_demangle(g[i].name, &dm);
			json_add_str(o, "name", g[i].name);
			json_add_str(o, "demangled", dm.len ? dm.buf : g[i].name);
			keys[i] = ktrace_key(dm.len ? dm.buf : g[i].name, 0);
			json_add_num(o, "launches", g[i].n);
			json_add_num(o, "total_us", g[i].total);
			json_add_num(o, "median_us", stats_median(g[i].us, g[i].n));
			json_add_num(o, "min_us", mn);
			json_add_num(o, "max_us", mx);
			json_add_num(o, "share_pct", total > 0 ? 100.0 * g[i].total / total : 0);
			cJSON_AddItemToObject(o, "grid", dup_or_null(g[i].first, "grid"));
			cJSON_AddItemToObject(o, "block", dup_or_null(g[i].first, "block"));
			cJSON_AddItemToObject(o, "registers", dup_or_null(g[i].first, "registers"));
			cJSON_AddItemToArray(arr, o);
			strbuf_release(&dm);
		}
		name_keys(arr, keys, ng);
		*out = res;
	}
	for (i = 0; i < ng; i++) {
		free(g[i].name);
		free(g[i].us);
		free(keys ? keys[i] : NULL);
	}
	free(keys);
	free(g);
	for (i = 0; i < nlines; i++)
		cJSON_Delete(lines[i]);
	free(lines);
	strbuf_release(&sb);
	return st;
}
