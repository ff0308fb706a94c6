/* fixtrim.c -- test helper: make a committed run.json a small test fixture, in place.
 *
 *   fixtrim [--plain] [--headline] [--problem P]... [--max KIND=N]... [--trials N]
 *           [--builds] RUN_JSON...
 *
 * By default every timing.samples_us array (records written before
 * 2026-11-28) is packed into timing.samples by the record writer's own
 * samples_pack_timing (store/samples.h), and both forms are read back with
 * samples_read_timing: the same count and every sample the same double, bit
 * for bit, or the file is refused (exit 1, nothing written). --plain packs
 * nothing. --problem P keeps only the steps of problem P (and of any other
 * --problem named); --max KIND=N keeps the first N steps of that kind per host (N=0
 * drops them; KIND '*': every kind without a --max of its own); --headline
 * keeps each host's headline step (rr_headline_step: what history and runs
 * read) whatever --max says, and alone only it; --trials N keeps the
 * first N trials of each correctness result, and every failed one;
 * --builds drops the builds of a variant that no step left uses. The
 * record is written back as gpuorch writes it (cJSON_Print, atomically).
 * One line per file says what changed. tests/tools/shrink-fixtures.sh
 * says which run gets what. */
#include "core/jsonutil.h"
#include "store/runread.h"
#include "store/samples.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "core/banned.h"

#define MAXKINDS 16

struct opts {
	int plain, headline, trials, builds;
	char *kind[MAXKINDS];
	int max[MAXKINDS], nkinds;
	const char *problem[MAXKINDS];
	int nproblems;
};

struct tally {
	int arrays, samples, steps, trials, builds;
};

/* where two sets of samples first differ, bit for bit (the count too): -1
 * when they are the same */
static int first_difference(const struct samples *a, const struct samples *b)
{
	int i;
	for (i = 0; i < a->n && i < b->n; i++)
		if (memcmp(&a->v[i], &b->v[i], sizeof(double)))
			return i;
	return a->n == b->n && a->total == b->total ? -1 : i;
}

/* pack one timing object; -1 (err says why) when the packed form would not
 * read back as the same samples, or when an entry of the array is not a
 * finite number (the packed form would drop it) */
static int pack_timing(cJSON *timing, struct tally *t, struct strbuf *err)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(timing, "samples_us");
	struct samples before, after;
	int rc = 0, n, d;
	if (!cJSON_IsArray(arr))
		return 0;
	n = cJSON_GetArraySize(arr);
	if (samples_read_timing(timing, &before, err) < 0)
		return -1;
	if (before.n != n) {
		strbuf_addf(err, "%d of its %d samples_us entries are not finite numbers", n - before.n, n);
		samples_release(&before);
		return -1;
	}
	samples_pack_timing(timing);
	if (samples_read_timing(timing, &after, err) < 0) {
		rc = -1;
	} else if ((d = first_difference(&before, &after)) >= 0) {
		strbuf_addf(err, "sample %d of %d does not read back the same once packed: %.17g, "
			    "packed %.17g (a value that is not a whole nanosecond)", d + 1, n,
			    d < before.n ? before.v[d] : 0.0, d < after.n ? after.v[d] : 0.0);
		rc = -1;
	} else {
		t->arrays++;
		t->samples += n;
	}
	samples_release(&before);
	samples_release(&after);
	return rc;
}

/* keep the first N trials and every failed one */
static void trim_trials(cJSON *step, int keep, struct tally *t)
{
	cJSON *trials = (cJSON *)json_path(step, "result.correctness.trials");
	int i = 0, n = cJSON_GetArraySize(trials);
	while (cJSON_IsArray(trials) && i < n) {
		cJSON *tr = cJSON_GetArrayItem(trials, i);
		if (i >= keep && !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(tr, "pass"))) {
			cJSON_DeleteItemFromArray(trials, i);
			n--;
			t->trials++;
		} else {
			i++;
		}
	}
}

/* the steps of each kind seen so far on a host: the names copied (a step
 * dropped frees its own "kind" string) */
struct seen {
	char kind[32][64];
	int n[32], nkinds;
};

/* how many steps of this kind came before (each kind counted apart) */
static int count_kind(struct seen *seen, const char *kind)
{
	int k;
	kind = kind ? kind : "";
	for (k = 0; k < seen->nkinds; k++)
		if (!strcmp(seen->kind[k], kind))
			return seen->n[k]++;
	if (seen->nkinds == 32)
		return 0;
	snprintf(seen->kind[seen->nkinds], sizeof(seen->kind[0]), "%s", kind);
	seen->n[seen->nkinds] = 1;
	seen->nkinds++;
	return 0;
}

/* whether the step stays: the headline (--headline) always; else none of
 * a problem --problem does not name; else the first N of its kind (--max
 * KIND=N, else --max '*=N'); else all, or none with --headline */
static int keep_step(const struct opts *o, const cJSON *step, const cJSON *headline,
		     struct seen *seen)
{
	const char *kind = json_str(step, "kind");
	int k, any = -1;
	if (o->headline && step == headline)
		return 1;
	for (k = 0; k < o->nproblems; k++)
		if (rr_streq(json_str(step, "problem"), o->problem[k]))
			break;
	if (o->nproblems && k == o->nproblems)
		return 0;
	for (k = 0; k < o->nkinds; k++) {
		if (rr_streq(kind, o->kind[k]))
			return count_kind(seen, kind) < o->max[k];
		if (!strcmp(o->kind[k], "*"))
			any = k;
	}
	if (any >= 0)
		return count_kind(seen, kind) < o->max[any];
	return !o->headline;
}

/* --builds: drop the builds of a variant no step left uses */
static void trim_builds(cJSON *host, struct tally *t)
{
	cJSON *builds = cJSON_GetObjectItemCaseSensitive(host, "builds");
	const cJSON *s;
	int i = 0;
	while (cJSON_IsArray(builds) && i < cJSON_GetArraySize(builds)) {
		const cJSON *b = cJSON_GetArrayItem(builds, i);
		const char *variant = json_str(b, "variant");
		int used = !variant;
		cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(host, "steps"))
			used |= rr_streq(json_str(s, "variant"), variant) &&
				rr_streq(json_str(s, "program"), json_str(b, "program"));
		if (used) {
			i++;
		} else {
			cJSON_DeleteItemFromArray(builds, i);
			t->builds++;
		}
	}
}

static int trim_host(const struct opts *o, cJSON *run, cJSON *host, struct tally *t,
		     struct strbuf *err)
{
	cJSON *steps = cJSON_GetObjectItemCaseSensitive(host, "steps");
	const cJSON *headline = o->headline ? rr_headline_step(run, host) : NULL;
	struct seen seen = {.nkinds = 0};
	int i = 0;
	if (o->headline && !headline) {
		strbuf_addf(err, "host '%s' has no headline step to keep", json_str(host, "name"));
		return -1;
	}
	while (cJSON_IsArray(steps) && i < cJSON_GetArraySize(steps)) {
		cJSON *s = cJSON_GetArrayItem(steps, i);
		cJSON *timing = (cJSON *)json_path(s, "result.timing");
		if (!keep_step(o, s, headline, &seen)) {
			cJSON_DeleteItemFromArray(steps, i);
			t->steps++;
			continue;
		}
		if (o->trials >= 0)
			trim_trials(s, o->trials, t);
		if (!o->plain && timing) {
			strbuf_addf(err, "step '%s': ", json_str(s, "id"));
			if (pack_timing(timing, t, err) < 0)
				return -1;
			strbuf_reset(err);
		}
		i++;
	}
	if (o->builds)
		trim_builds(host, t);
	return 0;
}

static int trim_file(const struct opts *o, const char *path)
{
	struct strbuf err = STRBUF_INIT;
	struct tally t = {0};
	struct stat st0, st1;
	cJSON *run = NULL, *h;
	int rc = 1;
	if (stat(path, &st0) < 0) {
		fprintf(stderr, "error: %s: %s\n", path, strerror(errno));
		goto out;
	}
	if (json_load_file(path, &run, GO_ERR_IO, &err) != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		goto out;
	}
	cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(run, "hosts"))
		if (trim_host(o, run, h, &t, &err) < 0) {
			fprintf(stderr, "error: %s: %s; refused, the file is left as it was\n",
				path, err.buf);
			goto out;
		}
	if (json_write_atomic(path, run, &err) != GO_OK || stat(path, &st1) < 0) {
		fprintf(stderr, "error: %s: %s\n", path, err.buf);
		goto out;
	}
	printf("%s: %d samples_us arrays packed (%d samples, each read back the same), "
	       "%d steps, %d trials and %d builds dropped; %lld -> %lld bytes\n", path, t.arrays,
	       t.samples, t.steps, t.trials, t.builds, (long long)st0.st_size, (long long)st1.st_size);
	rc = 0;
out:
	cJSON_Delete(run);
	strbuf_release(&err);
	return rc;
}

static int usage(const char *why)
{
	fprintf(stderr, "error: %s\nusage: fixtrim [--plain] [--headline] [--problem P]... "
		"[--max KIND=N]... [--trials N] [--builds] RUN_JSON...\n", why);
	return 2;
}

/* a count: digits only */
static int count_arg(const char *s, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 0 || v > 1000000)
		return 0;
	*out = (int)v;
	return 1;
}

int main(int argc, char **argv)
{
	struct opts o = {.trials = -1};
	int i, rc = 0;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *eq;
		if (!strcmp(argv[i], "--plain")) {
			o.plain = 1;
		} else if (!strcmp(argv[i], "--builds")) {
			o.builds = 1;
		} else if (!strcmp(argv[i], "--headline")) {
			o.headline = 1;
		} else if (!strcmp(argv[i], "--problem") && i + 1 < argc) {
			if (o.nproblems == MAXKINDS)
				return usage("--problem: at most 16");
			o.problem[o.nproblems++] = argv[++i];
		} else if (!strcmp(argv[i], "--trials") && i + 1 < argc) {
			if (!count_arg(argv[++i], &o.trials))
				return usage("--trials: expected a count like 2");
		} else if (!strcmp(argv[i], "--max") && i + 1 < argc &&
			   (eq = strchr(argv[i + 1], '=')) && eq > argv[i + 1]) {
			if (o.nkinds == MAXKINDS || !count_arg(eq + 1, &o.max[o.nkinds]))
				return usage("--max: expected KIND=N like sweep=4");
			o.kind[o.nkinds] = xstrdup(argv[++i]);
			o.kind[o.nkinds++][eq - argv[i]] = '\0';
		} else {
			return usage("unknown option or missing value");
		}
	}
	if (i == argc)
		return usage("no run.json named");
	for (; i < argc; i++)
		rc |= trim_file(&o, argv[i]);
	for (i = 0; i < o.nkinds; i++)
		free(o.kind[i]);
	return rc;
}
