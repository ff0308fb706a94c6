/* hostrun-setup.c -- a host's phases before its builds: connect, probe, plan. */
#include "remote/hostrun-int.h"
#include "core/jsonutil.h"
#include "core/timeutil.h"
#include "remote/probecache.h"

#include <stdlib.h>
#include <string.h>
#include "remote/pack.h"
#include "core/banned.h"

/* ---------------------------------------------------------------- phases */

enum go_status hr_connect(struct hostrun *hr)
{
	struct strbuf err = STRBUF_INIT;
	struct ssh_opts o;
	int64_t t0 = time_mono_ms();
	enum go_status st;

	live_set(hr->ctx->live, hr->index, "connect", hr->h->address);
	host_ssh_opts(hr->h, hr->ctx->accept_new_hostkey, &o);
	o.persist_s = hr->h->persist_s;
	st = ssh_connect(&o, &hr->conn, &err);
	if (st != GO_OK) {
		hr_fail_host(hr, "connect", t0, err.buf);
	} else {
		char *d = xstrfmt("host key %s%s", ssh_fingerprint(hr->conn),
				  ssh_via_keeper(hr->conn) ? " (kept session)" : "");
		if (ssh_via_keeper(hr->conn))
			strbuf_addstr(&hr->out, "  through its session keeper (kept session: no new SSH connection)\n");
		if (hr->h->persist_s && ssh_notice(hr->conn))
			strbuf_addf(&hr->out, "  note: %s\n", ssh_notice(hr->conn));
		hostrun_phase(hr, "connect", ST_PASS, t0, d);
		free(d);
	}
	strbuf_release(&err);
	return st;
}

/* Forget what an earlier probe gave (probing again). */
static void forget_probe(struct hostrun *hr)
{
	int i;
	free(hr->probe_now);
	hr->probe_now = NULL;
	if (!hr->have_info)
		return;
	probe_release(&hr->info);
	hr->have_info = 0;
	for (i = 0; i < hr->narchs; i++)
		free(hr->archs[i]);
	free(hr->archs);
	hr->archs = NULL;
	hr->narchs = 0;
	free(hr->run_arch);
	hr->run_arch = NULL;
	hr->model_cc = NULL;
	free(hr->workdir);
	hr->workdir = NULL;
}

/* hr->info into the record: its "info" and "archs". */
void hostrun_record_info(struct hostrun *hr, const char *role)
{
	struct runw_info in = {
		.probe = probe_to_json(&hr->info), .run_arch = hr->run_arch,
		.workdir = hr->workdir, .role = role, .archs = hr->archs, .narchs = hr->narchs,
	};
	runw_host_info(hr->ctx->rec, hr->index, &in);
}

/* hr->info is in: the work directory, the archs, the record's info, the
 * probe phase. */
static void apply_probe(struct hostrun *hr, int64_t t0)
{
	const struct spec *s = hr->ctx->spec;
	int i;

	hr->have_info = 1;
	hr->workdir = host_workdir(hr->h, hr->info.home);

	/* Which archs to build for, and which one the steps run on. */
	if (hr->info.has_gpu) {
		const char *gpu = hr->h->gpu ? hr->h->gpu : hr->info.gpu_name;
		const char *arch = hr->h->arch ? hr->h->arch : spec_arch_for_gpu(s, gpu);
		char *cc_arch = NULL;
		if (!arch && !hr->info.smi_answered) {
			/* nvidia-smi comes later: a model gpuorch knows by its name */
			hr->model_cc = probe_model_cc(hr->info.gpu_name);
			arch = cc_arch = probe_cc_to_arch(hr->model_cc);
		}
		if (!arch)
			arch = cc_arch = probe_cc_to_arch(hr->info.compute_cap);
		if (arch) {
			hr->run_arch = xstrdup(arch);
			hostrun_add_arch(hr, arch);
		}
		free(cc_arch);
	}
	if (!hr->run_arch) {
		/* No GPU (or none we can name): compile-only for every listed arch. */
		if (hr->h->arch)
			hostrun_add_arch(hr, hr->h->arch);
		for (i = 0; i < s->ntargets; i++)
			hostrun_add_arch(hr, s->targets[i].arch);
	}

	hostrun_record_info(hr, NULL);

	{
		struct strbuf d = STRBUF_INIT;
		if (hr->info.has_gpu && !hr->info.smi_answered)
			strbuf_addf(&d, "%s (%s, as /proc/driver/nvidia names it; nvidia-smi asked "
				    "beside the builds), driver %s", hr->info.gpu_name,
				    hr->run_arch ? hr->run_arch : "no arch",
				    hr->info.driver ? hr->info.driver : "?");
		else if (hr->info.has_gpu)
			strbuf_addf(&d, "%s (cc %s, %s), driver %s", hr->info.gpu_name,
				    hr->info.compute_cap ? hr->info.compute_cap : "?",
				    hr->run_arch ? hr->run_arch : "no arch",
				    hr->info.driver ? hr->info.driver : "?");
		else
			strbuf_addf(&d, "no GPU (%s): compile-only",
				    hr->info.gpu_reason ? hr->info.gpu_reason : "none detected");
		strbuf_addf(&d, "; nvcc %s", hr->info.nvcc.path ? hr->info.nvcc.path : "not found");
		if (hr->probe_kept)
			strbuf_addstr(&d, " (kept from an earlier probe; checked on the host with the run)");
		hostrun_phase(hr, "probe", ST_PASS, t0, d.buf);
		strbuf_addf(&hr->out, "  %s\n", d.buf);
		strbuf_release(&d);
	}
}

enum go_status hr_probe(struct hostrun *hr, int command)
{
	struct strbuf err = STRBUF_INIT, raw = STRBUF_INIT;
	int64_t t0 = time_mono_ms();
	enum go_status st;

	forget_probe(hr);
	hr->probe_kept = 0;
	hr->probe_pending = 0;
	/* a probe kept from an earlier run is used when it has a signature:
	 * the run's start command checks it on the host (hostrun-exec.c) */
	if (!command && probe_cache_load(hr->h, &raw)) {
		if (!probe_parse_text(raw.buf, &hr->info) && hr->info.sig)
			hr->probe_kept = 1;
		else if (hr->info.hostname)
			probe_release(&hr->info);
	}
	strbuf_release(&raw);
	if (hr->probe_kept) {
		apply_probe(hr, t0);
		return GO_OK;
	}
	if (!command) {
		/* none kept: the start command probes first (hr_probe_take) */
		hr->probe_pending = 1;
		return GO_OK;
	}
	live_set(hr->ctx->live, hr->index, "probe", "GPU, driver, CUDA tools");
	st = probe_host(hr->conn, hr->h->cuda_home, hr->h->python, hr->h->workdir,
			hr->h->gpu_index, &hr->info, &raw, &err);
	if (st != GO_OK) {
		hr_fail_host(hr, "probe", t0, err.buf);
	} else {
		if (hr->info.sig)
			probe_cache_save(hr->h, raw.buf);
		apply_probe(hr, t0);
	}
	strbuf_release(&err);
	strbuf_release(&raw);
	return st;
}

void hr_probe_text(const struct hostrun *hr, struct strbuf *sb)
{
	const struct spec *s = hr->ctx->spec;
	struct strbuf names = STRBUF_INIT;
	int i, any;

	/* the plan needs no more of the GPU than its name when the host's
	 * arch is given, or the spec names an arch for the host's "gpu" or
	 * for the model the driver reports (apply_probe) */
	any = hr->h->arch || (hr->h->gpu && spec_arch_for_gpu(s, hr->h->gpu));
	for (i = 0; !any && !hr->h->gpu && i < s->ntargets; i++)
		strbuf_addf(&names, "%s%s", names.len ? "\n" : "", s->targets[i].gpu);
	probe_script_text(sb, hr->h->cuda_home, hr->h->python, hr->h->workdir, hr->h->gpu_index, 1,
			  names.buf, any);
	strbuf_release(&names);
}

enum go_status hr_probe_take(struct hostrun *hr, const char *out, int64_t t0)
{
	forget_probe(hr);
	hr->probe_pending = 0;
	if (probe_parse_text(out, &hr->info)) {
		hr_fail_host(hr, "probe", t0, "the host probe did not complete (its output ended "
			     "early or lacks the host name)");
		return GO_ERR_REMOTE;
	}
	if (hr->info.later)
		hr->probe_now = xstrdup(out);   /* kept once the rest is in */
	else if (hr->info.sig)
		probe_cache_save(hr->h, out);
	apply_probe(hr, t0);
	return GO_OK;
}

void hr_probe_later(struct hostrun *hr, const char *text)
{
	struct strbuf all = STRBUF_INIT;
	const char *p;
	char *proc_uuid = NULL;
	int from_proc;

	if (!hr->have_info || !hr->info.later || !hr->probe_now)
		return;
	from_proc = hr->info.has_gpu && !hr->info.smi_answered;
	if (from_proc && hr->info.gpu_uuid)
		proc_uuid = xstrdup(hr->info.gpu_uuid);
	probe_merge_later(&hr->info, text);
	/* planned from the driver's /proc files: nvidia-smi has the last word */
	if (from_proc && !hr->info.has_gpu)
		strbuf_addf(&hr->out, "  warning: the plan was made for the GPU that /proc/driver/nvidia "
			    "names, but nvidia-smi then failed: %s\n",
			    hr->info.gpu_reason ? hr->info.gpu_reason : "(no reason)");
	else if (from_proc && proc_uuid && hr->info.gpu_uuid && strcmp(proc_uuid, hr->info.gpu_uuid))
		strbuf_addf(&hr->out, "  warning: /proc/driver/nvidia's GPU %d (%s) is not nvidia-smi's "
			    "GPU %d (%s, %s): the run was planned for the first\n", hr->h->gpu_index,
			    proc_uuid, hr->h->gpu_index, hr->info.gpu_uuid,
			    hr->info.gpu_name ? hr->info.gpu_name : "?");
	else if (from_proc && hr->model_cc &&
		 (!hr->info.compute_cap || strcmp(hr->model_cc, hr->info.compute_cap)))
		strbuf_addf(&hr->out, "  warning: the run was built for %s, the compute capability %s "
			    "that gpuorch knows %s by, but nvidia-smi says %s: its programs may not "
			    "run there (give the host's \"arch\" in the hosts file)\n",
			    hr->run_arch ? hr->run_arch : "?", hr->model_cc,
			    hr->info.proc_gpu_name ? hr->info.proc_gpu_name : "the GPU",
			    hr->info.compute_cap ? hr->info.compute_cap : "no compute capability");
	free(proc_uuid);
	hostrun_record_info(hr, NULL);
	hostrun_save(hr);
	/* the controller keeps the whole probe: the first answer without its
	 * "later" line, then the rest */
	for (p = hr->probe_now; *p;) {
		size_t n = strcspn(p, "\n");
		if (strncmp(p, "later=", 6)) {
			strbuf_add(&all, p, n);
			strbuf_addch(&all, '\n');
		}
		p += n + (p[n] == '\n');
	}
	strbuf_addstr(&all, text);
	if (hr->info.sig)
		probe_cache_save(hr->h, all.buf);
	free(hr->probe_now);
	hr->probe_now = NULL;
	strbuf_release(&all);
}

void hostrun_make_plan(struct hostrun *hr, const char *no_gpu_reason, const char *gpu_name)
{
	struct plan_host ph;
	memset(&ph, 0, sizeof(ph));
	ph.workdir = hr->workdir;
	ph.content_id = hr->ctx->pack->content_id;
	ph.sources = pack_plan_sources(hr->ctx->pack);
	ph.nsources = hr->ctx->pack->nfiles;
	ph.run_id = hr->ctx->run_id;
	ph.archs = hr->archs;
	ph.narchs = hr->narchs;
	ph.run_arch = hr->run_arch;
	ph.no_gpu_reason = no_gpu_reason;
	ph.gpu_name = gpu_name;
	ph.nvcc = hr->info.nvcc.path;
	ph.nvcc_version = hr->info.nvcc.version;
	ph.python = hr->h->python ? hr->h->python : hr->info.python.path;
	ph.ncu = hr->info.ncu.path;
	ph.sanitizer = hr->info.sanitizer.path;
	ph.env = hr->h->env;
	ph.nenv = hr->h->nenv;
	plan_make(&hr->plan, hr->ctx->spec, &ph);
	free((void *)ph.sources);
	hr->have_plan = 1;
	if (hr->ctx->spread)
		hostrun_spread(hr);
}
