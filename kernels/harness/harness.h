/* harness.h -- shared CLI, correctness check, timing and JSON result for gpuorch kernel programs.
 *
 * DESIGN
 *   A kernel program fills in one `struct hx_program` (callbacks: validate the
 *   problem, allocate state, fill seeded inputs, run the kernel, compute the
 *   reference, hand back the output) and calls hx_main() from main().  The
 *   harness owns everything else: argument parsing, device discovery, the
 *   correctness trials (fresh seeded inputs, poisoned outputs, GPU comparison
 *   against a higher-precision reference, optional FP64 CPU spot check), the
 *   timing loop (events, L2 flush, persisting-L2 reset, input rotation, NVML
 *   clock per sample, stop rules), the profile mode (a few plain launches for
 *   Nsight Compute) and the single JSON line on stdout.  The
 *   result fields are documented in docs/result-contract.md; keep both in step.
 *
 *   Exit codes: 0 the program ran (whatever "status" says; no CUDA device is
 *   status "skipped", exit 0); 1 a CUDA/cuBLAS error (status "error");
 *   2 bad or missing arguments (status "error").
 *
 *   Programs never exit on their own: they report CUDA errors through
 *   HX_CK()/HX_CK_LAUNCH(), which print the error result and exit 1.
 */
#ifndef GPUORCH_HARNESS_H
#define GPUORCH_HARNESS_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#define HX_MAX_PARAMS 16
#define HX_NAME_MAX 32
#define HX_VALUE_MAX 64

/* ---- problem parameters (--KEY=VALUE that are not harness options) ---- */

struct hx_param {
	const char *name;
	const char *defval; /* NULL: required */
	const char *help;
};

struct hx_problem {
	int n;
	char name[HX_MAX_PARAMS][HX_NAME_MAX];
	char value[HX_MAX_PARAMS][HX_VALUE_MAX];
};

long long hx_get_int(const struct hx_problem *p, const char *name);
double hx_get_double(const struct hx_problem *p, const char *name);
const char *hx_get_str(const struct hx_problem *p, const char *name);
void hx_set_int(struct hx_problem *p, const char *name, long long v);

/* ---- outputs ---- */

enum hx_dtype { HX_F16 = 0, HX_F32 = 1 };

struct hx_output {
	void *ptr;          /* device output buffer */
	size_t count;       /* elements */
	enum hx_dtype dtype;
	const float *ref;   /* device reference (FP32 storage of an FP32/FP64-accumulated value) */
};

/* validate() results */
enum { HX_VALID = 0, HX_UNSUPPORTED = 1, HX_BAD_ARGS = 2 };

struct hx_program {
	const char *name;
	const struct hx_param *params;
	int nparams;
	/* default tolerances when none come on the command line; < 0: not gated */
	double tol_max_abs, tol_max_rel, tol_rel_l2;
	/* HX_VALID, HX_UNSUPPORTED (status skipped, reason=why) or HX_BAD_ARGS (error, exit 2) */
	int (*validate)(const struct hx_problem *p, const struct cudaDeviceProp *prop, char *why, size_t whylen);
	/* extra shapes for check mode (may be NULL); returns how many were written */
	int (*edge_shapes)(const struct hx_problem *p, struct hx_problem *out, int max);
	double (*flops)(const struct hx_problem *p);
	double (*bytes)(const struct hx_problem *p);   /* fewest bytes the problem must move */
	size_t (*input_bytes)(const struct hx_problem *p); /* one input set */
	void *(*create)(const struct hx_problem *p, int nsets);
	void (*destroy)(void *st);
	void (*fill)(void *st, int set, uint64_t seed);
	void (*run)(void *st, int set, cudaStream_t s);
	void (*reference)(void *st, int set, cudaStream_t s);
	struct hx_output (*output)(void *st);
	/* optional FP64 CPU spot check of the output (already synchronized);
	 * returns points checked; *max_abs and *ref_max_abs: kernel and GPU
	 * reference against the CPU value; *scale: max |cpu value| */
	int (*cpu_check)(void *st, int set, uint64_t seed, double *max_abs, double *ref_max_abs, double *scale);
};

int hx_main(int argc, char **argv, const struct hx_program *prog);

/* ---- compile-time configuration (the result's "config" object) ---- */

/* Record KEY = VALUE in the "config" object of every result printed from now
 * on (errors included); setting a key again replaces its value in place, so
 * keys keep the order of their first setting.  At most HX_MAX_CONFIG keys
 * (a static table of HX_MAX_CONFIG x ~112 bytes; attn_wgmma sets up to 30):
 * a key past that, or one of HX_NAME_MAX or more characters, is not recorded
 * and the harness says so on stderr, once a key.  String values are cut at
 * HX_VALUE_MAX - 1 characters.  Safe to call from a static initializer (the
 * table is zero-initialized). */
#define HX_MAX_CONFIG 64
void hx_config_int(const char *key, long long v);
void hx_config_str(const char *key, const char *v);

/* ---- error checks ---- */

void hx_cuda_fail(cudaError_t e, const char *what, const char *file, int line);
void hx_failf(int exit_code, const char *fmt, ...);
#define HX_CK(call) do { cudaError_t hx_e_ = (call); \
	if (hx_e_ != cudaSuccess) hx_cuda_fail(hx_e_, #call, __FILE__, __LINE__); } while (0)
#define HX_CK_LAUNCH() HX_CK(cudaGetLastError())

/* ---- helpers shared by programs ---- */

/* uniform [lo, hi) fill of device buffers from a seed (counter-based hash; same
 * values on host via hx_hash_uniform) */
void hx_fill_uniform_f16(void *dptr, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s);
void hx_fill_uniform_f32(float *dptr, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s);
float hx_hash_uniform(uint64_t seed, uint64_t i, float lo, float hi); /* host twin */
uint64_t hx_splitmix(uint64_t x);
void *hx_malloc_dev(size_t bytes);   /* checked cudaMalloc */
void hx_free_dev(void *p);
float hx_half_to_float(uint16_t h);  /* host */

/* ---- timing (also used by kernels/peaks) ---- */

struct hx_timing_opts {
	int min_samples;        /* >= 10 */
	double min_time_s;      /* GPU time summed over kept samples, default 0.5 */
	double max_time_s;      /* wall-clock cap, default 10 */
	double max_cv_pct;      /* default 0.5 */
	int max_samples;        /* default 100000 */
	double throttle_pct;    /* a sample whose SM clock is under this % of the max clock is dropped */
	double throttle_recovery_s; /* sleep after a dropped sample, default 0.05 */
	int warmup_min;         /* default 3 launches, and at least 0.05 s */
	int flush_l2;           /* default 1 */
};

struct hx_timing {
	int n;                  /* kept samples */
	double min, p10, median, mean, p90, max, cv_pct, total_gpu_s, wall_s;
	const char *stop_rule;  /* "cv" | "plateau" | "time_cap" | "max_samples" */
	int dropped_throttled;
	int warmup;
	double event_overhead_us;
	size_t l2_flush_bytes;
	int input_sets;
	double clock_mhz_median;   /* of kept samples; 0 when unknown */
	int clock_known;
	unsigned long long throttle_reasons; /* NVML clock event reasons seen after kept samples (OR) */
	int reasons_known;
	float *samples_us;      /* kept samples in order (malloc'd) */
};

typedef void (*hx_run_fn)(void *arg, int set, cudaStream_t s);
void hx_timing_defaults(struct hx_timing_opts *o);
void hx_measure(hx_run_fn fn, void *arg, int nsets, cudaStream_t s,
		const struct hx_timing_opts *o, struct hx_timing *t);

/* ---- JSON writing (one growable buffer; values escaped here) ---- */

struct hx_json {
	char *buf;
	size_t len, cap;
	int need_comma;
};
void hx_json_raw(struct hx_json *j, const char *s);
void hx_json_key(struct hx_json *j, const char *key);   /* writes "key": with comma handling */
void hx_json_str(struct hx_json *j, const char *key, const char *v);  /* v NULL: null */
void hx_json_num(struct hx_json *j, const char *key, double v);       /* non-finite: null */
void hx_json_int(struct hx_json *j, const char *key, long long v);
void hx_json_bool(struct hx_json *j, const char *key, int v);
void hx_json_open(struct hx_json *j, const char *key, char bracket);   /* key NULL inside arrays */
void hx_json_close(struct hx_json *j, char bracket);

/* Standard result envelope, used by hx_main and kernels/peaks. */
void hx_begin_result(struct hx_json *j, const char *program, const char *mode, const char *status,
		     const char *reason, const struct hx_problem *p);
void hx_json_device(struct hx_json *j);          /* "device":{...} from the probed device */
void hx_json_timing(struct hx_json *j, const struct hx_timing *t);
void hx_emit(struct hx_json *j);                 /* closes the object, prints it, frees */
/* The program (and mode, when not NULL) the results printed from now on
 * name, for a program with its own main() that fails on its arguments
 * before hx_device_init. */
void hx_set_program(const char *program, const char *mode);
/* Probe device 0; on no device prints the "skipped" result and exits 0. */
void hx_device_init(const char *program, const char *mode, const struct hx_problem *p);
const struct cudaDeviceProp *hx_device_prop(void);

#endif
