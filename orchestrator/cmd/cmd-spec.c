/* cmd-spec.c -- `gpuorch spec check FILE`: validate a spec without any host:
 * the whole spec (spec/spec.c) and what its 'sources' select (remote/pack.c),
 * exactly as `gpuorch run` checks them before connecting; with --hosts, its
 * steps' "gpus" against the inventory (remote/gpuslots.h). */
#include "cmd/commands.h"
#include "core/error.h"
#include "core/jsonutil.h"
#include "core/strbuf.h"
#include "remote/gpuslots.h"
#include "remote/pack.h"
#include "spec/spec.h"

#include <getopt.h> /* optind, optarg */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char about[] =
	"Check an experiment spec completely, with no host: its keys and values\n"
	"(docs/spec.md), the files its 'sources' select through git, and that\n"
	"every program's files are among them. Prints a summary on success\n"
	"(with --json, one JSON object: docs/schema/cli-spec-check.schema.json).\n";

static const struct cmd_option options[] = {
	{ "root", 'o', "DIR", "@dir", "repository root the spec's paths are relative to (default .)" },
	{ "hosts", 'H', "FILE", "@file", "also check the spec against this inventory: no step asks for\n"
	  "more GPUs (\"gpus\": N) than a host runs steps on" },
	{ "json", 'j', NULL, NULL, "print the summary as JSON (docs/schema/cli-spec-check.schema.json)" },
	{ NULL, 0, NULL, NULL, NULL },
};

/* The summary, as text or as JSON: the same numbers. */
static void print_summary(const char *path, const struct spec *s, int nfiles, size_t bytes,
			  int hosts_checked, int json)
{
	cJSON *doc;

	if (!json) {
		printf("%s: valid: %d program%s, %d problem%s, %d step%s; 'sources' select %d "
		       "file%s (%zu bytes archive)\n", path, s->nprograms,
		       s->nprograms == 1 ? "" : "s", s->nproblems, s->nproblems == 1 ? "" : "s",
		       s->nsteps, s->nsteps == 1 ? "" : "s", nfiles, nfiles == 1 ? "" : "s", bytes);
		return;
	}
	doc = cmd_json_doc("gpuorch.cli.spec-check/1");
	json_add_str(doc, "spec", path);
	json_add_bool(doc, "valid", 1);
	json_add_num(doc, "programs", s->nprograms);
	json_add_num(doc, "problems", s->nproblems);
	json_add_num(doc, "steps", s->nsteps);
	json_add_num(doc, "files", nfiles);
	json_add_num(doc, "archive_bytes", (double)bytes);
	json_add_bool(doc, "hosts_checked", hosts_checked);
	cmd_json_print(doc);
}

static int spec_check_main(const char *path, const char *root, const char *hosts_path, int json)
{
	struct strbuf err = STRBUF_INIT;
	struct hosts *hs = NULL;
	struct spec *s = NULL;
	char **files = NULL;
	struct pack pk;
	enum go_status st;
	int rc = 0, nfiles = 0;

	memset(&pk, 0, sizeof(pk));
	st = spec_load(path, root, 1, &s, &err);
	if (st == GO_OK)
		st = pack_resolve_sources(root, NULL, s->sources, &files, &err);
	if (st == GO_OK)
		st = spec_check_selected(s, files, &err);
	if (st == GO_OK)
		st = pack_worktree(root, files, &pk, &err);
	if (st == GO_OK && hosts_path)
		st = hosts_load(hosts_path, &hs, &err);
	if (st == GO_OK && hs)
		st = gpuslots_check_spec(s, hs, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = go_exit_code(st == GO_ERR_NOT_FOUND ? GO_ERR_SPEC : st);
	} else {
		while (files[nfiles])
			nfiles++;
		print_summary(path, s, nfiles, pk.len, hs != NULL, json);
	}
	pack_release(&pk);
	if (hs)
		hosts_free(hs);
	pack_free_files(files);
	spec_free(s);
	strbuf_release(&err);
	return rc;
}

static int cmd_spec(int argc, char **argv)
{
	const char *root = ".", *hosts_path = NULL;
	int c, json = 0;

	if (argc < 2 || strcmp(argv[1], "check"))
		return cmd_usage_error(&cmd_spec_entry, "%s", argc < 2 ? "say what to do: 'spec check FILE'"
							     : "unknown 'spec' subcommand");
	argc--;
	argv++;
	optind = 1;
	while ((c = cmd_getopt(&cmd_spec_entry, argc, argv)) != -1) {
		switch (c) {
		case 'o': root = optarg; break;
		case 'H': hosts_path = optarg; break;
		case 'j': json = 1; break;
		default:
			return cmd_option_failed(&cmd_spec_entry, c);
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error(&cmd_spec_entry, "give one spec FILE");
	return spec_check_main(argv[optind], root, hosts_path, json);
}

const struct cmd_entry cmd_spec_entry = {
	.name = "spec",
	.synopsis = "check FILE [options]",
	.about = about,
	.options = options,
	.after = "exit: 0 valid, 2 invalid (FILE: 'JSON.PATH': what is wrong)\n",
	.summary = "check an experiment spec without any host",
	.exec = cmd_spec,
	.needs = 0, /* neither SSH nor the reports directory */
	.verbs = "check",
};
