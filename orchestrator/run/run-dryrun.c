/* run-dryrun.c -- `gpuorch run --dry-run`: what the run would do, on stdout,
 * once its inputs are resolved (run-inputs.c); nothing is sent. */
#include "run/run-state.h"
#include "cloud/lifecycle.h"
#include "spec/plan.h"
#include "spec/spec.h"
#include "transport/hosts.h"

#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

/* The run's identity and sources, then each host's plan. */
static void print_plan(const struct spec *s, const struct hosts *hs, const struct pack *pk,
		       const struct git_info *gi, const char *commit)
{
	int i, j;
	printf("dry run: nothing is sent; this is what 'gpuorch run' would do\n\n");
	printf("experiment  %s (%s)\n", s->name, s->path);
	printf("spec sha256 %s\n", s->hash);
	if (commit)
		printf("source      commit %s\n", commit);
	else if (gi->is_repo)
		printf("source      work tree at %s%s\n", gi->commit[0] ? gi->commit : "(no commit)",
		       gi->dirty ? " + uncommitted changes" : "");
	else
		printf("source      work tree (not a git repository)\n");
	printf("content id  %s (%d files, %zu bytes archive)\n", pk->content_id, pk->nfiles,
	       pk->len);
	for (i = 0; i < pk->nfiles; i++)
		printf("  %10zu  %.12s  %s\n", pk->files[i].size, pk->files[i].sha256,
		       pk->files[i].path);
	printf("\nhosts (%d, in parallel)\n", hs->n);
	for (i = 0; i < hs->n; i++) {
		const struct host *h = &hs->v[i];
		struct plan p;
		struct plan_host ph;
		char *arch_list[2] = { NULL, NULL };
		char **archs = arch_list;
		int narchs = 0;
		const char *run_arch = h->arch;
		char *workdir = host_workdir(h, "~");

		if (!run_arch && h->gpu)
			run_arch = spec_arch_for_gpu(s, h->gpu);
		printf("  %s  %s@%s:%d  key %s  known_hosts %s\n", h->name, h->user, h->address,
		       h->port, h->use_agent ? "(ssh-agent)" : h->identity, h->known_hosts);
		if (run_arch) {
			arch_list[0] = (char *)run_arch;
			narchs = 1;
		} else {
			archs = xcalloc((size_t)s->ntargets + 1, sizeof(char *));
			for (j = 0; j < s->ntargets; j++)
				archs[narchs++] = s->targets[j].arch;
			run_arch = narchs ? archs[0] : NULL;
			printf("    (GPU detected at run time: builds shown for every target, steps "
			       "for %s)\n", run_arch ? run_arch : "none");
		}
		memset(&ph, 0, sizeof(ph));
		ph.workdir = workdir;
		ph.content_id = pk->content_id;
		ph.sources = pack_plan_sources(pk);
		ph.nsources = pk->nfiles;
		ph.run_id = "<run-id>";
		ph.archs = archs;
		ph.narchs = narchs;
		ph.run_arch = run_arch;
		ph.nvcc = "nvcc";
		ph.nvcc_version = "(detected at run time)";
		ph.python = "python3";
		ph.ncu = "ncu";
		ph.sanitizer = "compute-sanitizer";
		ph.env = h->env;
		ph.nenv = h->nenv;
		plan_make(&p, s, &ph);
		free((void *)ph.sources);
		printf("    ship the files of %s/content/%s/src the host lacks (%d files in all)\n",
		       workdir, pk->content_id, pk->nfiles);
		plan_print(&p, stdout);
		plan_release(&p);
		if (archs != arch_list)
			free(archs);
		free(workdir);
	}
}

void run_print_dry_run(const struct run_state *r)
{
	int i;

	print_plan(r->s, r->hs, &r->pk, &r->gi, r->commit);
	if (r->o->spread || r->s->spread)
		printf("\nspread: each host shown runs only the units (program x problem x variant) "
		       "dealt to it,\n  over every GPU of the SSH hosts of its GPU model, once they "
		       "are probed (docs/spec.md)\n");
	for (i = 0; i < r->hs->n; i++)
		if (r->lives[i].in && r->lives[i].in->ops->describe) {
			printf("  %s:\n", r->hs->v[i].name);
			r->lives[i].in->ops->describe(r->lives[i].in, stdout);
		}
}
