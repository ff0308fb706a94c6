/* cmd-hosts-clean.c -- `gpuorch hosts clean|disconnect|list`: what gpuorch
 * left on each host removed, its session keeper and execds stopped, the
 * inventory shown; each as text, or as a --json document made from the
 * same values (cmd-hosts.c parses the options and picks the verb). */
#include "cmd/cmd-hosts-clean.h"
#include "cmd/commands.h"
#include "core/error.h"
#include "core/jsonutil.h"
#include "core/strbuf.h"
#include "remote/hostclean.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* one host's entry in doc's "hosts" (NULL without --json) */
static cJSON *host_json(cJSON *doc, const char *name, const char *status, const char *error)
{
	cJSON *hosts, *o;
	if (!doc)
		return NULL;
	hosts = cJSON_GetObjectItem(doc, "hosts");
	o = cJSON_CreateObject();
	json_add_str(o, "name", name);
	json_add_str(o, "status", status);
	json_add_str(o, "error", error);
	cJSON_AddItemToArray(hosts, o);
	return o;
}

/* clean --json: what a host had removed (or would have), the log's lines */
static void clean_json(cJSON *o, const char *workdir, const struct hostclean_result *r,
		       const struct strbuf *log)
{
	cJSON *lines;
	const char *p = log->len ? log->buf : NULL;
	if (!o)
		return;
	json_add_str(o, "workdir", workdir);
	json_add_num(o, "runs", r->runs);
	json_add_num(o, "sources", r->contents);
	json_add_num(o, "builds", r->builds);
	json_add_num(o, "shipped_files", r->blobs);
	json_add_num(o, "objects", r->objects);
	json_add_num(o, "kib", (double)r->kib);
	json_add_bool(o, "kept_live", r->kept_live);
	json_add_num(o, "old_execd_builds", r->execds);
	json_add_num(o, "old_agent_builds", r->agents);
	json_add_num(o, "execds_stopped", r->execds_stopped);
	lines = json_add_arr(o, "log");
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrfmt("%.*s", (int)len, p);
		if (len)
			cJSON_AddItemToArray(lines, cJSON_CreateString(line));
		free(line);
		p += len + (nl != NULL);
	}
}

static void clean_print(const char *name, const char *w, const struct hostclean_result *r,
			struct strbuf *log, double days, int dry_run)
{
	char *line, *save = NULL;
	printf("%s  %s %s: %d run%s, %d source tree%s, %d build%s, %d shipped file%s, "
	       "%d object%s, %.1f MiB (unused for %g day%s)%s%s\n", name,
	       dry_run ? "would remove from" : "removed from", w, r->runs, r->runs == 1 ? "" : "s",
	       r->contents, r->contents == 1 ? "" : "s", r->builds, r->builds == 1 ? "" : "s",
	       r->blobs, r->blobs == 1 ? "" : "s", r->objects, r->objects == 1 ? "" : "s",
	       (double)r->kib / 1024.0, days,
	       days == 1 ? "" : "s", r->kept_live ? "; kept the sources of a live run" : "",
	       r->execds && r->agents ? "; and old execd and agent builds (see below)"
	       : r->execds ? "; and old execd builds (see below)"
	       : r->agents ? "; and old agent builds (see below)" : "");
	if (r->execds_stopped)
		printf("    %s %d running execd%s (each exits once its commands end)\n",
		       dry_run ? "would stop" : "stopped", r->execds_stopped,
		       r->execds_stopped == 1 ? "" : "s");
	if (!log->len)
		return;
	/* cuts log up: clean_json reads it first */
	for (line = strtok_r(log->buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		printf("    %s\n", line);
}

/* one host after another (one command each) */
int hosts_clean(const struct hosts *hs, int accept_new, double days, int dry_run, cJSON *doc)
{
	long minutes = (long)(days * 1440.0 + 0.5);
	int i, nok = 0;
	if (minutes < 1)
		minutes = 1;
	if (doc) {
		json_add_bool(doc, "dry_run", dry_run);
		json_add_num(doc, "older_than_days", days);
		json_add_arr(doc, "hosts");   /* no host: an empty list */
	}
	for (i = 0; i < hs->n; i++) {
		const struct host *h = &hs->v[i];
		struct strbuf err = STRBUF_INIT, log = STRBUF_INIT;
		struct hostclean_result r;
		struct ssh_conn *conn = NULL;
		struct ssh_opts o;
		char *w;
		enum go_status st;
		if (h->slurm) {
			printf("%s  cluster: not cleaned (its shared work directory is laid out per job; "
			       "clean it on the login node)\n", h->name);
			host_json(doc, h->name, "cluster", NULL);
			nok++;
			continue;
		}
		w = host_workdir(h, NULL);
		host_ssh_opts(h, accept_new, &o);
		st = ssh_connect(&o, &conn, &err);
		if (st == GO_OK)
			st = hostclean_run(conn, w, minutes, dry_run, &r, &log, &err);
		if (conn)
			ssh_disconnect(conn);
		if (st != GO_OK) {
			printf("%s  FAILED: %s\n", h->name, err.buf);
			host_json(doc, h->name, "failed", err.buf);
		} else {
			nok++;
			clean_json(host_json(doc, h->name, "ok", NULL), w, &r, &log);
			clean_print(h->name, w, &r, &log, days, dry_run);
		}
		free(w);
		strbuf_release(&err);
		strbuf_release(&log);
	}
	return nok == hs->n ? GO_EXIT_OK : nok == 0 ? GO_EXIT_INFRA : GO_EXIT_FAILED;
}

/* each host's session keeper leaves, and the execds under its work
 * directory stop (none running is no error) */
int hosts_disconnect(const struct hosts *hs, int accept_new, cJSON *doc)
{
	int i, failed = 0;
	for (i = 0; i < hs->n; i++) {
		const struct host *h = &hs->v[i];
		struct strbuf err = STRBUF_INIT;
		struct ssh_conn *conn = NULL;
		struct ssh_opts o;
		char *w, *keeper = NULL;
		int n = 0, kept;
		cJSON *e;
		if (h->slurm) {
			printf("%s  cluster: no session keeper, no execd\n", h->name);
			host_json(doc, h->name, "cluster", NULL);
			continue;
		}
		host_ssh_opts(h, accept_new, &o);
		kept = ssh_keeper_stop(&o, &err) == GO_OK;
		if (kept)
			printf("%s  session keeper stopped\n", h->name);
		else
			printf("%s  %s\n", h->name, (keeper = xstrdup(err.buf)));
		strbuf_reset(&err);
		/* a connection of its own, not through a keeper, nor starting one */
		o.persist_s = 0;
		w = host_workdir(h, NULL);
		if (ssh_connect(&o, &conn, &err) == GO_OK && hostclean_execds(conn, w, 1, &n, &err) == GO_OK) {
			printf("%s  %d execd%s stopped\n", h->name, n, n == 1 ? "" : "s");
			e = host_json(doc, h->name, "ok", NULL);
		} else {
			printf("%s  execds: FAILED: %s\n", h->name, err.buf);
			e = host_json(doc, h->name, "failed", err.buf);
			failed++;
		}
		if (e) {
			/* not stopped: none was running, or it could not be reached (said) */
			json_add_bool(e, "keeper_stopped", kept);
			json_add_str(e, "keeper", kept ? NULL : keeper);
			json_add_num(e, "execds_stopped", n);
		}
		if (conn)
			ssh_disconnect(conn);
		free(w);
		free(keeper);
		strbuf_release(&err);
	}
	/* clusters are not counted as failed: they have neither */
	return !failed ? GO_EXIT_OK : failed == hs->n ? GO_EXIT_INFRA : GO_EXIT_FAILED;
}

static cJSON *list_json(const struct host *h)
{
	cJSON *o = cJSON_CreateObject(), *c;
	json_add_str(o, "name", h->name);
	json_add_str(o, "user", h->user);
	json_add_str(o, "address", h->address);
	json_add_num(o, "port", h->port);
	json_add_str(o, "identity", h->use_agent ? NULL : h->identity);
	json_add_bool(o, "agent", h->use_agent);
	json_add_str(o, "known_hosts", h->known_hosts);
	json_add_str(o, "workdir", h->workdir);
	json_add_str(o, "arch", h->arch);
	if (h->slurm) {
		c = json_add_obj(o, "slurm");
		json_add_str(c, "url", h->slurm->url);
		json_add_str(c, "partition", h->slurm->partition);
	} else {
		cJSON_AddNullToObject(o, "slurm");
	}
	return o;
}

void hosts_list(const struct hosts *hs, int json)
{
	cJSON *doc = json ? cmd_json_doc("gpuorch.cli.hosts-list/1") : NULL, *arr = NULL;
	int i;
	if (doc) {
		json_add_str(doc, "inventory", hs->path);
		arr = json_add_arr(doc, "hosts");
	}
	for (i = 0; i < hs->n; i++) {
		const struct host *h = &hs->v[i];
		if (arr) {
			cJSON_AddItemToArray(arr, list_json(h));
			continue;
		}
		if (h->slurm)
			printf("%s  cluster: slurmrestd %s  partition %s  login", h->name,
			       h->slurm->url, h->slurm->partition);
		else
			printf("%s", h->name);
		printf("  %s@%s:%d  key %s  known_hosts %s  workdir %s%s%s\n",
		       h->user, h->address, h->port, h->use_agent ? "(agent)" : h->identity,
		       h->known_hosts, or_dash(h->workdir), h->arch ? "  arch " : "",
		       h->arch ? h->arch : "");
	}
	if (doc)
		cmd_json_print(doc);
}
