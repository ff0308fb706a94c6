/* probe.c -- what a host has: GPU, driver, clocks, CUDA tools and their paths.
 *
 * DESIGN
 * One constant POSIX sh script runs on the host with its parameters as
 * quoted assignments in front of it, and prints KEY=VALUE lines (values on
 * one line): probe-sig.sh (the host's signature, alone the start command's
 * check of a kept probe) then probe.sh, both embedded in the binary
 * (probe-script.h). All interpretation happens here, in C, where it can be
 * unit tested: parse_output() turns the lines into a struct host_info.
 * Tools are looked up on PATH, then CUDA_HOME/bin, /usr/local/cuda/bin, the
 * newest /usr/local/cuda-* /bin and the newest
 * /opt/nvidia/nsight-compute/<version>: a non-login SSH session usually has a
 * PATH without CUDA. */
#include "remote/probe.h"
#include "remote/probe-script.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/parallel.h"
#include "core/timeutil.h"
#include "core/trace.h"
#include "core/banned.h"

#define PROBE_TIMEOUT_MS 90000

/* ------------------------------------------------------------------ */
/* parsing                                                             */

static char *dup_or_null(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

void probe_slots_release(struct host_info *hi)
{
	for (int i = 0; i < hi->nslots; i++) {
		free(hi->slots[i].uuid);
		free(hi->slots[i].name);
	}
	free(hi->slots);
	hi->slots = NULL;
	hi->nslots = 0;
}

static void trim_in_place(char *s)
{
	size_t n = strlen(s), i = 0;
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (s[i] && isspace((unsigned char)s[i]))
		i++;
	if (i)
		memmove(s, s + i, n - i + 1);
}

/* "Cuda compilation tools, release 13.0, V13.0.88 Build cuda_13.0.r13.0/..."
 * -> "13.0.88"; falls back to the release number "13.0". */
static char *parse_nvcc_version(const char *s)
{
	const char *p = s;
	size_t n;

	while ((p = strstr(p, "V")) != NULL) {
		if ((p == s || p[-1] == ' ' || p[-1] == ',') && isdigit((unsigned char)p[1])) {
			p++;
			n = strspn(p, "0123456789.");
			while (n && p[n - 1] == '.')
				n--;
			return xstrfmt("%.*s", (int)n, p);
		}
		p++;
	}
	p = strstr(s, "release ");
	if (p) {
		p += 8;
		n = strspn(p, "0123456789.");
		while (n && p[n - 1] == '.')
			n--;
		if (n)
			return xstrfmt("%.*s", (int)n, p);
	}
	return dup_or_null(s);
}

/* "Version 2025.3.0.0 (build 36398880) (public-release)" -> "2025.3.0.0";
 * "Python 3.11.2" -> "3.11.2". */
static char *parse_word_version(const char *s, const char *word)
{
	size_t wl = strlen(word), n;
	const char *p = strstr(s, word);

	if (!p)
		return dup_or_null(s);
	p += wl;
	while (*p == ' ')
		p++;
	n = strcspn(p, " \t");
	return n ? xstrfmt("%.*s", (int)n, p) : NULL;
}

static int to_int(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	return end == s ? 0 : (int)v;
}

static void set_str(char **dst, const char *val)
{
	free(*dst);
	*dst = dup_or_null(val);
}

/* "name, uuid, 9.0, 580.1, 1980, 1980, 2619, 81559" */
static void parse_gpu_line(const char *line, struct host_info *hi)
{
	char *copy = xstrdup(line);
	char *fields[9] = { 0 };
	char *p = copy;
	int n = 0;

	while (n < 9) {
		char *comma = strchr(p, ',');
		fields[n++] = p;
		if (!comma)
			break;
		*comma = '\0';
		p = comma + 1;
	}
	for (int i = 0; i < n; i++)
		trim_in_place(fields[i]);
	if (n > 0)
		set_str(&hi->gpu_name, fields[0]);
	if (n > 1)
		set_str(&hi->gpu_uuid, fields[1]);
	if (n > 2)
		set_str(&hi->compute_cap, fields[2]);
	if (n > 3)
		set_str(&hi->driver, fields[3]);
	if (n > 4)
		hi->sm_clock_mhz = to_int(fields[4]);
	if (n > 5)
		hi->max_sm_clock_mhz = to_int(fields[5]);
	if (n > 6)
		hi->mem_clock_mhz = to_int(fields[6]);
	if (n > 7)
		hi->gpu_mem_mib = strtoll(fields[7], NULL, 10);
	if (n > 8)   /* the highest memory clock: the physical peak's (store/peaks.h) */
		hi->max_mem_clock_mhz = to_int(fields[8]);
	free(copy);
}

/* "3, GPU-uuid, 81559, 1980, NVIDIA H100 80GB HBM3" (gpu_slot; gpu_proc_slot
 * has no memory or clock): one more slot. A line whose index is not a whole
 * number (a tool that answers every query with its one GPU line) is none. */
static void parse_slot_line(const char *line, struct host_info *hi, int from_proc)
{
	char *copy = xstrdup(line), *f[5] = { 0 }, *p = copy, *end;
	struct gpu_slot *g;
	long idx;
	int n = 0;

	while (n < 5 && p) {
		char *comma = n < 4 ? strchr(p, ',') : NULL;
		f[n++] = p;
		if (comma)
			*comma++ = '\0';
		p = comma;
	}
	for (int i = 0; i < n; i++)
		trim_in_place(f[i]);
	idx = n == 5 ? strtol(f[0], &end, 10) : -1;
	if (n == 5 && *f[0] && !*end && idx >= 0 && idx < 1024) {
		if (hi->slots_from_proc != from_proc) {
			/* nvidia-smi's list replaces the one read from /proc */
			probe_slots_release(hi);
			hi->slots_from_proc = from_proc;
		}
		hi->slots = xrealloc(hi->slots, (size_t)(hi->nslots + 1) * sizeof(*hi->slots));
		g = &hi->slots[hi->nslots++];
		g->index = (int)idx;
		g->uuid = dup_or_null(f[1]);
		g->mem_mib = strtoll(f[2], NULL, 10);
		g->max_sm_clock_mhz = to_int(f[3]);
		g->name = dup_or_null(f[4]);
	}
	free(copy);
}

/* The GPU's keys (the one probed, the host's list, the /proc view):
 * 1 when K is one of them. */
static int parse_gpu_key(const char *k, const char *v, struct host_info *hi)
{
	if (!strcmp(k, "gpu"))
		parse_gpu_line(v, hi);
	else if (!strcmp(k, "gpu_slot"))
		parse_slot_line(v, hi, 0);
	else if (!strcmp(k, "gpu_proc_slot"))
		parse_slot_line(v, hi, 1);
	else if (!strcmp(k, "gpu_proc_name")) {
		set_str(&hi->proc_gpu_name, v);
		if (hi->proc_gpu_name)
			trim_in_place(hi->proc_gpu_name);
	} else if (!strcmp(k, "gpu_proc_uuid")) {
		set_str(&hi->proc_gpu_uuid, v);
		if (hi->proc_gpu_uuid)
			trim_in_place(hi->proc_gpu_uuid);
	} else if (!strcmp(k, "gpu_proc_driver"))
		set_str(&hi->proc_driver, v);
	else
		return 0;
	return 1;
}

/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Release Build
 * (...)" (or "... Open Kernel Module for x86_64  580.159.04 ...") -> the
 * first word after "Module" made of digits and dots; NULL when none. */
static char *parse_proc_driver(const char *line)
{
	const char *p = line ? strstr(line, "Module") : NULL;
	size_t n;

	while (p && *p) {
		p += strcspn(p, " \t");
		p += strspn(p, " \t");
		n = strcspn(p, " \t");
		if (n && isdigit((unsigned char)p[0]) && strspn(p, "0123456789.") == n)
			return xstrfmt("%.*s", (int)n, p);
	}
	return NULL;
}

/* Parse the script's KEY=VALUE output; returns 0 when it is complete. */
static int parse_output(char *text, struct host_info *hi)
{
	char *line = text;
	int done = 0;

	while (line && *line) {
		char *nl = strchr(line, '\n');
		char *eq;
		if (nl)
			*nl = '\0';
		eq = strchr(line, '=');
		if (eq) {
			const char *k = line, *v = eq + 1;
			*eq = '\0';
			if (!strcmp(k, "hostname"))
				set_str(&hi->hostname, v);
			else if (!strcmp(k, "kernel"))
				set_str(&hi->kernel, v);
			else if (!strcmp(k, "home"))
				set_str(&hi->home, v);
			else if (!strcmp(k, "has_gpu")) {
				hi->has_gpu = !strcmp(v, "1");
				hi->smi_answered = 1;
			} else if (parse_gpu_key(k, v, hi))
				;
			else if (!strcmp(k, "gpu_reason"))
				set_str(&hi->gpu_reason, v);
			else if (!strcmp(k, "nvcc_path"))
				set_str(&hi->nvcc.path, v);
			else if (!strcmp(k, "nvcc_version")) {
				free(hi->nvcc.version);
				hi->nvcc.version = parse_nvcc_version(v);
			} else if (!strcmp(k, "ncu_path"))
				set_str(&hi->ncu.path, v);
			else if (!strcmp(k, "ncu_version")) {
				free(hi->ncu.version);
				hi->ncu.version = parse_word_version(v, "Version");
			} else if (!strcmp(k, "sanitizer_path"))
				set_str(&hi->sanitizer.path, v);
			else if (!strcmp(k, "sanitizer_version")) {
				free(hi->sanitizer.version);
				hi->sanitizer.version = parse_word_version(v, "Version");
			} else if (!strcmp(k, "python_path"))
				set_str(&hi->python.path, v);
			else if (!strcmp(k, "python_version")) {
				free(hi->python.version);
				hi->python.version = parse_word_version(v, "Python");
			} else if (!strcmp(k, "torch"))
				set_str(&hi->torch_version, v);
			else if (!strcmp(k, "disk_free_kib"))
				hi->disk_free_kib = *v ? strtoll(v, NULL, 10) : -1;
			else if (!strcmp(k, "execds_running"))
				hi->execds_running = *v ? atoi(v) : -1;
			else if (!strcmp(k, "has_flock"))
				hi->has_flock = !strcmp(v, "1");
			else if (!strcmp(k, "has_timeout"))
				hi->has_timeout = !strcmp(v, "1");
			else if (!strcmp(k, "has_setsid"))
				hi->has_setsid = !strcmp(v, "1");
			else if (!strcmp(k, "cores"))
				hi->ncores = to_int(v);
			else if (!strcmp(k, "sig"))
				set_str(&hi->sig, v);
			else if (!strcmp(k, "probe_cached"))
				hi->cached = !strcmp(v, "1");
			else if (!strcmp(k, "later"))
				set_str(&hi->later, v);
			else if (!strcmp(k, "done"))
				done = 1;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!hi->smi_answered && hi->proc_gpu_name) {
		/* nvidia-smi comes later: the GPU as /proc names it until then */
		hi->has_gpu = 1;
		set_str(&hi->gpu_name, hi->proc_gpu_name);
		set_str(&hi->gpu_uuid, hi->proc_gpu_uuid);
		free(hi->driver);
		hi->driver = parse_proc_driver(hi->proc_driver);
	}
	if (hi->has_gpu && !hi->gpu_name) {
		hi->has_gpu = 0;
		set_str(&hi->gpu_reason, "nvidia-smi printed no GPU");
	}
	return done && hi->hostname ? 0 : -1;
}

/* The data-centre and cloud GPUs whose model name alone gives the compute
 * capability: a word of the name as the driver writes it (split at blanks,
 * '-' and '_', matched whole and case-sensitively, as the probe's shell
 * does), and the capability as nvidia-smi prints it. A model whose name is
 * shared by GPUs of different capabilities (the RTX 6000 of Turing, Ampere
 * and Ada) is not here: its runs wait for nvidia-smi. */
static const struct known_model {
	const char *word, *cc;
} known_models[] = {
	{ "V100", "7.0" },  { "T4", "7.5" },     { "A100", "8.0" },  { "A800", "8.0" },
	{ "A30", "8.0" },   { "A10", "8.6" },    { "A10G", "8.6" },  { "A16", "8.6" },
	{ "A40", "8.6" },   { "L4", "8.9" },     { "L40", "8.9" },   { "L40S", "8.9" },
	{ "L20", "8.9" },   { "H100", "9.0" },   { "H200", "9.0" },  { "H800", "9.0" },
	{ "H20", "9.0" },   { "GH200", "9.0" },  { "B200", "10.0" }, { "GB200", "10.0" },
};

const char *probe_model_cc(const char *model)
{
	const char *p = model;
	size_t i, n;

	while (p && *p) {
		p += strspn(p, " \t-_");
		n = strcspn(p, " \t-_");
		for (i = 0; n && i < sizeof(known_models) / sizeof(known_models[0]); i++)
			if (strlen(known_models[i].word) == n && !strncmp(p, known_models[i].word, n))
				return known_models[i].cc;
		p += n;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* API                                                                 */

void probe_sig_script(struct strbuf *sb, const char *cuda_home, const char *python,
		      int gpu_index)
{
	strbuf_addstr(sb, "cuda_home=");
	strbuf_add_shell_quoted(sb, cuda_home ? cuda_home : "");
	strbuf_addstr(sb, "\npython=");
	strbuf_add_shell_quoted(sb, python ? python : "");
	strbuf_addf(sb, "\ngpu=%d\n", gpu_index > 0 ? gpu_index : 0);
	strbuf_add(sb, gpuorch_probe_sig_sh, gpuorch_probe_sig_sh_len);
}

int probe_parse_text(const char *text, struct host_info *out)
{
	char *copy = xstrdup(text ? text : "");
	int rc;
	memset(out, 0, sizeof(*out));
	out->disk_free_kib = -1;
	out->execds_running = -1;
	rc = parse_output(copy, out);
	free(copy);
	if (rc)
		probe_release(out);
	return rc;
}

void probe_merge_later(struct host_info *hi, const char *text)
{
	char *copy = xstrdup(text ? text : "");
	(void)parse_output(copy, hi);
	free(copy);
	free(hi->later);
	hi->later = NULL;
}

void probe_script_text(struct strbuf *sb, const char *cuda_home, const char *python,
		       const char *workdir, int gpu_index, int later, const char *gpu_names,
		       int gpu_any)
{
	size_t i;

	/* its cache (~/.cache/gpuorch) is the user's alone, as all gpuorch writes */
	strbuf_addstr(sb, "umask 077\nworkdir=");
	strbuf_add_shell_quoted(sb, workdir && *workdir ? workdir : ".");
	strbuf_addf(sb, "\nlater=%d\ngpu_any=%d\ngpu_names=", later ? 1 : 0, gpu_any ? 1 : 0);
	strbuf_add_shell_quoted(sb, gpu_names ? gpu_names : "");
	strbuf_addstr(sb, "\ngpu_models='");
	for (i = 0; i < sizeof(known_models) / sizeof(known_models[0]); i++)
		strbuf_addf(sb, "%s%s", i ? " " : "", known_models[i].word);
	strbuf_addstr(sb, "'\n");
	probe_sig_script(sb, cuda_home, python, gpu_index);
	strbuf_add(sb, gpuorch_probe_sh, gpuorch_probe_sh_len);
}

enum go_status probe_host(struct ssh_conn *c, const char *cuda_home, const char *python,
			  const char *workdir, int gpu_index, struct host_info *out,
			  struct strbuf *raw, struct strbuf *err)
{
	struct strbuf cmd = STRBUF_INIT, body = STRBUF_INIT;
	struct strbuf sout = STRBUF_INIT, serr = STRBUF_INIT;
	struct ssh_exec_result r;
	enum go_status st;

	memset(out, 0, sizeof(*out));
	out->disk_free_kib = -1;
	out->execds_running = -1;
	probe_script_text(&body, cuda_home, python, workdir, gpu_index, 0, NULL, 0);
	strbuf_addstr(&cmd, "sh -c ");
	strbuf_add_shell_quoted(&cmd, body.buf);

	sout.max = 256 * 1024;
	serr.max = 16 * 1024;
	trace_label("probe");
	st = ssh_exec(c, cmd.buf, NULL, 0, &sout, &serr, &r, PROBE_TIMEOUT_MS, err);
	if (!st && raw)
		strbuf_add(raw, sout.buf, sout.len);
	if (!st) {
		if (r.signal[0] || r.exit_code != 0 || parse_output(sout.buf, out)) {
			struct strbuf how = STRBUF_INIT;
			strbuf_trim(&serr);
			ssh_exec_add_end(&how, &r);
			st = go_fail(err, GO_ERR_REMOTE, "the host probe did not complete (%s)%s%s",
				     how.buf, serr.len ? ": " : "", serr.buf);
			strbuf_release(&how);
			probe_release(out);
		}
	}
	strbuf_release(&cmd);
	strbuf_release(&body);
	strbuf_release(&sout);
	strbuf_release(&serr);
	return st;
}

static void tool_release(struct tool_info *t)
{
	free(t->path);
	free(t->version);
	t->path = t->version = NULL;
}

void probe_release(struct host_info *hi)
{
	if (!hi)
		return;
	free(hi->hostname);
	free(hi->kernel);
	free(hi->home);
	free(hi->gpu_reason);
	free(hi->gpu_name);
	free(hi->gpu_uuid);
	free(hi->compute_cap);
	free(hi->driver);
	free(hi->torch_version);
	free(hi->sig);
	free(hi->later);
	free(hi->proc_gpu_name);
	free(hi->proc_gpu_uuid);
	free(hi->proc_driver);
	probe_slots_release(hi);
	tool_release(&hi->nvcc);
	tool_release(&hi->ncu);
	tool_release(&hi->sanitizer);
	tool_release(&hi->python);
	memset(hi, 0, sizeof(*hi));
}

static void add_tool(cJSON *obj, const char *key, const struct tool_info *t)
{
	cJSON *o = json_add_obj(obj, key);
	json_add_str(o, "path", t->path);
	json_add_str(o, "version", t->path ? t->version : NULL);
}

static void add_num_or_null(cJSON *obj, const char *key, int have, double v)
{
	if (have)
		json_add_num(obj, key, v);
	else
		cJSON_AddNullToObject(obj, key);
}

cJSON *probe_slot_json(const struct gpu_slot *g)
{
	cJSON *o = cJSON_CreateObject();
	json_add_num(o, "index", g->index);
	json_add_str(o, "uuid", g->uuid);
	json_add_str(o, "name", g->name);
	add_num_or_null(o, "mem_mib", g->mem_mib > 0, (double)g->mem_mib);
	add_num_or_null(o, "max_sm_clock_mhz", g->max_sm_clock_mhz > 0, g->max_sm_clock_mhz);
	return o;
}

cJSON *probe_slots_json(const struct host_info *hi, const int *which, int n)
{
	cJSON *a = cJSON_CreateArray();
	int i;
	if (!which)
		n = hi->nslots;
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, probe_slot_json(&hi->slots[which ? which[i] : i]));
	return a;
}

cJSON *probe_to_json(const struct host_info *hi)
{
	cJSON *o = cJSON_CreateObject();
	char *arch = hi->has_gpu ? probe_cc_to_arch(hi->compute_cap) : NULL;
	int g = hi->has_gpu;

	if (!o) {
		free(arch);
		return NULL;
	}
	json_add_str(o, "hostname", hi->hostname);
	json_add_str(o, "kernel", hi->kernel);
	json_add_bool(o, "has_gpu", hi->has_gpu);
	json_add_str(o, "gpu_reason", hi->has_gpu ? NULL : hi->gpu_reason);
	json_add_str(o, "gpu_name", g ? hi->gpu_name : NULL);
	json_add_str(o, "gpu_uuid", g ? hi->gpu_uuid : NULL);
	json_add_str(o, "compute_cap", g ? hi->compute_cap : NULL);
	json_add_str(o, "arch", arch);
	json_add_str(o, "driver", g ? hi->driver : NULL);
	add_num_or_null(o, "sm_clock_mhz", g, hi->sm_clock_mhz);
	add_num_or_null(o, "max_sm_clock_mhz", g, hi->max_sm_clock_mhz);
	add_num_or_null(o, "mem_clock_mhz", g, hi->mem_clock_mhz);
	add_num_or_null(o, "max_mem_clock_mhz", g && hi->max_mem_clock_mhz > 0, hi->max_mem_clock_mhz);
	add_num_or_null(o, "gpu_mem_mib", g, (double)hi->gpu_mem_mib);
	if (g && hi->nslots)
		cJSON_AddItemToObject(o, "gpus", probe_slots_json(hi, NULL, 0));
	add_tool(o, "nvcc", &hi->nvcc);
	add_tool(o, "ncu", &hi->ncu);
	add_tool(o, "compute_sanitizer", &hi->sanitizer);
	add_tool(o, "python", &hi->python);
	json_add_str(o, "torch", hi->torch_version);
	add_num_or_null(o, "disk_free_kib", hi->disk_free_kib >= 0, (double)hi->disk_free_kib);
	add_num_or_null(o, "execds_running", hi->execds_running >= 0, (double)hi->execds_running);
	free(arch);
	return o;
}

char *probe_cc_to_arch(const char *cc)
{
	const char *dot;
	size_t i, majlen;

	if (!cc || !*cc)
		return NULL;
	dot = strchr(cc, '.');
	if (!dot || dot == cc || !dot[1])
		return NULL;
	majlen = (size_t)(dot - cc);
	for (i = 0; i < majlen; i++)
		if (!isdigit((unsigned char)cc[i]))
			return NULL;
	for (i = 1; dot[i]; i++)
		if (!isdigit((unsigned char)dot[i]))
			return NULL;
	if (majlen > 3 || strlen(dot + 1) > 2)
		return NULL;
	return xstrfmt("sm_%.*s%s", (int)majlen, cc, dot + 1);
}

/* ---------------------------------------------------------------- an inventory */

/* Which cmake, make and ninja host h's builds run (its "env" applied),
 * into tools; GO_OK when the host answered. */
static enum go_status probe_build_tools(struct ssh_conn *c, const struct host *h,
					struct tool_info *tools, struct strbuf *err)
{
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	struct ssh_exec_result res;
	enum go_status st;
	int k;
	env_add_exports(&cmd, h->env, h->nenv);
	env_add_tool_report(&cmd, env_tools);
	trace_label("probe build tools");
	st = ssh_exec(c, cmd.buf, NULL, 0, &out, &errout, &res, 60000, err);
	for (k = 0; st == GO_OK && k < ENV_NTOOLS; k++)
		env_tool_read(out.buf, env_tools[k], &tools[k].path, &tools[k].version);
	strbuf_release(&cmd);
	strbuf_release(&out);
	strbuf_release(&errout);
	return st;
}

static void probe_one(void *arg)
{
	struct host_probe *t = arg;
	struct ssh_conn *c = NULL;
	struct ssh_opts o;
	int64_t t0 = time_mono_ms();

	host_ssh_opts(t->h, t->accept_new_hostkey, &o);
	t->st = ssh_connect(&o, &c, &t->err);
	if (t->st == GO_OK) {
		t->fingerprint = xstrdup(ssh_fingerprint(c));
		if (ssh_notice(c))
			t->notice = xstrdup(ssh_notice(c));
		t->st = probe_host(c, t->h->cuda_home, t->h->python, t->h->workdir,
				   t->h->gpu_index, &t->info, NULL, &t->err);
		if (t->st == GO_OK && t->build_tools_asked)
			t->st = probe_build_tools(c, t->h, t->build_tools, &t->err);
	}
	ssh_disconnect(c);
	t->seconds = (double)(time_mono_ms() - t0) / 1000.0;
}

struct host_probe *probe_inventory(const struct hosts *hs, int accept_new_hostkey,
				   int with_build_tools)
{
	struct host_probe *t = xcalloc((size_t)hs->n, sizeof(*t));
	void **args = xcalloc((size_t)hs->n, sizeof(*args));
	int i;

	for (i = 0; i < hs->n; i++) {
		t[i].h = &hs->v[i];
		t[i].accept_new_hostkey = accept_new_hostkey;
		t[i].build_tools_asked = with_build_tools;
		strbuf_init(&t[i].err, 0);
		args[i] = &t[i];
	}
	par_run(hs->n, probe_one, args, NULL, NULL, 200);
	free(args);
	return t;
}

void probe_inventory_release(struct host_probe *p, int n)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < n; i++) {
		int k;
		if (p[i].st == GO_OK)
			probe_release(&p[i].info);
		for (k = 0; k < ENV_NTOOLS; k++) {
			free(p[i].build_tools[k].path);
			free(p[i].build_tools[k].version);
		}
		free(p[i].fingerprint);
		free(p[i].notice);
		strbuf_release(&p[i].err);
	}
	free(p);
}
