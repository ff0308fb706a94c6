/* ktrace.c -- per-kernel times from a CUPTI kernel trace (ktrace.h): group
 * the launches by kernel name, grid and block, take the median, min and max
 * of each group's GPU time (core/stats.c), key each group from its name and
 * configuration alone (name_keys), sort by total time. */
#include "tools/ktrace.h"
#include "tools/ptxas.h"
#include "core/jsonutil.h"
#include "core/stats.h"
#include "core/hash.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* One group of launches: one kernel (mangled name) at one launch
 * configuration (grid and block), each with its own times. */
struct kgroup {
	char *name;
	int cfg[6];              /* grid x, y, z, block x, y, z; -1: not in the trace */
	double *us;
	int n, cap;
	double total;
	const cJSON *first;      /* the first launch line: grid, block, registers */
	char *key;
};

static int by_total(const void *a, const void *b)
{
	const struct kgroup *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (strcmp(x->name, y->name))
		return strcmp(x->name, y->name);
	return memcmp(x->cfg, y->cfg, sizeof(x->cfg));
}

static cJSON *dup_or_null(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull();
}

/* grid and block of a launch line into cfg (-1 where absent) */
static void launch_cfg(const cJSON *j, int cfg[6])
{
	static const char *const keys[] = { "grid", "block" };
	int a, i;
	for (a = 0; a < 2; a++) {
		const cJSON *arr = cJSON_GetObjectItemCaseSensitive(j, keys[a]);
		for (i = 0; i < 3; i++) {
			const cJSON *v = cJSON_IsArray(arr) ? cJSON_GetArrayItem(arr, i) : NULL;
			cfg[3 * a + i] = cJSON_IsNumber(v) ? v->valueint : -1;
		}
	}
}

/* The start of the parameter list: the last '(' outside template arguments
 * and other parentheses whose ')' ends the name (blanks and cv-qualifiers
 * after it allowed), or NULL: "(anonymous namespace)::k(int)" -> "(int)". */
static const char *param_list(const char *s)
{
	const char *p, *cand = NULL, *cand_end = NULL, *open = NULL;
	int angle = 0, paren = 0;
	for (p = s; *p; p++) {
		if (*p == '<' && !paren)
			angle++;
		else if (*p == '>' && angle > 0 && !paren)
			angle--;
		else if (*p == '(') {
			if (!angle && !paren)
				open = p;
			paren++;
		} else if (*p == ')' && paren > 0) {
			paren--;
			if (!paren && open) {
				cand = open;
				cand_end = p;
				open = NULL;
			}
		}
	}
	if (!cand)
		return NULL;
	for (p = cand_end + 1; *p == ' '; p++)
		;
	if (*p && strcmp(p, "const") && strcmp(p, "volatile") && strcmp(p, "const volatile"))
		return NULL;
	return cand;
}

/* A kernel's figure key: its demangled name without a leading return type,
 * its parameter list (the last parenthesis group at the top level: a "("
 * elsewhere, as in "(anonymous namespace)::", is kept) and (unless `full`)
 * its template arguments, with blanks dropped and '.' made '_' (a key is
 * one step of a dotted path): "void sgemm<128, 64>(int, float*)" -> "sgemm",
 * full: "sgemm<128,64>". */
char *ktrace_key(const char *demangled, int full)
{
	struct strbuf k = STRBUF_INIT;
	const char *p = demangled, *end;
	int depth = 0;
	if (!strncmp(p, "void ", 5))
		p += 5;
	end = param_list(p);
	for (; *p && (!end || p < end); p++) {
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

/* The key of each group, from the names alone (never their times, so the
 * same kernels get the same keys in every run): a kernel's short key; its
 * key with template arguments when another kernel (another mangled name)
 * has the same short key; "~" and 8 hex digits of its mangled name's
 * SHA-256 when that is still shared; and, for a kernel launched with more
 * than one grid or block, "@gX_Y_Z-bX_Y_Z" after it. dm[i]: group i's
 * demangled name. */
static void name_keys(struct kgroup *g, char **dm, int n)
{
	char **base = xcalloc((size_t)n + 1, sizeof(*base));
	int i, j;
	for (i = 0; i < n; i++)
		base[i] = ktrace_key(dm[i], 0);
	for (i = 0; i < n; i++) {
		int clash = 0;
		for (j = 0; j < n; j++)
			clash |= strcmp(g[i].name, g[j].name) && !strcmp(base[i], base[j]);
		if (clash)
			g[i].key = ktrace_key(dm[i], 1);   /* replaces base[i] below */
	}
	for (i = 0; i < n; i++)
		if (g[i].key) {
			free(base[i]);
			base[i] = g[i].key;
			g[i].key = NULL;
		}
	for (i = 0; i < n; i++) {
		int clash = 0, configs = 0;
		struct strbuf k = STRBUF_INIT;
		for (j = 0; j < n; j++) {
			clash |= strcmp(g[i].name, g[j].name) && !strcmp(base[i], base[j]);
			configs += !strcmp(g[i].name, g[j].name);
		}
		strbuf_addstr(&k, base[i]);
		if (clash) {
			char hex[SHA256_HEX_LEN + 1];
			sha256_hex(g[i].name, strlen(g[i].name), hex);
			strbuf_addf(&k, "~%.8s", hex);
		}
		if (configs > 1)
			strbuf_addf(&k, "@g%d_%d_%d-b%d_%d_%d", g[i].cfg[0], g[i].cfg[1], g[i].cfg[2],
				    g[i].cfg[3], g[i].cfg[4], g[i].cfg[5]);
		g[i].key = strbuf_detach(&k, NULL);
	}
	for (i = 0; i < n; i++)
		free(base[i]);
	free(base);
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
			int cfg[6];
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
			launch_cfg(j, cfg);
			for (i = 0; i < ng && !k; i++)
				if (!strcmp(g[i].name, name) && !memcmp(g[i].cfg, cfg, sizeof(cfg)))
					k = &g[i];
			if (!k) {
				g = xrealloc(g, (size_t)(ng + 1) * sizeof(*g));
				k = &g[ng++];
				memset(k, 0, sizeof(*k));
				k->name = xstrdup(name);
				memcpy(k->cfg, cfg, sizeof(cfg));
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
			struct strbuf dm = STRBUF_INIT;
			ptxas_demangle(g[i].name, &dm);
			keys[i] = dm.len ? strbuf_detach(&dm, NULL) : xstrdup(g[i].name);
			strbuf_release(&dm);
		}
		name_keys(g, keys, ng);
		for (i = 0; i < ng; i++) {
			cJSON *o = cJSON_CreateObject();
			double mn = g[i].us[0], mx = g[i].us[0];
			int q;
			for (q = 1; q < g[i].n; q++) {
				if (g[i].us[q] < mn)
					mn = g[i].us[q];
				if (g[i].us[q] > mx)
					mx = g[i].us[q];
			}
			json_add_str(o, "name", g[i].name);
			json_add_str(o, "demangled", keys[i]);
			json_add_str(o, "key", g[i].key);
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
		}
		*out = res;
	}
	for (i = 0; i < ng; i++) {
		free(g[i].name);
		free(g[i].us);
		free(g[i].key);
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
