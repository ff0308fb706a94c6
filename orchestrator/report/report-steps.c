/* report-steps.c -- the report's ptxas resources, steps and provenance. */
#include "report/report-int.h"
#include "store/runkeys.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* ==== 5. ptxas resources ==== */

/* One row of the ptxas table: a kernel as ptxas reported it in one or more
 * builds. A kernel compiled the same way (same name, arch and resources) in
 * several builds -- the harness's kernels in every sweep variant, a template
 * instance two variants share -- is one row naming those builds' variants,
 * so the table holds one row per distinct kernel and build (issue 30: 119
 * rows, one kernel 19 times). */
struct ptx_row {
	const cJSON *b, *k;      /* the first build and entry */
	char *key;
	struct strbuf variants;  /* the builds' variants, ", "-separated */
	struct strbuf hosts;
	int nbuilds, base;       /* builds it is in; one of them has no variant */
};

static char *row_key(const cJSON *b, const cJSON *k)
{
	static const char *const nums[] = { "registers", "smem_bytes", "stack_bytes",
					    "spill_store_bytes", "spill_load_bytes", "cmem_bytes",
					    "barriers", NULL };
	struct strbuf sb = STRBUF_INIT;
	double v;
	int i;
	strbuf_addf(&sb, "%s\x1f%s\x1f%s\x1f%d", rr_str(b, "program") ? rr_str(b, "program") : "",
		    rr_str(k, "kernel") ? rr_str(k, "kernel") : rr_str(k, "demangled") ? rr_str(k, "demangled") : "",
		    rr_str(k, "arch") ? rr_str(k, "arch") : rr_str(b, "arch") ? rr_str(b, "arch") : "",
		    cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(k, "entry")));
	for (i = 0; nums[i]; i++) {
		if (rr_num(k, nums[i], &v))
			strbuf_addf(&sb, "\x1f%.17g", v);
		else
			strbuf_addstr(&sb, "\x1f-");
	}
	return strbuf_detach(&sb, NULL);
}

/* Append item to a sep-separated list unless it is there. */
static void add_listed(struct strbuf *sb, const char *item, const char *sep)
{
	const char *p = sb->buf;
	size_t n = strlen(item), ns = strlen(sep);
	while (sb->len && p) {
		const char *e = strstr(p, sep);
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, item, n))
			return;
		p = e ? e + ns : NULL;
	}
	if (sb->len)
		strbuf_addstr(sb, sep);
	strbuf_addstr(sb, item);
}

static void add_resource_row(struct strbuf *md, const struct ptx_row *r, int with_variant,
			     int builds_of_program)
{
	const cJSON *b = r->b, *k = r->k;
	double st = 0, ld = 0, v;
	int has_st = rr_num(k, "spill_store_bytes", &st), has_ld = rr_num(k, "spill_load_bytes", &ld);
	strbuf_addstr(md, "| ");
	rpt_md_code(md, rr_str(b, "program"));
	strbuf_addstr(md, " | ");
	rpt_md_code(md, rr_str(k, "demangled") ? rr_str(k, "demangled") : rr_str(k, "kernel"));
	if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(k, "entry")))
		strbuf_addstr(md, " (device fn)");
	strbuf_addstr(md, " | ");
	rpt_md_cell_n(md, rr_str(k, "arch") ? rr_str(k, "arch") : rr_str(b, "arch"), 20);
	if (with_variant) {
		strbuf_addstr(md, " | ");
		if (r->nbuilds > 1 && r->nbuilds == builds_of_program) {
			strbuf_addf(md, "every build (%d)", r->nbuilds);
		} else {
			const char *p = r->variants.buf, *e;
			int nv = 0;
			while (r->variants.len && p) {
				struct strbuf one = STRBUF_INIT;
				e = strchr(p, '\n');
				strbuf_add(&one, p, e ? (size_t)(e - p) : strlen(p));
				strbuf_addstr(md, nv++ ? ", " : "");
				rpt_md_code(md, one.buf);
				strbuf_release(&one);
				p = e ? e + 1 : NULL;
			}
			if (r->base)
				strbuf_addstr(md, nv ? " and no defines" : "no defines");
		}
	}
	strbuf_addstr(md, " | ");
	if (rr_num(k, "registers", &v))
		strbuf_addf(md, v >= 255 ? "**%.0f** (cap)" : "%.0f", v);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	if (rr_num(k, "smem_bytes", &v))
		rpt_fmt_bytes(md, v);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	if (rr_num(k, "stack_bytes", &v))
		rpt_fmt_bytes(md, v);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	if (!has_st && !has_ld)
		strbuf_addstr(md, DASH);
	else if (st > 0 || ld > 0)
		strbuf_addf(md, "⚠️ **%.0f B / %.0f B**", st, ld);
	else
		strbuf_addstr(md, "0 / 0");
	strbuf_addstr(md, " | ");
	if (rr_num(k, "cmem_bytes", &v))
		rpt_fmt_bytes(md, v);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, k, "barriers", rpt_fmt_int);
	strbuf_addstr(md, " | ");
	rpt_md_cell(md, r->hosts.buf);
	strbuf_addstr(md, " |\n");
}

/* The first build with this key that has a ptxas report. */
static const cJSON *build_with_resources(const struct rpt_ctx *c, const char *key)
{
	const cJSON *h, *b;
	FOR_EACH_OBJ(h, c->hosts)
		FOR_EACH_OBJ(b, rr_arr(h, "builds"))
			if (rr_streq(rr_str(b, "build_key"), key) && cJSON_GetArraySize(rr_arr(b, "resources")))
				return b;
	return NULL;
}

/* builds of program (distinct build keys, or each build without one) with a
 * ptxas report, on arch */
static int count_builds(const struct rpt_ctx *c, const char *program, const char *arch)
{
	struct strbuf seen = STRBUF_INIT;
	const cJSON *h, *b;
	int n = 0;
	FOR_EACH_OBJ(h, c->hosts)
		FOR_EACH_OBJ(b, rr_arr(h, "builds")) {
			const char *key = rr_str(b, "build_key");
			if (!rr_streq(rr_str(b, "program"), program) || !rr_streq(rr_str(b, "arch"), arch) ||
			    !cJSON_GetArraySize(rr_arr(b, "resources")))
				continue;
			if (key) {
				struct strbuf line = STRBUF_INIT;
				strbuf_addf(&line, "\n%s\n", key);
				if (strstr(seen.buf, line.buf)) {
					strbuf_release(&line);
					continue;
				}
				strbuf_addstr(&seen, seen.len ? line.buf + 1 : line.buf);
				strbuf_release(&line);
			}
			n++;
		}
	strbuf_release(&seen);
	return n;
}

void rpt_section_ptxas(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	struct strbuf shown = STRBUF_INIT;   /* build keys already taken, one per line */
	struct ptx_row *rows = NULL;
	const cJSON *h, *b, *h2, *b2, *k, *w;
	int nrows = 0, alloc = 0, nwarn = 0, with_variant = 0, i;

	strbuf_addstr(md, "## ptxas resources\n\n");
	FOR_EACH_OBJ(h, c->hosts) {
		FOR_EACH_OBJ(b, rr_arr(h, "builds")) {
			const char *key = rr_str(b, "build_key");
			const cJSON *src = b;
			struct strbuf hosts = STRBUF_INIT;
			if (key) {
				struct strbuf line = STRBUF_INIT;
				strbuf_addf(&line, "\n%s\n", key);
				if (strstr(shown.buf, line.buf)) {
					strbuf_release(&line);
					continue;
				}
				strbuf_addstr(&shown, shown.len ? line.buf + 1 : line.buf);
				strbuf_release(&line);
				if (build_with_resources(c, key))
					src = build_with_resources(c, key);
				/* the same build (same key) on several hosts: one set of rows */
				FOR_EACH_OBJ(h2, c->hosts)
					FOR_EACH_OBJ(b2, rr_arr(h2, "builds"))
						if (rr_streq(rr_str(b2, "build_key"), key))
							add_listed(&hosts, rpt_host_name(h2), ", ");
			} else {
				strbuf_addstr(&hosts, rpt_host_name(h));
			}
			with_variant |= rr_str(src, "variant") != NULL;
			FOR_EACH_OBJ(k, rr_arr(src, "resources")) {
				char *rk = row_key(src, k);
				struct ptx_row *r = NULL;
				for (i = 0; i < nrows && !r; i++)
					if (!strcmp(rows[i].key, rk))
						r = &rows[i];
				if (!r) {
					if (nrows == alloc) {
						alloc = alloc ? 2 * alloc : 32;
						rows = xrealloc(rows, (size_t)alloc * sizeof(*rows));
					}
					r = &rows[nrows++];
					memset(r, 0, sizeof(*r));
					r->b = src;
					r->k = k;
					r->key = rk;
					strbuf_init(&r->variants, 0);
					strbuf_init(&r->hosts, 0);
				} else {
					free(rk);
				}
				r->nbuilds++;
				if (rr_str(src, "variant"))
					add_listed(&r->variants, rr_str(src, "variant"), "\n");
				else
					r->base = 1;
				{
					/* every host of every build it is in */
					struct strbuf tmp = STRBUF_INIT;
					const char *p = hosts.buf, *e;
					while (*p) {
						e = strstr(p, ", ");
						strbuf_reset(&tmp);
						strbuf_add(&tmp, p, e ? (size_t)(e - p) : strlen(p));
						add_listed(&r->hosts, tmp.buf, ", ");
						p = e ? e + 2 : p + strlen(p);
					}
					strbuf_release(&tmp);
				}
			}
			strbuf_release(&hosts);
		}
	}
	for (i = 0; i < nrows; i++) {
		const struct ptx_row *r = &rows[i];
		if (!i)
			strbuf_addf(md, "| program | kernel | arch |%s registers | smem (static) | "
					"stack | spill stores / loads | cmem | barriers | hosts |\n"
					"|---|---|---|%s---|---|---|---|---|---|---|\n",
				    with_variant ? " variant |" : "", with_variant ? "---|" : "");
		add_resource_row(md, r, with_variant,
				 count_builds(c, rr_str(r->b, "program"),
					      rr_str(r->b, "arch")));
		cJSON_ArrayForEach(w, rr_arr(r->k, "warnings")) {
			if (!cJSON_IsString(w) || nwarn >= 20)
				continue;
			strbuf_addstr(&c->scratch, "- ");
			rpt_md_code(&c->scratch, rr_str(r->k, "demangled") ? rr_str(r->k, "demangled")
									 : rr_str(r->k, "kernel"));
			strbuf_addstr(&c->scratch, " (");
			rpt_md_cell_n(&c->scratch, rr_str(r->k, "arch"), 20);
			strbuf_addstr(&c->scratch, "): ");
			rpt_md_cell(&c->scratch, w->valuestring);
			strbuf_addstr(&c->scratch, "\n");
			nwarn++;
		}
	}
	if (nrows)
		strbuf_addstr(md, "\nA kernel compiled the same way in several builds (the same "
				  "name, arch and resources) is one row. Dynamic shared memory is set "
				  "at launch, not by ptxas: a harness program's result says it "
				  "(`config.smem_bytes`, in the sweep tables).\n\n");
	else
		strbuf_addstr(md, "No ptxas report was recorded (no build ran, or nvcc printed "
				  "none).\n\n");
	if (nwarn) {
		strbuf_addstr(md, "ptxas warnings:\n\n");
		strbuf_addstr(md, c->scratch.buf);
		strbuf_addstr(md, "\n");
	}
	strbuf_reset(&c->scratch);
	for (i = 0; i < nrows; i++) {
		free(rows[i].key);
		strbuf_release(&rows[i].variants);
		strbuf_release(&rows[i].hosts);
	}
	free(rows);
	strbuf_release(&shown);
}

/* ==== 7. steps ==== */

void rpt_section_steps(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *h, *x;
	double v;

	strbuf_addstr(md, "## Steps\n\n");
	FOR_EACH_OBJ(h, c->hosts) {
		const cJSON *ship = rr_obj(h, "ship");
		strbuf_addstr(md, "### ");
		rpt_md_cell(md, rpt_host_name(h));
		strbuf_addstr(md, " (");
		rpt_md_cell(md, rr_str(h, "user"));
		strbuf_addch(md, '@');
		rpt_md_cell(md, rr_str(h, "address"));
		if (rr_num(h, "port", &v))
			strbuf_addf(md, ":%.0f", v);
		strbuf_addstr(md, ") — ");
		rpt_cell_host_status(md, h);
		strbuf_addstr(md, "\n\n");
		if (rr_str(h, "error")) {
			strbuf_addstr(md, "Error: ");
			rpt_md_cell_n(md, rr_str(h, "error"), 1000);
			strbuf_addstr(md, "\n\n");
		}
		if (cJSON_GetArraySize(rr_arr(h, RK_PHASES))) {
			strbuf_addstr(md, "| phase | status | time | detail |\n|---|---|---|---|\n");
			FOR_EACH_OBJ(x, rr_arr(h, RK_PHASES)) {
				strbuf_addstr(md, "| ");
				rpt_md_cell_n(md, rr_str(x, "name"), 20);
				strbuf_addstr(md, " | ");
				rpt_cell_status(md, rr_str(x, "status"));
				strbuf_addstr(md, " | ");
				rpt_cell_num(md, x, "duration_s", rpt_fmt_secs);
				strbuf_addstr(md, " | ");
				rpt_md_cell(md, rr_str(x, "detail"));
				strbuf_addstr(md, " |\n");
			}
			strbuf_addstr(md, "\n");
		} else {
			strbuf_addstr(md, "No phase was recorded.\n\n");
		}
		if (ship) {
			strbuf_addstr(md, "Ship: ");
			if (rr_true(ship, "reused"))
				strbuf_addstr(md, "content already on the host (reused), ");
			if (rr_num(ship, "bytes_sent", &v))
				rpt_fmt_bytes(md, v);
			else
				strbuf_addstr(md, DASH);
			strbuf_addstr(md, " sent to ");
			rpt_md_code(md, rr_str(ship, "remote_dir"));
			strbuf_addstr(md, "\n\n");
		}
		if (cJSON_GetArraySize(rr_arr(h, "builds"))) {
			strbuf_addstr(md, "| build | arch | status | time | reused | exit | reason | log |\n"
					  "|---|---|---|---|---|---|---|---|\n");
			FOR_EACH_OBJ(x, rr_arr(h, "builds")) {
				strbuf_addstr(md, "| ");
				rpt_md_code(md, rr_str(x, "program"));
				strbuf_addstr(md, " | ");
				rpt_md_cell_n(md, rr_str(x, "arch"), 20);
				strbuf_addstr(md, " | ");
				rpt_cell_status(md, rr_str(x, "status"));
				strbuf_addstr(md, " | ");
				rpt_cell_num(md, x, "duration_s", rpt_fmt_secs);
				if (rr_true(x, "reused")) {
					strbuf_addstr(md, " | reused | ");
				} else {
					double nc, nr;
					/* an nvcc build that ran: its sources' objects */
					if (rr_num(x, "objects_compiled", &nc) && rr_num(x, "objects_reused", &nr))
						strbuf_addf(md, " | no (objects: %.0f compiled, %.0f reused) | ", nc, nr);
					else
						strbuf_addstr(md, " | no | ");
				}
				rpt_cell_num(md, x, "exit_code", rpt_fmt_int);
				strbuf_addstr(md, " | ");
				rpt_md_cell(md, rr_str(x, "reason"));
				strbuf_addstr(md, " | ");
				rpt_md_code(md, rr_str(x, "log"));
				strbuf_addstr(md, " |\n");
			}
			strbuf_addstr(md, "\n");
		}
		if (cJSON_GetArraySize(rr_arr(h, "steps"))) {
			strbuf_addstr(md, "| step | status | time | exit | reason | stdout / stderr |\n"
					  "|---|---|---|---|---|---|\n");
			FOR_EACH_OBJ(x, rr_arr(h, "steps")) {
				strbuf_addstr(md, "| ");
				rpt_md_code(md, rr_str(x, "id"));
				strbuf_addstr(md, " | ");
				rpt_cell_status(md, rr_str(x, "status"));
				strbuf_addstr(md, " | ");
				rpt_cell_num(md, x, "duration_s", rpt_fmt_secs);
				if (rr_num(x, "timeout_s", &v))
					strbuf_addf(md, " / %.0f s", v);
				strbuf_addstr(md, " | ");
				if (rr_num(x, "signal", &v))
					strbuf_addf(md, "signal %.0f", v);
				else
					rpt_cell_num(md, x, "exit_code", rpt_fmt_int);
				strbuf_addstr(md, " | ");
				rpt_md_cell(md, rr_str(x, "reason"));
				strbuf_addstr(md, " | ");
				rpt_md_code(md, rr_str(x, "stdout_log"));
				strbuf_addstr(md, " ");
				rpt_md_code(md, rr_str(x, "stderr_log"));
				strbuf_addstr(md, " |\n");
			}
			strbuf_addstr(md, "\n");
		}
	}
}

/* ==== 8. provenance ==== */

static void add_tool(struct strbuf *md, const cJSON *t)
{
	if (!rr_str(t, "path") && !rr_str(t, "version")) {
		strbuf_addstr(md, "not found");
		return;
	}
	rpt_md_cell_n(md, rr_str(t, "version"), 60);
	strbuf_addstr(md, " ");
	rpt_md_code(md, rr_str(t, "path"));
}

/* One row of the hosts table: the host (what ran the run there), its GPU,
 * driver, clocks, tools and the time its phases took. */
static void host_row(struct strbuf *md, const cJSON *h)
{
	double v;
	const cJSON *info = rr_obj(h, "info"), *ph;
	double t = 0;
	int nph = 0;
	strbuf_addstr(md, "| ");
	rpt_md_cell(md, rpt_host_name(h));
	if (rr_str(info, "hostname")) {
		strbuf_addstr(md, " (");
		rpt_md_cell_n(md, rr_str(info, "hostname"), 60);
		strbuf_addch(md, ')');
	}
	if (rr_str(h, "runner")) {   /* what ran it there (docs/run-record.md) */
		strbuf_addstr(md, " via ");
		rpt_md_cell_n(md, rr_str(h, "runner"), 20);
	}
	strbuf_addstr(md, " | ");
	rpt_md_cell(md, rr_str(info, "gpu_name") ? rr_str(info, "gpu_name")
		: rr_str(info, "gpu_reason") ? rr_str(info, "gpu_reason") : NULL);
	strbuf_addstr(md, " | ");
	rpt_md_code(md, rr_str(info, "gpu_uuid"));
	strbuf_addstr(md, " | ");
	rpt_md_cell_n(md, rr_str(info, "compute_cap"), 10);
	strbuf_addstr(md, " | ");
	rpt_md_cell_n(md, rr_str(info, "driver"), 40);
	strbuf_addstr(md, " | ");
	rpt_cell_num(md, info, "sm_clock_mhz", rpt_fmt_int);
	strbuf_addstr(md, " / ");
	rpt_cell_num(md, info, "max_sm_clock_mhz", rpt_fmt_int);
	strbuf_addstr(md, " / ");
	rpt_cell_num(md, info, "mem_clock_mhz", rpt_fmt_int);
	strbuf_addstr(md, " | ");
	add_tool(md, rr_obj(info, "nvcc"));
	strbuf_addstr(md, " | ");
	add_tool(md, rr_obj(info, "ncu"));
	strbuf_addstr(md, " | ");
	add_tool(md, rr_obj(info, "compute_sanitizer"));
	strbuf_addstr(md, " | ");
	add_tool(md, rr_obj(info, "python"));
	strbuf_addstr(md, " | ");
	rpt_md_cell_n(md, rr_str(info, "torch"), 40);
	strbuf_addstr(md, " | ");
	FOR_EACH_OBJ(ph, rr_arr(h, RK_PHASES))
		if (rr_num(ph, "duration_s", &v) && nph++ < 1000)
			t += v;
	if (nph)
		rpt_fmt_secs(md, t);
	else
		strbuf_addstr(md, DASH);
	strbuf_addstr(md, " |\n");
}

void rpt_section_provenance(struct rpt_ctx *c)
{
	struct strbuf *md = c->md;
	const cJSON *p = rr_obj(c->run, RK_PROVENANCE), *git = rr_obj(p, "git");
	const cJSON *files = rr_arr(p, "files"), *h, *f;
	double v, total = 0;

	strbuf_addstr(md, "## Provenance\n\n");
	strbuf_addstr(md, "- **gpuorch** ");
	rpt_md_cell_n(md, rr_str(p, "gpuorch_version"), 40);
	strbuf_addstr(md, "; command ");
	rpt_md_code(md, rr_str(c->run, "command_line"));
	strbuf_addstr(md, "\n- **Source**: ");
	rpt_md_cell_n(md, rr_str(p, "source"), 20);
	strbuf_addstr(md, ", commit ");
	rpt_md_code(md, rr_str(git, "commit"));
	if (rr_str(git, "branch")) {
		strbuf_addstr(md, " on ");
		rpt_md_code(md, rr_str(git, "branch"));
	}
	if (rr_true(git, "dirty")) {
		strbuf_addstr(md, ", **dirty** (diff sha256 ");
		if (rr_str(git, "diff_sha256"))
			strbuf_addf(md, "`%.12s…`", rr_str(git, "diff_sha256"));
		else
			strbuf_addstr(md, DASH);
		if (rr_str(git, "diff_file")) {
			strbuf_addstr(md, ", saved as ");
			rpt_md_code(md, rr_str(git, "diff_file"));
		}
		if (cJSON_GetArraySize(rr_arr(git, "diff_withheld")) > 0) {
			/* changed files with a secret's name: never in the diff */
			const cJSON *w;
			int n = 0;
			strbuf_addstr(md, "; **not recorded** (a secret's name): ");
			cJSON_ArrayForEach(w, rr_arr(git, "diff_withheld")) {
				strbuf_addstr(md, n++ ? ", " : "");
				rpt_md_code(md, cJSON_IsString(w) ? w->valuestring : NULL);
			}
		}
		strbuf_addch(md, ')');
	} else if (git) {
		strbuf_addstr(md, ", clean");
	}
	if (rr_str(git, "note")) {
		strbuf_addstr(md, " — ");
		rpt_md_cell(md, rr_str(git, "note"));
	}
	strbuf_addstr(md, "\n- **Spec** sha256 ");
	rpt_md_code(md, rr_str(c->exp, "spec_sha256"));
	strbuf_addstr(md, "\n- **Content id** ");
	rpt_md_code(md, rr_str(p, "content_id"));
	if (rr_num(p, "archive_bytes", &v)) {
		strbuf_addstr(md, " (archive ");
		rpt_fmt_bytes(md, v);
		strbuf_addch(md, ')');
	}
	strbuf_addstr(md, "\n- **Controller** ");
	rpt_md_cell(md, rr_str(rr_obj(p, "controller"), "user"));
	strbuf_addch(md, '@');
	rpt_md_cell(md, rr_str(rr_obj(p, "controller"), "hostname"));
	strbuf_addstr(md, "; started ");
	rpt_fmt_time(md, rr_str(c->run, RK_STARTED_AT));
	strbuf_addstr(md, ", ended ");
	rpt_fmt_time(md, rr_str(c->run, RK_ENDED_AT));
	strbuf_addstr(md, "\n\n");

	FOR_EACH_OBJ(f, files)
		if (rr_num(f, "size", &v))
			total += v;
	strbuf_addf(md, "<details><summary>%d file%s shipped (", cJSON_GetArraySize(files),
		    cJSON_GetArraySize(files) == 1 ? "" : "s");
	rpt_fmt_bytes(md, total);
	strbuf_addstr(md, ")</summary>\n\n");
	if (cJSON_GetArraySize(files)) {
		strbuf_addstr(md, "| file | size | sha256 |\n|---|---|---|\n");
		FOR_EACH_OBJ(f, files) {
			strbuf_addstr(md, "| ");
			rpt_md_code(md, rr_str(f, "path"));
			strbuf_addstr(md, " | ");
			rpt_cell_num(md, f, "size", rpt_fmt_int);
			strbuf_addstr(md, " | ");
			rpt_md_code(md, rr_str(f, "sha256"));
			strbuf_addstr(md, " |\n");
		}
	}
	strbuf_addstr(md, "\n</details>\n\n");

	if (!cJSON_GetArraySize(c->hosts))
		return;
	strbuf_addstr(md, "| host | GPU | UUID | CC | driver | clocks (SM / max / mem MHz) | "
			  "nvcc | ncu | compute-sanitizer | python | torch | host time |\n"
			  "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	FOR_EACH_OBJ(h, c->hosts)
		host_row(md, h);
	strbuf_addstr(md, "\n");
}
