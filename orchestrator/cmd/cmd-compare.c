/* cmd-compare.c -- `gpuorch compare RUN_A RUN_B`: two runs side by side, a verdict per figure. */
#include "cmd/commands.h"
#include "report/compare.h"
#include "report/runsum.h"
#include "store/runread.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "store/store.h"

#include <getopt.h> /* optind, optarg */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char about[] =
	"Put the figures of two runs side by side (RUN_A is the reference, RUN_B the\n"
	"candidate; ids or unique prefixes) with a verdict on each: same, faster,\n"
	"slower, different (correctness, ptxas resources, nvcc or driver changed:\n"
	"named) or insufficient data. Faster/slower is called only when the\n"
	"Mann-Whitney U test on the raw samples of both runs gives p < 0.002 AND\n"
	"the medians differ by more than the factor (docs/reproduce.md). Figures read\n"
	"from a program's own output and kernel medians from kernel_timing steps have\n"
	"one value per run: better or worse when the ratio is beyond the factor in\n"
	"the figure's better direction (docs/byo.md). Timings of different GPU\n"
	"models (or compute capabilities, or SM clock caps) are \"not comparable\",\n"
	"never slower; two instances of one model (other GPU UUIDs) are the same\n"
	"within the instance factor (docs/reproduce.md). The variants of a sweep are\n"
	"figures too: each is paired with the same variant of the other run.\n";

static const struct cmd_option options[] = {
	{ "factor", 'f', "F", NULL, "smallest ratio of medians called a change (default 1.05)" },
	{ "pair", 'p', "PA:PB", NULL, "compare program PA of RUN_A with program PB of RUN_B on\n"
				      "the same problems (RUN_A and RUN_B may be the same run)" },
	{ "output", 'o', "FILE", "@file", "also write the comparison as Markdown to FILE" },
	{ "json", 'j', NULL, NULL, "print the comparison as JSON instead of Markdown" },
	{ "summary", 's', NULL, NULL, "compare the runs' summaries (summary.json and\n"
				      "samples.txt): no raw record is fetched (one here is\n"
				      "read when its summary is stale or older); a summary\n"
				      "has no ptxas resources" },
	{ "reports", 'R', "DIR", "@dir",
	  "where runs are recorded (default ./reports, or $GPUORCH_REPORTS)" },
	{ "cross-gpu", 'X', NULL, NULL, "judge timings of different GPU models too (a verdict on\n"
					"the GPUs, not on the code)" },
	{ "instance-factor", 'I', "F", NULL, "the factor across two instances of one GPU model\n"
					     "(default 1.08, or --factor when larger)" },
	{ NULL, 0, NULL, NULL, NULL },
};

int cmd_parse_factor(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= 1.0) || v > 100)
		return -1;
	*out = v;
	return 0;
}

/* The samples of a summary's figures, from the run's samples.txt. */
static void summary_samples(const char *dir, struct figures *fs)
{
	int i;
	for (i = 0; i < fs->n; i++)
		if (!fs->v[i].samples && fs->v[i].samples_at)
			runsum_read_samples(dir, fs->v[i].samples_at, &fs->v[i].samples,
					    &fs->v[i].nsamples);
}

/* Run id's record (summary: its summary, nothing fetched) and figures; an
 * exit code. */
static int load_run(const char *id, int summary, struct store_entry *e, struct figures *fs)
{
	struct strbuf err = STRBUF_INIT;
	enum go_status st = store_find_with(id, summary ? runsum_load_here : store_load_record, e,
					    &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		strbuf_release(&err);
		return GO_EXIT_USAGE;
	}
	strbuf_release(&err);
	figures_of_run_sweeps(e->run, fs);
	if (summary)
		summary_samples(e->dir, fs);
	return GO_EXIT_OK;
}

/* The Markdown: the two runs, the rule, the table and the counts. */
static void render(struct strbuf *md, const struct cmp_result *r, const struct cmp_opts *o,
		   const cJSON *ra, const cJSON *rb, int summary)
{
	strbuf_addstr(md, "# Comparison\n\n- A (reference): ");
	compare_describe_run(md, ra);
	strbuf_addstr(md, "\n- B (candidate): ");
	compare_describe_run(md, rb);
	strbuf_addf(md, "\n- rule: Mann-Whitney U on the stored samples, p < %g, and the ratio "
		    "of their medians beyond x%.3g (x%.3g across two instances of one GPU model; a "
		    "figure with one value per run: the ratio alone)%s\n",
		    o->alpha, o->factor, o->instance_factor > o->factor ? o->instance_factor :
		    CMP_INSTANCE_FACTOR > o->factor ? CMP_INSTANCE_FACTOR : o->factor,
		    o->cross_gpu ? "; --cross-gpu: different GPU models are judged too" : "");
	if (summary)
		strbuf_addstr(md, "- read from the runs' summaries (summary.json, samples.txt), not "
			      "their raw records: ptxas resources are not in a summary, so a change "
			      "of them is not named\n");
	strbuf_addch(md, '\n');
	compare_render_table(md, r, o, "A median [min-max, n]", "B median [min-max, n]");
	strbuf_addf(md, "\n%d figure%s: %d same, %d faster or better, %d slower or worse, %d different, "
		    "%d insufficient data, %d missing", r->nrows, r->nrows == 1 ? "" : "s",
		    r->count[CMP_SAME], r->count[CMP_FASTER], r->count[CMP_SLOWER],
		    r->count[CMP_DIFFERENT], r->count[CMP_INSUFFICIENT], r->count[CMP_MISSING]);
	if (r->count[CMP_NOT_COMPARABLE])
		strbuf_addf(md, ", %d not comparable", r->count[CMP_NOT_COMPARABLE]);
	strbuf_addf(md, "; %s\n", r->nregressions ? "REGRESSION" : "no regression");
}

/* Print the comparison (JSON or Markdown), write --output; an exit code. */
static int print(const struct cmp_result *r, const struct cmp_opts *o, const struct strbuf *md,
		 int json, const char *output)
{
	struct strbuf err = STRBUF_INIT;
	int rc = GO_EXIT_OK;
	enum go_status st;
	if (json) {
		cJSON *j = compare_result_json(r, o);
		char *text = cJSON_Print(j);
		puts(text);
		free(text);
		cJSON_Delete(j);
	} else {
		fputs(md->buf, stdout);
	}
	if (output) {
		st = fs_write_atomic(output, md->buf, md->len, &err);
		if (st != GO_OK) {
			fprintf(stderr, "error: %s\n", err.buf);
			rc = go_exit_code(st);
		}
	}
	strbuf_release(&err);
	if (rc == GO_EXIT_OK && r->nregressions)
		rc = GO_EXIT_FAILED;
	return rc;
}

static int compare_exec(int argc, char **argv)
{
	struct cmp_opts o;
	struct store_entry ea, eb;
	struct figures fa = { 0 }, fb = { 0 };
	struct cmp_result r;
	struct strbuf md = STRBUF_INIT;
	const char *reports = NULL, *output = NULL;
	char *pair = NULL, *colon;
	int c, i, rc = GO_EXIT_OK, both = 0, json = 0, summary = 0;

	memset(&o, 0, sizeof(o));
	memset(&ea, 0, sizeof(ea));
	memset(&eb, 0, sizeof(eb));
	o.alpha = STATS_DEFAULT_ALPHA;
	o.factor = STATS_DEFAULT_FACTOR;
	optind = 1;
	while ((c = cmd_getopt(&cmd_compare_entry, argc, argv)) != -1) {
		switch (c) {
		case 'f':
			if (cmd_parse_factor(optarg, &o.factor) < 0)
				return cmd_usage_error(&cmd_compare_entry, "--factor: '%s' is not a "
						       "ratio of at least 1 (e.g. 1.05)", optarg);
			break;
		case 'X': o.cross_gpu = 1; break;
		case 'I':
			if (cmd_parse_factor(optarg, &o.instance_factor) < 0)
				return cmd_usage_error(&cmd_compare_entry, "--instance-factor: '%s' is "
						       "not a ratio of at least 1 (e.g. 1.08)", optarg);
			break;
		case 'p': pair = optarg; break;
		case 'o': output = optarg; break;
		case 'j': json = 1; break;
		case 's': summary = 1; break;
		case 'R': reports = optarg; break;
		default:
			return cmd_option_failed(&cmd_compare_entry, c);
		}
	}
	if (argc - optind != 2)
		return cmd_usage_error(&cmd_compare_entry, "give two run ids (got %d)",
				       argc - optind);
	if (pair) {
		colon = strchr(pair, ':');
		if (!colon || colon == pair || !colon[1])
			return cmd_usage_error(&cmd_compare_entry, "--pair: '%s' is not "
					       "PROG_A:PROG_B", pair);
		pair = xstrdup(pair);
		colon = strchr(pair, ':');
		*colon = '\0';
		o.pair_a = pair;
		o.pair_b = colon + 1;
	}
	cmd_set_reports(reports);
	rc = load_run(argv[optind], summary, &ea, &fa);
	if (rc == GO_EXIT_OK)
		rc = load_run(argv[optind + 1], summary, &eb, &fb);
	if (rc != GO_EXIT_OK)
		goto out;
	compare_runs(&fa, &fb, &o, &r);
	for (i = 0; i < r.nrows; i++)
		both += r.rows[i].a && r.rows[i].b;
	if (!both) {
		fprintf(stderr, "error: runs '%s' and '%s' measured no %s in common; %s\n",
			ea.run_id, eb.run_id, o.pair_a ? "problem with those programs"
							: "program on the same problem",
			o.pair_a ? "check the program names with 'gpuorch runs'"
				 : "to compare two programs, give --pair PROG_A:PROG_B");
		rc = GO_EXIT_USAGE;
	} else {
		render(&md, &r, &o, ea.run, eb.run, summary);
		rc = print(&r, &o, &md, json, output);
	}
	compare_result_release(&r);
out:
	figures_release(&fa);
	figures_release(&fb);
	store_entry_release(&ea);
	store_entry_release(&eb);
	strbuf_release(&md);
	free(pair);
	return rc;
}

const struct cmd_entry cmd_compare_entry = {
	.name = "compare",
	.synopsis = "RUN_A RUN_B [options]",
	.about = about,
	.options = options,
	.after = "exit: 0 no regression, 1 a figure is slower (worse) beyond the factor or its\n"
		 "      correctness got worse, 2 bad input (unknown run, nothing in common)\n",
	.summary = "two runs side by side, with a verdict on each figure",
	.exec = compare_exec,
	.needs = CMD_NEEDS_REPORTS,
};
