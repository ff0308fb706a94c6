/* cmd-hosts.c -- `gpuorch hosts check|list|up|down|status|clean|disconnect`:
 * the options and the verb; is each host reachable, and what does it have;
 * its cloud instance (cmd-hosts-cloud.c); what gpuorch left on it, its
 * keeper and execds, the inventory (cmd-hosts-clean.c). */
#include "remote/diskspace.h"
#include "cmd/commands.h"
#include "cmd/cmd-hosts-cloud.h"
#include "cmd/cmd-hosts-clean.h"
#include "cmd/run-json.h"
#include "core/error.h"
#include "transport/hosts.h"
#include "core/jsonutil.h"
#include "remote/probe.h"
#include "sched/slurm-check.h"

#include <getopt.h> /* optind, optarg */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char about[] =
	"    check   connect to every host in parallel and show its GPU, compute\n"
	"            capability, driver, clocks, and where nvcc, ncu and\n"
	"            compute-sanitizer are (found even when not on the SSH PATH)\n"
	"            for a Slurm cluster entry: the login node, slurmrestd reachable,\n"
	"            its API version, the token, the partition, nodes and GPUs free/total\n"
	"    list    show the inventory as gpuorch resolved it (ssh_config aliases too)\n"
	"    up      start each host's cloud instance, wait for SSH, arm its idle guard\n"
	"    down    stop each host's cloud instance and wait until it is stopped\n"
	"    status  each instance's state and the cost accrued since gpuorch started it\n"
	"    clean   remove from each host's work directory the runs, sources, builds\n"
	"            and shipped files no run has used for DAYS (default 14; a live\n"
	"            run's are always kept), and stop its running execds; --dry-run\n"
	"            says what it would remove and stop\n"
	"    disconnect  stop each host's session keeper (\"persist_s\", docs/hosts.md)\n"
	"            and the execds running in its work directory: the next run\n"
	"            connects and starts them anew\n";

static const struct cmd_option options[] = {
	{ "hosts", 'H', "FILE", "@file", "hosts inventory (docs/hosts.md)" },
	{ "host", 'n', "NAME", NULL, "only this host (repeatable)" },
	CMD_TRACE_OPTION,
	{ "accept-new-host-key", 'a', NULL, NULL,
	  "trust and record an unknown host key (never a changed one)" },
	{ "json", 'j', NULL, NULL, "check: print the hosts as JSON; up, down, status: one JSON\n"
				    "object (docs/schema/cli-hosts.schema.json), the text on stderr;\n"
				    "clean, disconnect, list: cli-hosts-clean, -disconnect,\n"
				    "-list.schema.json" },
	{ "older-than", 'o', "DAYS", NULL, "clean: what no run used for DAYS (default 14)" },
	{ "dry-run", 'd', NULL, NULL, "clean: say what would be removed and stopped, do nothing" },
	{ NULL, 0, NULL, NULL, NULL },
};

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

static void print_tool(const char *name, const struct tool_info *ti)
{
	if (ti->path)
		printf("    %-18s %s  %s\n", name, or_dash(ti->version), ti->path);
	else
		printf("    %-18s not found\n", name);
}

static int uses(const struct host *h, int index)
{
	int i;
	for (i = 0; i < h->ngpus; i++)
		if (h->gpus[i] == index)
			return 1;
	return !h->ngpus;
}

/* every GPU of the host (the probe's list), and which the entry runs on */
static void print_slots(const struct host *h, const struct host_info *hi)
{
	int i;
	for (i = 0; i < hi->nslots; i++) {
		const struct gpu_slot *g = &hi->slots[i];
		printf("    %-18s %d: %s, %s, %lld MiB, max SM clock %d MHz%s\n", i ? "" : "gpus",
		       g->index, or_dash(g->name), or_dash(g->uuid), g->mem_mib,
		       g->max_sm_clock_mhz, uses(h, g->index) ? ""
		       : " (not used: not in the entry's \"gpus\")");
	}
}

static void print_check(const struct host_probe *t)
{
	const struct host_info *hi = &t->info;
	int k;
	printf("%s  %s@%s:%d  %s  (%.1f s)\n", t->h->name, t->h->user, t->h->address, t->h->port,
	       t->st == GO_OK ? "ok" : "FAILED", t->seconds);
	if (t->st != GO_OK) {
		printf("    error: %s\n", t->err.buf);
		return;
	}
	printf("    %-18s %s\n", "host key", t->fingerprint);
	if (t->notice)
		printf("    note: %s\n", t->notice);
	printf("    %-18s %s, %s\n", "host", or_dash(hi->hostname), or_dash(hi->kernel));
	if (hi->has_gpu) {
		char *arch = probe_cc_to_arch(hi->compute_cap);
		printf("    %-18s %s, cc %s (%s), driver %s\n", "gpu", or_dash(hi->gpu_name),
		       or_dash(hi->compute_cap), or_dash(t->h->arch ? t->h->arch : arch),
		       or_dash(hi->driver));
		printf("    %-18s %s, %lld MiB, SM clock %d / max %d MHz, memory %d MHz\n", "",
		       or_dash(hi->gpu_uuid), hi->gpu_mem_mib, hi->sm_clock_mhz,
		       hi->max_sm_clock_mhz, hi->mem_clock_mhz);
		print_slots(t->h, hi);
		free(arch);
	} else {
		printf("    %-18s none: %s (builds run compile-only)\n", "gpu", or_dash(hi->gpu_reason));
	}
	print_tool("nvcc", &hi->nvcc);
	print_tool("ncu", &hi->ncu);
	print_tool("compute-sanitizer", &hi->sanitizer);
	print_tool("python3", &hi->python);
	for (k = 0; k < ENV_NTOOLS; k++) {
		if (t->build_tools[k].path)
			printf("    %-18s %s  %s%s\n", env_tools[k], or_dash(t->build_tools[k].version),
			       t->build_tools[k].path, t->h->nenv ? "  (with the host's env)" : "");
		else
			printf("    %-18s absent%s\n", env_tools[k], t->h->nenv ? " (with the host's env)" : "");
	}
	printf("    %-18s %s\n", "torch", hi->torch_version ? hi->torch_version : "not importable");
	printf("    %-18s %.1f GiB\n", "disk free", (double)hi->disk_free_kib / 1048576.0);
	if (hi->execds_running > 0)
		printf("    %-18s %d running (each leaves after execd_idle_s idle; "
		       "'gpuorch hosts disconnect' stops them now)\n", "execds", hi->execds_running);
	if (hi->disk_free_kib >= 0 && hi->disk_free_kib < DISK_LOW_KIB)
		printf("    warning: only %lld KiB free in the work directory: a run needs about "
		       "twice its sources, %d MiB per build and %d MiB per step there, and does not "
		       "start without it (docs/runner.md, \"Disk\"); 'gpuorch hosts clean' frees "
		       "old builds and sources\n", hi->disk_free_kib, DISK_BUILD_KIB / 1024,
		       DISK_STEP_KIB / 1024);
	if (!hi->has_flock || !hi->has_timeout || !hi->has_setsid)
		printf("    warning: missing %s%s%s: steps cannot run detached and bounded\n",
		       hi->has_flock ? "" : "flock ", hi->has_timeout ? "" : "timeout ",
		       hi->has_setsid ? "" : "setsid");
}

/* hosts check --json: a plain host's entry */
static cJSON *check_json(const struct host_probe *pt)
{
	cJSON *o = pt->st == GO_OK ? probe_to_json(&pt->info) : cJSON_CreateObject(), *bt;
	int k;
	json_add_str(o, "name", pt->h->name);
	json_add_str(o, "status", pt->st == GO_OK ? "ok" : "failed");
	json_add_str(o, "error", pt->st == GO_OK ? NULL : pt->err.buf);
	json_add_str(o, "fingerprint", pt->fingerprint);
	if (pt->st != GO_OK)
		return o;
	bt = json_add_obj(o, "build_tools");   /* under the host's "env"; path null: absent */
	for (k = 0; k < ENV_NTOOLS; k++) {
		cJSON *t = json_add_obj(bt, env_tools[k]);
		json_add_str(t, "path", pt->build_tools[k].path);
		json_add_str(t, "version", pt->build_tools[k].version);
	}
	return o;
}

/* An option given to a verb that does not take it: what to say, else NULL. */
static const char *misplaced_option(const char *verb, int dry_run, int older_than)
{
	if (strcmp(verb, "clean") && (dry_run || older_than))
		return "--older-than and --dry-run are options of 'hosts clean'";
	return NULL;   /* every verb takes --json */
}

/* clean, disconnect; with --json their text goes to stderr and the
 * document (gpuorch.cli.hosts-clean/1, hosts-disconnect/1) to stdout */
static int clean_verb(const char *verb, struct hosts *hs, int accept_new, double days,
		      int dry_run, int json)
{
	cJSON *doc;
	int rc, saved;
	int clean = !strcmp(verb, "clean");

	if (!json)
		return clean ? hosts_clean(hs, accept_new, days, dry_run, NULL)
			     : hosts_disconnect(hs, accept_new, NULL);
	doc = cmd_json_doc(clean ? "gpuorch.cli.hosts-clean/1" : "gpuorch.cli.hosts-disconnect/1");
	if (!clean)
		json_add_arr(doc, "hosts");
	saved = cmd_json_stdout_begin();
	rc = clean ? hosts_clean(hs, accept_new, days, dry_run, doc)
		   : hosts_disconnect(hs, accept_new, doc);
	cmd_json_stdout_end(saved);
	json_add_num(doc, "exit_code", rc);
	cmd_json_print(doc);
	return rc;
}

/* up, down, status; with --json their text goes to stderr and the
 * gpuorch.cli.hosts/1 document to stdout */
static int cloud_verb(const char *verb, struct hosts *hs, int accept_new, int json)
{
	cJSON *doc;
	int rc, saved;

	if (!json)
		return hosts_cloud_verb(verb, hs, accept_new, NULL);
	doc = cmd_json_doc("gpuorch.cli.hosts/1");
	json_add_str(doc, "verb", verb);
	saved = cmd_json_stdout_begin();
	rc = hosts_cloud_verb(verb, hs, accept_new, doc);
	cmd_json_stdout_end(saved);
	json_add_num(doc, "exit_code", rc);
	if (cJSON_GetObjectItem(doc, "hosts"))
		cmd_json_print(doc);
	else
		cJSON_Delete(doc);   /* the inventory's instances could not be read: said on stderr */
	return rc;
}

static int hosts_exec(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	struct hosts *hs = NULL;
	char **names = xcalloc((size_t)argc + 1, sizeof(char *));
	const char *verb, *path = NULL, *why;
	int nnames = 0, accept_new = 0, as_json = 0, dry_run = 0, c, i, rc = 0, nok = 0;
	double days = 14;
	char *end;
	enum go_status st;

	if (argc < 2) {
		free(names);
		return cmd_usage_error(&cmd_hosts_entry,
				       "no verb given: 'check', 'list', 'up', 'down', 'status', 'clean' "
				       "or 'disconnect'");
	}
	verb = argv[1];
	if (strcmp(verb, "check") && strcmp(verb, "list") && strcmp(verb, "up") &&
	    strcmp(verb, "down") && strcmp(verb, "status") && strcmp(verb, "clean") &&
	    strcmp(verb, "disconnect")) {
		free(names);
		return cmd_usage_error(&cmd_hosts_entry, "unknown verb '%s'", verb);
	}
	optind = 2;
	while ((c = cmd_getopt(&cmd_hosts_entry, argc, argv)) != -1) {
		switch (c) {
		case 'H': path = optarg; break;
		case 'n': names[nnames++] = optarg; break;
		case 'a': accept_new = 1; break;
		case 'j': as_json = 1; break;
		case 'd': dry_run = 1; break;
		case 'o':
			days = strtod(optarg, &end);
			if (end == optarg || *end || !(days > 0) || days > 36500) {
				free(names);
				return cmd_usage_error(&cmd_hosts_entry,
						       "--older-than '%s': expected a number of days "
						       "above 0 (e.g. 14 or 0.5)", optarg);
			}
			break;
		default:
			free(names);
			return cmd_option_failed(&cmd_hosts_entry, c);
		}
	}
	if (optind < argc) {
		free(names);
		return cmd_usage_error(&cmd_hosts_entry, "unexpected argument '%s'", argv[optind]);
	}
	if (!path) {
		free(names);
		return cmd_usage_error(&cmd_hosts_entry, "no hosts inventory: give --hosts FILE");
	}
	st = hosts_load(path, &hs, &err);
	if (st == GO_OK && nnames)
		st = hosts_select(hs, names, nnames, &err);
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = go_exit_code(st);
		goto out;
	}
	if ((why = misplaced_option(verb, dry_run, days != 14))) {
		fprintf(stderr, "error: %s\n", why);
		rc = GO_EXIT_USAGE;
		goto out;
	}
	if (!strcmp(verb, "clean") || !strcmp(verb, "disconnect")) {
		rc = clean_verb(verb, hs, accept_new, days, dry_run, as_json);
		goto out;
	}
	if (!strcmp(verb, "up") || !strcmp(verb, "down") || !strcmp(verb, "status")) {
		rc = cloud_verb(verb, hs, accept_new, as_json);
		goto out;
	}
	if (!strcmp(verb, "list")) {
		hosts_list(hs, as_json);
		goto out;
	} else {
		/* plain hosts are probed in parallel; clusters checked one by one */
		struct hosts plain = { hs->path, xcalloc((size_t)hs->n + 1, sizeof(struct host)), 0 };
		struct host_probe *t;
		const struct host_probe *pt;
		cJSON *arr = cJSON_CreateArray();
		int k = 0;
		for (i = 0; i < hs->n; i++)
			if (!hs->v[i].slurm)
				plain.v[plain.n++] = hs->v[i];
		t = plain.n ? probe_inventory(&plain, accept_new, 1) : NULL;
		for (i = 0; i < hs->n; i++) {
			if (hs->v[i].slurm) {
				struct slurm_check sc;
				slurm_check_run(&hs->v[i], accept_new, &sc);
				if (sc.st == GO_OK)
					nok++;
				if (as_json)
					cJSON_AddItemToArray(arr, slurm_check_json(&sc));
				else
					slurm_check_print(&sc);
				slurm_check_release(&sc);
				continue;
			}
			pt = &t[k++];
			if (pt->st == GO_OK)
				nok++;
			if (as_json)
				cJSON_AddItemToArray(arr, check_json(pt));
			else
				print_check(pt);
		}
		if (as_json) {
			char *text = cJSON_Print(arr);
			if (text)
				puts(text);
			free(text);
		}
		cJSON_Delete(arr);
		if (t)
			probe_inventory_release(t, plain.n);
		free(plain.v);
		rc = nok == hs->n ? GO_EXIT_OK : nok == 0 ? GO_EXIT_INFRA : GO_EXIT_FAILED;
	}
out:
	hosts_free(hs);
	free(names);
	strbuf_release(&err);
	return rc;
}

const struct cmd_entry cmd_hosts_entry = {
	.name = "hosts",
	.synopsis = "check --hosts FILE [--host NAME ...] [--accept-new-host-key] [--json]\n"
		    "list --hosts FILE [--json]\n"
		    "up|down|status --hosts FILE [--host NAME ...] [--accept-new-host-key] [--json]\n"
		    "clean --hosts FILE [--host NAME ...] [--older-than DAYS] [--dry-run] [--json]\n"
		    "disconnect --hosts FILE [--host NAME ...] [--json]",
	.about = about,
	.options = options,
	.after = "exit: 0 every host usable, 1 some host not, 2 bad input, 3 no host usable\n",
	.summary = "check hosts, start/stop their cloud instances, clean what runs left",
	.exec = hosts_exec,
	.needs = CMD_NEEDS_SSH,
	.verbs = "check list up down status clean disconnect",
};
