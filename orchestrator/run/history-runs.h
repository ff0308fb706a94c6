/* history-runs.h -- the runs `gpuorch history` reads, kept from one pass over the store.
 *
 * A set is filled by hruns_visit (a store_visit over the summaries:
 * runsum_load) and read by timeline_run (history-timeline.h, its
 * timeline_opts.runs) as often as wanted: `gpuorch site` fills one set in
 * its own pass and draws every history page from it, so the store is read
 * once however many figures get a page. Of each complete run (not a dry
 * run) it keeps what history prints of it (id, folder, start, commit,
 * identity, outcome), its experiment's name and slug, its first host's
 * headline (program and problem) and its figures: the timed ones (those
 * with a median), the named ones too with keep_named. Every string is kept
 * once (core/strpool.h) and no samples are: where each figure's lie in
 * samples.txt is noted, and history reads them for the points it draws.
 * Git's commit order is read once a set (hruns_order). */
#ifndef GPUORCH_HISTORY_RUNS_H
#define GPUORCH_HISTORY_RUNS_H

#include "core/strpool.h"
#include "report/compare.h"
#include "store/store.h"

/* a run whose commit git does not know (or that has none) */
#define HRUN_UNKNOWN_ORDER (1 << 30)

struct hrun {
	const char *run_id, *dir;
	const char *started;          /* started_at, may be NULL */
	const char *commit;           /* provenance.git.commit, may be NULL */
	const char *slot;             /* its identity: "c7d6a3e", "c7d6a3e+5be1dc0", "(none)" */
	const char *outcome;          /* may be NULL */
	const char *exp_name, *exp_slug;        /* experiment.name and .slug, may be NULL */
	const char *hl_program, *hl_problem;    /* its first host's headline step; NULL: none */
	int order;                    /* its commit's place in git log (hruns_order), else
				       * HRUN_UNKNOWN_ORDER */
	const char *date, *subject;   /* its commit's, from git; may be NULL */
	struct hfig *figs;            /* its figures (hrun_figure makes one whole) */
	int nfigs;
};

/* A kept figure: what it shares with other runs' figures (host, GPU,
 * program, problem, build, ...: its "shape", kept once a set) and its own
 * values. ~120 bytes, not a whole struct figure's ~300. */
struct hfig {
	const struct figure *shape;   /* the set's; its own values below unset in it */
	const char *run_id, *commit;
	double median_us, min_us, max_us, tflops, gbps, clock_mhz, value;
	int nsamples, ntotal;
	int src;                      /* where the summary held its samples inline (a
				       * store it could not write): its index in
				       * figures_of_run, the summary read again for a
				       * point (never all runs' samples at once); else -1 */
	const char *samples_error;
	double at[2];                 /* its samples in samples.txt: [offset, length];
				       * length 0: none there */
};

struct gitc;
struct hruns {
	const char *experiment;       /* only its runs (name or slug); NULL: every run */
	int keep_named;               /* keep named figures (history --figure) */
	struct hrun *v;               /* in the order visited */
	int n, cap;
	struct strpool pool;
	void *shapes;                 /* the figures' shapes, a tsearch tree */
	char *warnings;               /* the filling pass's warnings (said again by each
				       * history drawn from the set), or NULL */
	/* git's commits (hruns_order) */
	char *root;                   /* ordered by the repository here; NULL: not yet */
	char *order_err;              /* why there is no commit order, or NULL */
	char **lines;                 /* git log's lines (commits point into them) */
	int nl, ncommits;
	struct gitc *commits;
};

void hruns_init(struct hruns *s, const char *experiment, int keep_named);
/* Figure j of run r whole, as figures_of_run made it (its strings the set's;
 * samples_at NULL: r->figs[j].at says where they are). */
void hrun_figure(const struct hrun *r, int j, struct figure *out);
/* A store_visit (ctx: the set): keeps e's run when it is a complete run of
 * the set's experiment. */
int hruns_visit(const struct store_entry *e, void *ctx);
/* Each run's commit place, date and subject from `git log --topo-order
 * --reverse --all` in root, read once per root. NULL, or why runs go by
 * time alone (git's error). */
const char *hruns_order(struct hruns *s, const char *root);
void hruns_release(struct hruns *s);

#endif
