/* runsum.c -- the per-run summary: build, write, load, list (runsum.h). */
#include "report/runsum.h"
#include "store/runkeys.h"
#include "report/report.h"
#include "report/samplesline.h"
#include "store/gates.h"
#include "store/runread.h"
#include "store/samples.h"
#include "core/fsutil.h"
#include "core/hash.h"
#include "core/jsonlean.h"
#include "core/jsonutil.h"
#include "core/stats.h"
#include "core/trace.h"
#include "core/vocab.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/banned.h"

#define SAMPLES_MAX (1 << 24)   /* bytes of one samples line read back */

static void copy_str(cJSON *to, const cJSON *from, const char *key)
{
	const char *s = rr_str(from, key);
	if (s)
		json_add_str(to, key, s);
}

static void copy_num(cJSON *to, const cJSON *from, const char *path, const char *key)
{
	double v;
	if (rr_num(from, path, &v))
		json_add_num(to, key, v);
}

static void copy_item(cJSON *to, const cJSON *from, const char *key)
{
	const cJSON *v = cJSON_IsObject(from) ? cJSON_GetObjectItemCaseSensitive(from, key) : NULL;
	if (v)
		cJSON_AddItemToObject(to, key, cJSON_Duplicate(v, 1));
}

/* timing.samples_us as an array of numbers, also from a lean tree's block
 * (store_load_record_lean): the summary is the same from either tree */
static void copy_samples_us(cJSON *to, const cJSON *from)
{
	const cJSON *v = cJSON_IsObject(from) ? cJSON_GetObjectItemCaseSensitive(from, "samples_us")
					      : NULL;
	cJSON *arr;
	double *x;
	int i, n;
	if (!cJSON_IsRaw(v)) {
		copy_item(to, from, "samples_us");
		return;
	}
	x = json_lean_numbers(v, &n);
	arr = json_add_arr(to, "samples_us");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(x[i]));
	free(x);
}

/* The step's samples (either form, store/samples.h): inline, or as one line
 * of samples.txt; with how many the program timed and which were kept. */
static void add_samples(cJSON *timing, const cJSON *from, struct strbuf *samples)
{
	struct samples sm;
	size_t off;
	if (!samples) {
		/* in memory: the samples as the record has them, decoded when read */
		copy_num(timing, from, "n", "n");
		copy_str(timing, from, "samples_kept");
		copy_item(timing, from, "samples");
		copy_samples_us(timing, from);
		return;
	}
	if (samples_read_timing(from, &sm, NULL) <= 0)
		return;
	json_add_num(timing, "n", sm.total);
	if (sm.kept)
		json_add_str(timing, "samples_kept", sm.kept);
	off = samples->len;
	/* ascending (samplesline.h): history's quantiles and ranks take them as
	 * they are read; an older summary's line in the order taken is sorted by
	 * its reader, with the same answers */
	samplesline_add(samples, sm.v, sm.n);
	{
		cJSON *at = json_add_arr(timing, "samples_at");
		cJSON_AddItemToArray(at, cJSON_CreateNumber((double)off));
		cJSON_AddItemToArray(at, cJSON_CreateNumber((double)(samples->len - off)));
	}
	json_add_num(timing, "samples_n", sm.n);
	samples_release(&sm);
}

static cJSON *step_summary(const cJSON *s, struct strbuf *samples)
{
	static const char *const keys[] = { "id", "kind", "program", "problem", "arch", "role",
					    "variant", "mode", "status", "reason", NULL };
	cJSON *o = cJSON_CreateObject(), *r, *t, *m;
	const cJSON *res = rr_result(s);
	int i;
	for (i = 0; keys[i]; i++)
		copy_str(o, s, keys[i]);
	/* the GPU it ran on (a spread run's, a GPU slot's): compare's instance rule */
	copy_item(o, s, "gpus");
	if (!res)
		return o;
	r = json_add_obj(o, "result");
	copy_str(r, res, "status");
	if (rr_obj(res, "timing")) {
		t = json_add_obj(r, "timing");
		copy_num(t, res, "timing.median_us", "median_us");
		copy_num(t, res, "timing.min_us", "min_us");
		copy_num(t, res, "timing.max_us", "max_us");
		copy_num(t, res, "timing.p90_us", "p90_us");
		copy_num(t, res, "timing.sm_clock_mhz_median", "sm_clock_mhz_median");
		add_samples(t, rr_obj(res, "timing"), samples);
	}
	if (rr_obj(res, "model")) {
		m = json_add_obj(r, "model");
		copy_num(m, res, "model.tflops", "tflops");
		copy_num(m, res, "model.gbps", "gbps");
		copy_item(m, rr_obj(res, "model"), "impossible");
	}
	/* figures of the program's own output, and each kernel's median */
	if (rr_obj(res, "figures")) {
		const cJSON *x;
		cJSON *fo = json_add_obj(r, "figures");
		cJSON_ArrayForEach(x, rr_obj(res, "figures")) {
			cJSON *one;
			if (!x->string)
				continue;
			one = json_add_obj(fo, x->string);
			copy_num(one, x, "value", "value");
			copy_str(one, x, "unit");
			copy_str(one, x, "better");
		}
	}
	if (rr_is_kind(s, STEP_KERNEL_TIMING)) {
		const cJSON *x;
		cJSON_ArrayForEach(x, res)
			if (x->string && !strncmp(x->string, "kernel:", 7) && cJSON_IsObject(x))
				copy_num(json_add_obj(r, x->string), x, "median_us", "median_us");
	}
	return o;
}

/* What went wrong on a host, for `gpuorch runs` (issue 30: a run with 2
 * failed gates, 4 failed builds and 8 skipped steps headlined a latency
 * alone): gates judged (the stored ones, else judged now from the record, as
 * the report does) and failed, builds failed, steps skipped and failed. */
static void add_counts(cJSON *ho, const cJSON *run, const cJSON *h)
{
	const cJSON *spec_gates = rr_arr(rr_obj(rr_obj(run, RK_EXPERIMENT), "spec"), "gates");
	const cJSON *x, *gates = rr_arr(h, "gates");
	cJSON *owned = NULL, *c = json_add_obj(ho, "counts");
	int ng = 0, gf = 0, bf = 0, ss = 0, sf = 0;
	if (!gates && cJSON_GetArraySize(spec_gates))
		gates = owned = gates_evaluate_host(spec_gates, h, NULL);
	cJSON_ArrayForEach(x, gates) {
		if (!cJSON_IsObject(x) || gate_verdict_is(rr_str(x, "verdict"), VERDICT_NA))
			continue;
		ng++;
		gf += !gate_verdict_is(rr_str(x, "verdict"), VERDICT_PASS);
	}
	cJSON_Delete(owned);
	cJSON_ArrayForEach(x, rr_arr(h, "builds"))
		if (cJSON_IsObject(x) && !item_status_is(rr_str(x, "status"), ST_PASS) &&
		    !item_status_is(rr_str(x, "status"), ST_SKIPPED))
			bf++;
	cJSON_ArrayForEach(x, rr_arr(h, "steps")) {
		if (!cJSON_IsObject(x) || item_status_is(rr_str(x, "status"), ST_PASS))
			continue;
		if (item_status_is(rr_str(x, "status"), ST_SKIPPED))
			ss++;
		else
			sf++;
	}
	json_add_num(c, "gates", ng);
	json_add_num(c, "gates_failed", gf);
	json_add_num(c, "builds_failed", bf);
	json_add_num(c, "steps_skipped", ss);
	json_add_num(c, "steps_failed", sf);
}

cJSON *runsum_build(const cJSON *run, struct strbuf *samples)
{
	static const char *const top[] = { RK_RUN_ID, RK_STARTED_AT, RK_ENDED_AT, RK_STATUS,
					   RK_OUTCOME, NULL };
	cJSON *o = cJSON_CreateObject(), *e, *p, *hosts;
	const cJSON *h, *s;
	struct strbuf head = STRBUF_INIT;
	int i;

	json_add_str(o, "schema", RUNSUM_SCHEMA);
	for (i = 0; top[i]; i++)
		copy_str(o, run, top[i]);
	copy_item(o, run, RK_EXIT_CODE);
	copy_item(o, run, "dry_run");
	e = json_add_obj(o, "experiment");
	copy_str(e, rr_obj(run, RK_EXPERIMENT), "name");
	copy_str(e, rr_obj(run, RK_EXPERIMENT), "slug");
	copy_str(e, rr_obj(run, RK_EXPERIMENT), "spec_sha256");
	copy_str(e, rr_obj(run, RK_EXPERIMENT), "spec_path");
	p = json_add_obj(o, "provenance");
	copy_str(p, rr_obj(run, RK_PROVENANCE), "content_id");
	copy_str(p, rr_obj(run, RK_PROVENANCE), "source");
	copy_item(p, rr_obj(run, RK_PROVENANCE), "git");
	/* what the cloud instances of the run cost (docs/cloud.md): `runs` prints it */
	copy_item(p, rr_obj(run, RK_PROVENANCE), RK_INSTANCES_COST_TOTAL);
	report_headline(run, &head);
	json_add_str(o, "headline", head.buf);
	strbuf_release(&head);
	hosts = json_add_arr(o, "hosts");
	cJSON_ArrayForEach(h, rr_arr(run, "hosts")) {
		cJSON *ho = cJSON_CreateObject(), *info, *steps;
		const cJSON *hi = rr_obj(h, "info");
		copy_str(ho, h, "name");
		copy_str(ho, h, "status");
		copy_str(ho, h, "error");
		info = json_add_obj(ho, "info");
		copy_str(info, hi, "gpu_name");
		copy_str(info, hi, "compute_cap");
		copy_str(info, hi, "arch");
		copy_str(info, hi, "driver");
		copy_str(info, hi, "gpu_uuid");
		copy_item(info, hi, "max_sm_clock_mhz");
		if (rr_str(rr_obj(hi, "nvcc"), "version"))
			json_add_str(json_add_obj(info, "nvcc"), "version",
				     rr_str(rr_obj(hi, "nvcc"), "version"));
		add_counts(ho, run, h);
		/* the step the run is summed up by: `history` follows it by default */
		if ((s = rr_headline_step(run, h)) != NULL) {
			cJSON *hl = json_add_obj(ho, "headline");
			copy_str(hl, s, "program");
			copy_str(hl, s, "problem");
		}
		steps = json_add_arr(ho, "steps");
		cJSON_ArrayForEach(s, rr_arr(h, "steps")) {
			if (!cJSON_IsObject(s) || (!rr_is_kind(s, STEP_BENCHMARK) &&
						   !rr_is_kind(s, STEP_CORRECTNESS) &&
						   !rr_is_kind(s, STEP_SWEEP) &&
						   !rr_is_kind(s, STEP_KERNEL_TIMING)))
				continue;
			cJSON_AddItemToArray(steps, step_summary(s, samples));
		}
		cJSON_AddItemToArray(hosts, ho);
	}
	return o;
}

/* run.json's size and mtime, each a number a double holds exactly. */
static int stat_of(const char *path, double *size, double *mtime_s, double *mtime_ns)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return 0;
	*size = (double)st.st_size;
	*mtime_s = (double)st.st_mtim.tv_sec;
	*mtime_ns = (double)st.st_mtim.tv_nsec;
	return 1;
}

/* the SHA-256 of the file at PATH as hex (0: unreadable) */
static int file_sha256(const char *path, char hex[SHA256_HEX_LEN + 1])
{
	struct strbuf text = STRBUF_INIT, why = STRBUF_INIT;
	int ok = fs_read_file(path, &text, &why) == GO_OK;
	if (ok)
		sha256_hex(text.buf, text.len, hex);
	strbuf_release(&text);
	strbuf_release(&why);
	return ok;
}

/* Write dir/samples.txt and dir/summary.json for run, read from the file
 * `of` describes; *tree (when asked) is the summary as written, so the
 * writer need not read it back. Neither file is fsynced: both are rebuilt
 * from run.json whenever they are lost (after a power loss one may be
 * missing or empty: summary.json then does not parse, and samples.txt is
 * not the size it records, so current_summary() passes over them). */
static enum go_status write_summary(const char *dir, const cJSON *run,
				    const struct store_record_file *of, cJSON **tree,
				    struct strbuf *err)
{
	struct strbuf samples = STRBUF_INIT;
	char *sp = xstrfmt("%s/samples.txt", dir), *sum = xstrfmt("%s/summary.json", dir);
	cJSON *o = runsum_build(run, &samples), *jo;
	enum go_status st;

	jo = json_add_obj(o, "of");
	json_add_num(jo, "size", of->size);
	json_add_num(jo, "mtime_s", of->mtime_s);
	json_add_num(jo, "mtime_ns", of->mtime_ns);
	json_add_str(jo, "sha256", of->sha256);
	json_add_num(jo, "samples_size", (double)samples.len);
	/* a run with no timed samples has no samples.txt (an empty file is
	 * not kept: git, docs/results-store.md); samples_size 0 says so */
	if (samples.len)
		st = fs_write_derived(sp, samples.buf, samples.len, err);
	else if (unlink(sp) < 0 && errno != ENOENT)
		st = go_fail(err, GO_ERR_IO, "cannot remove '%s': %s", sp, strerror(errno));
	else
		st = GO_OK;
	if (st == GO_OK)
		st = json_write_derived(sum, o, err);
	if (st == GO_OK && tree)
		*tree = o;
	else
		cJSON_Delete(o);
	strbuf_release(&samples);
	free(sp);
	free(sum);
	return st;
}

enum go_status runsum_write(const char *dir, const cJSON *run, struct strbuf *err)
{
	char *rj = xstrfmt("%s/run.json", dir);
	struct store_record_file of;
	enum go_status st;

	if (!stat_of(rj, &of.size, &of.mtime_s, &of.mtime_ns) || !file_sha256(rj, of.sha256))
		st = go_fail(err, GO_ERR_IO, "cannot summarise '%s': %s", rj, strerror(errno));
	else
		st = write_summary(dir, run, &of, NULL, err);
	free(rj);
	return st;
}

/* Summary o is of this schema, or (older_ok) of /4, which it extends. */
static int schema_ok(const cJSON *o, int older_ok)
{
	return rr_streq(rr_str(o, "schema"), RUNSUM_SCHEMA) ||
	       (older_ok && rr_streq(rr_str(o, "schema"), RUNSUM_SCHEMA_4));
}

/* samples.txt is the size the summary says it wrote (when it says one) */
static int samples_size_ok(const char *dir, const cJSON *of)
{
	double samples_size, sz, m_s, m_ns;
	char *sp;
	int ok;
	if (!rr_num(of, "samples_size", &samples_size))
		return 1;
	sp = xstrfmt("%s/samples.txt", dir);
	ok = stat_of(sp, &sz, &m_s, &m_ns) ? sz == samples_size : samples_size == 0;
	free(sp);
	return ok;
}

/* summary.json, when it is there, is this schema (older_ok: or /4) and
 * summarises run.json as it is: same size, and the same mtime or else the
 * same SHA-256 (a clone or a copy gives every file a new mtime, not new
 * contents: its committed summaries stay current, and a listing never
 * rewrites tracked files); and samples.txt is the size the summary says
 * (when it says one; also without run.json: a samples.txt a power loss
 * emptied, or another summary's, is never read by offsets it does not have) */
static cJSON *current_summary(const char *dir, int older_ok)
{
	char *rj = xstrfmt("%s/run.json", dir), *sum = xstrfmt("%s/summary.json", dir);
	struct strbuf why = STRBUF_INIT;
	cJSON *o = NULL;
	double size, mtime_s, mtime_ns, ssize, ss, sns;
	char sha[SHA256_HEX_LEN + 1];

	if (fs_is_file(sum) && !fs_is_file(rj) && json_load_file(sum, &o, GO_ERR_IO, &why) == GO_OK) {
		/* the raw record is in the results store (docs/results-store.md): the
		 * summary is what this clone has of the run, and what a listing reads */
		if (!schema_ok(o, older_ok) || !samples_size_ok(dir, rr_obj(o, "of"))) {
			cJSON_Delete(o);
			o = NULL;
		}
	} else if (fs_is_file(sum) && stat_of(rj, &size, &mtime_s, &mtime_ns) &&
		   json_load_file(sum, &o, GO_ERR_IO, &why) == GO_OK) {
		const cJSON *of = rr_obj(o, "of");
		int same = schema_ok(o, older_ok) && rr_num(of, "size", &ssize) &&
			   rr_num(of, "mtime_s", &ss) && rr_num(of, "mtime_ns", &sns) && ssize == size &&
			   samples_size_ok(dir, of);
		if (same && (ss != mtime_s || sns != mtime_ns))
			same = rr_str(of, "sha256") && file_sha256(rj, sha) &&
			       rr_streq(rr_str(of, "sha256"), sha);
		if (!same) {
			cJSON_Delete(o);
			o = NULL;
		}
	}
	strbuf_release(&why);
	free(rj);
	free(sum);
	return o;
}

/* run.json of dir read for its summary: lean (store_load_record_lean: each
 * samples_us array one block, no node per sample) unless $GPUORCH_LEAN is 0
 * (the full cJSON parse: the same summary, slower; tests compare the two),
 * and opened for samples_read_timing until load_close */
static enum go_status load_open(const char *dir, struct json_lean *run,
				struct store_record_file *of, struct strbuf *err)
{
	const char *lean = getenv("GPUORCH_LEAN");
	enum go_status st;
	if (lean && !strcmp(lean, "0")) {
		memset(run, 0, sizeof(*run));
		return store_load_record_of(dir, &run->tree, of, err);
	}
	st = store_load_record_lean(dir, run, of, err);
	if (st == GO_OK)
		json_lean_open(run);
	return st;
}

static void load_close(struct json_lean *run)
{
	json_lean_close();
	json_lean_release(run);
}

/* The summary built from dir/run.json: written, or in memory where the
 * store cannot be written. */
static enum go_status load_from_record(const char *dir, cJSON **out, struct strbuf *err)
{
	struct strbuf why = STRBUF_INIT;
	struct store_record_file of;
	struct json_lean run;
	enum go_status st;
	st = load_open(dir, &run, &of, err);
	if (st != GO_OK)
		return st;
	/* written the first time it is missed, so the next reader parses the
	 * small file and a listing's memory does not hold every sample; the
	 * summary written is the one returned (never read back); a store it
	 * cannot write to (read-only, full) still lists, from memory */
	if (write_summary(dir, run.tree, &of, out, &why) != GO_OK)
		*out = runsum_build(run.tree, NULL);
	strbuf_release(&why);
	load_close(&run);
	return GO_OK;
}

/* runsum_load's work, without its trace span */
static enum go_status summary_load(const char *dir, cJSON **out, struct strbuf *err)
{
	*out = current_summary(dir, 1);
	if (*out)
		return GO_OK;
	return load_from_record(dir, out, err);
}

enum go_status runsum_load(const char *dir, cJSON **out, struct strbuf *err)
{
	struct trace_args a = TRACE_ARGS_INIT;
	int64_t t0;
	enum go_status st;
	if (!trace_on())
		return summary_load(dir, out, err);
	/* a "load" span a summary (docs/trace.md): how often a command reads
	 * the store, and how long each read takes */
	t0 = trace_now_us();
	st = summary_load(dir, out, err);
	a.detail = dir;
	a.status = st == GO_OK ? "ok" : err->buf;
	trace_span(NULL, "load", t0, &a);
	return st;
}

enum go_status runsum_load_here(const char *dir, cJSON **out, struct strbuf *err)
{
	char *rj = xstrfmt("%s/run.json", dir), *sum = xstrfmt("%s/summary.json", dir);
	char *id = store_qualified_id(dir);
	enum go_status st = GO_OK;
	cJSON *older;
	if ((*out = current_summary(dir, 0)) != NULL)
		;
	else if (fs_is_file(rj))
		st = load_from_record(dir, out, err);
	else if ((older = current_summary(dir, 1)) != NULL) {
		/* a /4 summary lacks each step's GPU: a spread run's step on GPU 1
		 * would be judged as on the host's GPU 0 (the wrong instance
		 * factor: a false verdict), and its sweep steps: refused */
		st = go_fail(err, GO_ERR_IO, "run %s's summary is %s, written before summaries "
			     "kept each step's GPU and a sweep's steps, which compare's rules need: "
			     "get its raw record with 'gpuorch pull %s' (then 'gpuorch summarize' "
			     "rewrites the summary), or leave out --summary (the raw record is "
			     "fetched then)", id, rr_str(older, "schema"), id);
		cJSON_Delete(older);
	} else
		st = go_fail(err, GO_ERR_IO, "run %s has no summary this gpuorch reads ('%s' is %s) "
			     "and no run.json to make one from: get its raw record with 'gpuorch pull "
			     "%s', or leave out --summary (the raw record is fetched then)", id, sum,
			     fs_is_file(sum) ? "of another schema, or damaged" : "missing", id);
	free(id);
	free(rj);
	free(sum);
	return st;
}

enum go_status runsum_refresh(const char *dir, cJSON **out, struct strbuf *err)
{
	struct store_record_file of;
	struct json_lean run;
	enum go_status st;
	char *rj = xstrfmt("%s/run.json", dir);
	int here = fs_is_file(rj);
	free(rj);
	/* an older summary is rewritten from the raw record here, never fetched for it */
	*out = current_summary(dir, !here);
	if (*out)
		return GO_OK;
	st = load_open(dir, &run, &of, err);
	if (st != GO_OK)
		return st;
	st = write_summary(dir, run.tree, &of, out, err);
	load_close(&run);
	return st;
}

enum go_status runsum_list(struct store_entry **out, int *n, struct strbuf *warnings,
			   struct strbuf *err)
{
	return store_list_with(runsum_load, out, n, warnings, err);
}

int runsum_samples_at(const cJSON *samples_at, double at[2])
{
	if (!cJSON_IsArray(samples_at) || cJSON_GetArraySize(samples_at) != 2 ||
	    !cJSON_IsNumber(cJSON_GetArrayItem(samples_at, 0)) ||
	    !cJSON_IsNumber(cJSON_GetArrayItem(samples_at, 1)))
		return 0;
	at[0] = cJSON_GetArrayItem(samples_at, 0)->valuedouble;
	at[1] = cJSON_GetArrayItem(samples_at, 1)->valuedouble;
	return 1;
}

int runsum_read_samples(const char *dir, const cJSON *samples_at, double **v, int *n)
{
	double at[2];
	*v = NULL;
	*n = 0;
	if (!runsum_samples_at(samples_at, at))
		return 0;
	return runsum_read_samples_at(dir, at[0], at[1], v, n);
}

/* runsum_read_samples_at's work, without its trace span */
static int samples_read(const char *dir, double off, double len, double **v, int *n)
{
	char *path, *buf;
	int fd;
	ssize_t got;

	if (!(off >= 0) || !(len >= 1) || len > SAMPLES_MAX)
		return 0;
	path = xstrfmt("%s/samples.txt", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return 0;
	buf = xmalloc((size_t)len + 1);
	got = pread(fd, buf, (size_t)len, (off_t)off);
	close(fd);
	if (got != (ssize_t)len || buf[(size_t)len - 1] != '\n') {
		free(buf);
		return 0;
	}
	buf[(size_t)len - 1] = '\0';
	samplesline_parse(buf, v, n);
	free(buf);
	return *n > 0;
}

int runsum_read_samples_at(const char *dir, double off, double len, double **v, int *n)
{
	struct trace_args a = TRACE_ARGS_INIT;
	int64_t t0;
	int got;
	*v = NULL;
	*n = 0;
	if (!trace_on())
		return samples_read(dir, off, len, v, n);
	/* a "samples" span a read of samples.txt (docs/trace.md) */
	t0 = trace_now_us();
	got = samples_read(dir, off, len, v, n);
	a.detail = dir;
	a.status = got ? "ok" : "no samples read";
	a.bytes = got ? (int64_t)len : 0;
	trace_span(NULL, "samples", t0, &a);
	return got;
}
