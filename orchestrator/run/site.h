/* site.h -- `gpuorch site`: a static HTML site of the store's runs (docs/site.md).
 *
 * site_write reads every run's summary once (report/runsum.h), writes
 *   index.html + data/runs.js         every run, filtered and paged in the browser
 *   run/SLUG/RUN-ID/index.html        its report.md as HTML, its charts/ beside it,
 *                  /figures.js        its figures, for the compare page
 *   history/SLUG.html + data/history-SLUG.js   each experiment's figure across
 *                                     commits (run/history-timeline.h's points)
 *   compare.html                      any two runs picked in the index
 *   site.js, site.css                 (run/site.js, run/site.css, embedded)
 * into a new folder beside OUT, then puts it in OUT's place in one rename. */
#ifndef GPUORCH_SITE_H
#define GPUORCH_SITE_H

#include <cJSON.h>

struct site_opts {
	const char *out;    /* the site's folder (made, or a previous site replaced) */
	const char *root;   /* the git repository that orders commits; NULL: "." */
	int quiet;          /* no summary line on stdout */
	int every_figure;   /* also a history page per timed figure of each experiment */
	cJSON *json;        /* non-NULL: the summary goes into this object (out, index,
			     * runs, experiments, left_out), not on stdout */
};

/* Returns the exit code (docs/exit-codes.md); errors are printed on stderr. */
int site_write(const struct site_opts *o);

#endif
