/* plan.h -- what gpuorch will do on one host: builds, steps, remote commands.
 *
 * A plan is computed from the spec, the content id and what is known of the
 * host (its work directory and archs). `gpuorch run` executes it; `--dry-run`
 * prints it. Every remote command line is built here, with
 * strbuf_add_shell_quoted for every word that comes from outside. */
#ifndef GPUORCH_PLAN_H
#define GPUORCH_PLAN_H

#include <stdio.h>
#include "spec/spec.h"
#include "core/hash.h"
#include "core/shellenv.h"

struct plan_build {
	const struct spec_program *prog;
	const struct spec_variant *variant; /* a sweep's defines, or NULL */
	char *arch;
	char key[SHA256_HEX_LEN + 1];  /* what makes its output: the files it reads, its
					* command (sources, libs, flags, defines, build
					* commands), arch, nvcc and its version, the host's
					* env -- never the program's name, so two programs
					* built alike are one build */
	char *dir;                     /* remote build directory (also the step directory) */
	char *bin;                     /* remote executable (a project build: its first output) */
	char *tree;                    /* a project build's copy of the sources, where it
					* builds and its steps run; NULL for nvcc builds */
	char *command;                 /* the nvcc command line, run in the source dir */
	char *skip_reason;             /* not built, and why; NULL to build */
	int may_fail;                  /* its failure skips its steps, not the phase
					* (a sweep variant; the CUPTI library) */
	const struct plan_build *same_as; /* the earlier build of this plan with the same
					* key, made once for both (its directory, command
					* and result are this one's); NULL: this one is made */
};

struct plan_step {
	const struct spec_step *step;
	const struct spec_problem *problem;
	const struct plan_build *build; /* NULL for scripts */
	char *id;                      /* "benchmark.attn_wmma.B16-H16-S512-D64" */
	char *dir;                     /* remote step directory */
	char *command;
	char *arch;                    /* arch it runs on, NULL when skipped for no GPU */
	int needs_gpu;
	char *skip_reason;             /* not run, and why; NULL to run */
	const struct spec_variant *variant; /* sweep steps: the variant, else NULL */
	const char *tool;              /* sanitize steps: "memcheck"...; else NULL */
	const char *mode;              /* program mode: "check" | "bench" | "profile" */
	char *tool_log;                /* remote log of ncu / compute-sanitizer, or NULL */
	char *profile_rep;             /* remote .ncu-rep of a profile step, or NULL */
	char *profile_csv;             /* remote CSV (ncu --import ... --csv --page raw) */
};

/* A shipped file, for build keys: a build is keyed by the files its
 * compile reads (its sources and what they #include), not by the whole
 * archive, so an edit rebuilds only the programs that use the file. */
struct plan_source {
	const char *path;
	const char *sha256;
	char *const *includes;   /* "q:name" / "a:name" (remote/pack.h) */
	int include_macro;
	const char *text;        /* its bytes, NUL-terminated; NULL when not kept (large) */
	size_t size;
};

struct plan_host {
	const char *workdir;           /* absolute remote work directory */
	const char *content_id;
	const struct plan_source *sources; /* sorted by path; NULL: key by content_id */
	int nsources;
	const char *run_id;
	char *const *archs;            /* archs to build for */
	int narchs;
	const char *run_arch;          /* arch of the host's GPU; NULL: no GPU */
	const char *no_gpu_reason;     /* why there is no GPU */
	const char *gpu_name;          /* for messages */
	const char *nvcc;              /* path, NULL when not found */
	const char *nvcc_version;
	const char *python;            /* path, NULL when not found */
	const char *ncu;               /* Nsight Compute CLI path, NULL when not found */
	const char *sanitizer;         /* compute-sanitizer path, NULL when not found */
	const struct env_var *env;     /* the host's "env": set before every build and step
					* command, part of every build key; nenv of them */
	int nenv;
};

struct plan {
	char *content_dir;             /* W/content/<cid> */
	char *blobs_dir;               /* W/blobs: shipped files by hash (remote/blobs.h) */
	char *src_dir;                 /* W/content/<cid>/src */
	char *run_dir;                 /* W/runs/<run-id> */
	struct plan_build *builds;
	int nbuilds;
	struct plan_build *ktrace;     /* the CUPTI library's build (one of builds), or NULL */
	struct plan_step *steps;
	int nsteps;
	/* plan.c's memo: whether a sweep's defines reach a source it does not
	 * name (the same for every variant and arch of that sweep) */
	struct plan_reach { char *const *sweep; const char *src; int reach; } *reach;
	int nreach;
};

void plan_make(struct plan *p, const struct spec *s, const struct plan_host *h);
void plan_release(struct plan *p);
/* Keep only the steps i with keep[i] (in order), and the builds they name
 * (with what those are the same as) or no step names; the rest are freed
 * (plan-keep.c: a host's part of a spread run, remote/spread.h). */
void plan_keep_steps(struct plan *p, const int *keep);
void plan_print(const struct plan *p, FILE *out);

/* An nvcc build that compiles each source into an object (plan.c's
 * gpuorch_obj): 1, with its number of sources in *nsources and, of them,
 * how many objects its stderr says it found made ("SOURCE: object reused")
 * in *nreused; 0 for a build of another kind (a project's own build). */
int plan_build_objects(const struct plan_build *b, const char *stderr_text, int *nsources,
		       int *nreused);
/* A file-name-safe slug of any string: [A-Za-z0-9._-], at most max chars. */
char *plan_slug(const char *s, size_t max);
/* The gencode flag for an arch: sm_90a -> -gencode=arch=compute_90a,code=sm_90a */
char *plan_gencode(const char *arch);

#endif
