/* spec.h -- experiment specs: parsed, fully validated, before anything is sent.
 * The format is documented in docs/spec.md; keep the two in step. */
#ifndef GPUORCH_SPEC_H
#define GPUORCH_SPEC_H

#include <cjson/cJSON.h>
#include "core/error.h"
#include "core/hash.h"
#include "core/vocab.h"


struct spec_kv {
	char *key;
	char *value;     /* numbers are rendered as they were written (%.17g trimmed) */
};

/* A figure read from a program's own output (docs/byo.md). */
struct spec_figure {
	char *name;
	char *regex;     /* POSIX ERE; group 1 is the number (the last matching line wins) */
	char *json;      /* or: a dotted path into the JSON object on the last line */
	char *unit;      /* may be NULL */
	char *better;    /* "higher" | "lower" | NULL */
	char *name_regex; /* a figure per kernel: the line naming the block (group 1), or */
	int name_group;   /* the group of regex naming the kernel on the value's line (0: none) */
};

struct spec_program {
	char *name;
	char **sources;  /* compiled sources (NULL-terminated); NULL for scripts */
	char *script;    /* python script path, or NULL */
	char **libs;     /* NULL-terminated */
	char *min_arch;  /* e.g. "sm_90a", or NULL */
	int needs_gpu;   /* default 1 */
	/* bring your own code (docs/byo.md) */
	char ***build_cmds; /* the project's build: commands (argv each), NULL-terminated; NULL: nvcc */
	char **outputs;     /* files the build makes (relative to the tree) */
	int ptxas;          /* NVCC_APPEND_FLAGS=-Xptxas=-v during the build */
	char **run;         /* the program's own command line; NULL: the result contract */
	char **check;       /* its correctness command (exit 0 = pass); NULL: run */
	struct spec_figure *figures;
	int nfigures;
	char *datatype;         /* "fp32" | "tf32" | "fp16" | "bf16" | "fp8": the peak its figures
				 * are held to (store/peaks.h); NULL: not declared */
	char *baseline_problem; /* one of its own problems whose run is the baseline of its
				 * others (a program off the harness that runs cuBLAS as a
				 * problem); NULL: none */
};

struct spec_problem {
	char *name;
	struct spec_kv *params;
	int nparams;
};

/* The work one launch of a kernel does (a kernel_timing step's "work"):
 * what its CUPTI time is held to against the GPU's physical peaks. */
struct spec_kwork {
	char *key;              /* the kernel's key as docs/byo.md names it */
	double flops, bytes;    /* per launch; 0: not declared */
};

/* One point of a sweep: compile-time defines added to the build. */
struct spec_variant {
	char *label;            /* "TILE_M=64,TILE_N=128" */
	struct spec_kv *defines;
	int ndefines;
	char *const *sources;   /* the sweep's "sources" (its step's list): the
				 * defines reach these sources' compiles, and any
				 * other whose files name one of them; NULL: every
				 * source */
};

/* the most GPUs a step may ask for ("gpus": N) */
#define SPEC_MAX_GPUS 64

struct spec_step {
	enum step_kind kind;
	char *program;          /* name; resolved below */
	const struct spec_program *prog;
	char **problems;        /* NULL-terminated problem names, all when spec omitted them */
	int timeout_s;
	int gpus;               /* "gpus": N, the GPUs of one host it holds at once; 0: one */
	int is_baseline;        /* role == "baseline" */
	/* profile (Nsight Compute) */
	char **metrics;         /* NULL-terminated; the default set when the spec names none */
	char *kernel;           /* regex for --kernel-name (default: the program name) */
	int launch_skip;        /* --launch-skip, default 0 */
	int launch_count;       /* --launch-count, default 1 */
	char *clock_control;    /* "base" (default) | "none" */
	char *cache_control;    /* "all" (default) | "none" */
	char *mode;             /* program mode under the tool: "check" (default) | "profile" */
	/* sanitize (compute-sanitizer) */
	char **tools;           /* NULL-terminated: memcheck, racecheck, synccheck, initcheck */
	int print_limit;        /* --print-limit, default 10 */
	/* kernel_timing (CUPTI injection library, docs/byo.md) */
	int repeat;             /* runs of the program under the library, default 3 */
	struct spec_kwork *work; /* declared work per launch of named kernels */
	int nwork;
	/* sweep */
	struct spec_variant *variants;
	int nvariants;
	int sweep_check;        /* a correctness run per variant before its benchmark (default 1) */
	char **sweep_sources;   /* NULL-terminated, or NULL: every source (spec_variant.sources) */
};

struct spec_target {
	char *gpu;              /* substring matched against the GPU name, e.g. "H100" */
	char *arch;             /* "sm_90a" */
};

struct spec {
	char *path;             /* file it was read from */
	char *name;
	char *slug;             /* name made safe for a directory: [A-Za-z0-9._-] */
	char *phase;
	char *description;      /* may be NULL */
	char **sources;         /* NULL-terminated, sorted, unique */
	char **build_flags;     /* NULL-terminated */
	struct spec_kv *defines;
	int ndefines;
	int build_timeout_s;
	struct spec_target *targets;
	int ntargets;
	struct spec_program *programs;
	int nprograms;
	struct spec_problem *problems;
	int nproblems;
	const struct spec_problem **problems_by_name; /* sorted: spec_find_problem's index */
	struct spec_kv *tolerance;
	int ntolerance;
	struct spec_step *steps;
	int nsteps;
	cJSON *baselines;       /* kept as JSON: copied into run.json for the report */
	cJSON *references;
	cJSON *expected;
	cJSON *gates;           /* pass/fail gates (docs/spec.md), validated; [] when none */
	int spread;             /* "spread": true: the steps are dealt over every GPU of the
				 * hosts of one GPU model, as `run --spread` (remote/spread.h) */
	char hash[SHA256_HEX_LEN + 1];  /* sha256 of the spec file's bytes */
	cJSON *json;            /* the whole parsed spec (copied into run.json) */
};

/* Load and validate. root is the repository root that source paths are
 * relative to (they must exist there unless check_files is 0, as for
 * --commit, where pack.c checks them in the commit). Errors read
 * "FILE: 'steps[2].program': no program named \"x\" in 'programs'". */
enum go_status spec_load(const char *path, const char *root, int check_files,
			 struct spec **out, struct strbuf *err);
/* Same, from text already in memory (the spec as it was at a commit). */
enum go_status spec_parse(const char *label, const char *text, size_t len,
			  const char *root, int check_files, struct spec **out,
			  struct strbuf *err);
void spec_free(struct spec *s);

const struct spec_program *spec_find_program(const struct spec *s, const char *name);
const struct spec_problem *spec_find_problem(const struct spec *s, const char *name);
/* Sort s->problems_by_name (spec_find_problem then bisects, not scans). */
void spec_index_problems(struct spec *s);
/* The arch to build for a GPU name, or NULL when no target matches. */
const char *spec_arch_for_gpu(const struct spec *s, const char *gpu_name);
/* 1 when a GPU of arch `have` meets the requirement `need` (a program's
 * min_arch; NULL needs nothing), else 0: "sm_90" meets "sm_80", "sm_90a"
 * meets "sm_90" and "sm_80". An "a" requirement (arch-specific features)
 * is met by that exact arch only: "sm_90" and "sm_100a" do not meet "sm_90a". */
int spec_arch_satisfies(const char *have, const char *need);
/* 'sources' entries: a glob (*.cu, ** for any depth) or "." selects files through
 * git (remote/pack.c resolves it); so does a directory. */
int spec_source_is_glob(const char *entry);
/* 1 when path is listed, or could be selected by a glob or directory entry. */
int spec_source_may_select(const struct spec *s, const char *path);
/* Every program's sources and script are among files (what 'sources'
 * selected, resolved); else GO_ERR_SPEC naming the program. */
enum go_status spec_check_selected(const struct spec *s, char *const *files, struct strbuf *err);
/* The default Nsight Compute metrics of a profile step (NULL-terminated). */
extern const char *const spec_default_metrics[];

#endif
