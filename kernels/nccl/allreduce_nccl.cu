/* allreduce_nccl.cu -- NCCL all-reduce bus bandwidth on the GPUs of one host, against its link's peak.
 *
 * One process drives every GPU it sees (--ranks of them, default 2; gpuorch
 * sets CUDA_VISIBLE_DEVICES to a "gpus": N step's GPUs) through
 * ncclCommInitAll and ncclGroupStart/End. NCCL is loaded at run time
 * (nccl_api.h): no NCCL is status "skipped" with where it looked, as are
 * fewer GPUs than --ranks and no GPU at all. --nccl_lib=PATH (a problem
 * parameter) names where NCCL is when it is in none of the usual places.
 *
 * For each size from --min-bytes (8 KiB) to --max-bytes (1 GiB), doubling:
 *   correctness: every rank's FP32 input is fresh (seeded by size and rank),
 *     small nonzero integers, so the sum is exact in FP32; every output is
 *     poisoned with the all-ones pattern (NaN) first; after one all-reduce a
 *     kernel on each GPU counts the outputs that differ from the sum it
 *     recomputes from the seeds (a NaN never equals). Any wrong output is
 *     status "fail" with the first size, rank and count.
 *   timing: --warmup (5) all-reduces, then --iters (20) repetitions, each
 *     timed by CUDA events on every rank's stream around one grouped
 *     all-reduce; a repetition's time is the slowest rank's. Median, p10,
 *     p90, min, max and CV over the repetitions.
 *   algbw = bytes / median; busbw = algbw x 2(n-1)/n (nccl-tests'
 *     definition: what each GPU's link carried, per direction).
 * The result (docs/result-contract.md) has "sizes" (one row a size), the
 * largest size's timing as "timing", "busbw_gbps" and "algbw_gbps" of the
 * largest size as figures ("figures", unit GB/s, "bound": "link": gpuorch
 * holds busbw to the link's peak), and "link": the topology NVML reports
 * for each GPU (active NVLink links, PCIe generation and width), from which
 * gpuorch computes that peak (orchestrator/store/peaks.c).
 *
 * --mode=check runs the correctness pass only; --mode=profile is refused
 * (exit 2): NCCL's kernels are not ours to profile. */
#include "../harness/harness.h"
#include "nccl_api.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS 16

struct opts {
	const char *mode;
	int ranks, warmup, iters;
	long long min_bytes, max_bytes;
	unsigned long long seed;
	const char *nccl_lib;   /* where NCCL is, when the spec says (nccl_api.h) */
};

struct rank {
	int dev;
	ncclComm_t comm;
	cudaStream_t s;
	float *send, *recv;
	unsigned long long *bad;
	cudaEvent_t t0, t1;
};

static struct nccl_api g_nccl;

#define NCK(call)                                                                              \
	do {                                                                                   \
		ncclResult_t r_ = (call);                                                      \
		if (r_ != ncclSuccess)                                                         \
			hx_failf(1, "%s failed: %s (%s:%d)", #call, g_nccl.GetErrorString(r_), \
				 __FILE__, __LINE__);                                          \
	} while (0)

/* rank r's input element i: an integer in [-64, 64] \ {0}, from the seed */
__host__ __device__ static inline float input_at(unsigned long long seed, int r, size_t i)
{
	unsigned long long x = seed * 0x9E3779B97F4A7C15ull + (unsigned long long)r * 0xBF58476D1CE4E5B9ull + i;
	x ^= x >> 31;
	x *= 0x94D049BB133111EBull;
	x ^= x >> 29;
	int v = (int)(x % 128) - 64;
	return (float)(v >= 0 ? v + 1 : v);
}

__global__ static void fill_input(float *p, size_t n, unsigned long long seed, int r)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = input_at(seed, r, i);
}

__global__ static void count_wrong(const float *out, size_t n, unsigned long long seed, int nranks,
				   unsigned long long *bad)
{
	unsigned long long mine = 0;
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		float want = 0;
		for (int r = 0; r < nranks; r++)
			want += input_at(seed, r, i);
		if (!(out[i] == want))
			mine++;
	}
	if (mine)
		atomicAdd(bad, mine);
}

static long long arg_ll(const char *arg, const char *val, long long lo, long long hi)
{
	char *end;
	long long v = strtoll(val, &end, 10);
	if (!*val || *end || v < lo || v > hi)
		hx_failf(2, "'%s': expected an integer %lld..%lld", arg, lo, hi);
	return v;
}

/* the harness's options gpuorch may pass (docs/result-contract.md) that
 * mean nothing here: accepted and ignored */
static int harness_option(const char *key)
{
	static const char *const k[] = { "tol-max-abs", "tol-max-rel", "tol-rel-l2", "tol-max_abs", "tol-max_rel",
					  "tol-rel_l2", "trials", "max-time-s", "min-time-s", "min-samples",
					  "max-samples", "max-cv-pct", "throttle-pct", "no-flush", "peak-tflops",
					  "peak-gbps", "json-samples", "launches", "max_time_s" };
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
		if (!strcmp(k[i], key))
			return 1;
	return 0;
}

static void parse(int argc, char **argv, struct opts *o, struct hx_problem *p)
{
	memset(o, 0, sizeof *o);
	o->ranks = 2;
	o->warmup = 5;
	o->iters = 20;
	o->min_bytes = 8 << 10;
	o->max_bytes = 1LL << 30;
	o->seed = 1;
	hx_set_program("allreduce_nccl", NULL);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '=');
		char key[64];
		size_t kl = eq ? (size_t)(eq - a - 2) : strlen(a) - 2;
		if (strncmp(a, "--", 2) || kl == 0 || kl >= sizeof key)
			hx_failf(2, "'%s': expected --KEY=VALUE", a);
		memcpy(key, a + 2, kl);
		key[kl] = 0;
		const char *v = eq ? eq + 1 : "";
		if (!strcmp(key, "mode")) {
			o->mode = v;
			if (!strcmp(v, "check") || !strcmp(v, "bench"))
				hx_set_program("allreduce_nccl", v);
		} else if (!strcmp(key, "ranks"))
			o->ranks = (int)arg_ll(a, v, 1, MAX_RANKS);
		else if (!strcmp(key, "warmup"))
			o->warmup = (int)arg_ll(a, v, 0, 1000);
		else if (!strcmp(key, "iters"))
			o->iters = (int)arg_ll(a, v, 1, 100000);
		else if (!strcmp(key, "min_bytes"))
			o->min_bytes = arg_ll(a, v, 4, 1LL << 36);
		else if (!strcmp(key, "max_bytes"))
			o->max_bytes = arg_ll(a, v, 4, 1LL << 36);
		else if (!strcmp(key, "seed"))
			o->seed = (unsigned long long)arg_ll(a, v, 0, 1LL << 62);
		else if (!strcmp(key, "nccl_lib"))
			o->nccl_lib = v;
		else if (!harness_option(key))
			hx_failf(2, "'%s': unknown argument (known: --mode, --ranks, --min_bytes, --max_bytes, "
				    "--warmup, --iters, --seed, --nccl_lib, and the harness's options)", a);
	}
	hx_set_int(p, "ranks", o->ranks);
	hx_set_int(p, "min_bytes", o->min_bytes);
	hx_set_int(p, "max_bytes", o->max_bytes);
	hx_set_int(p, "warmup", o->warmup);
	hx_set_int(p, "iters", o->iters);
}

static void all_reduce(struct rank *rk, int n, size_t count)
{
	NCK(g_nccl.GroupStart());
	for (int r = 0; r < n; r++)
		NCK(g_nccl.AllReduce(rk[r].send, rk[r].recv, count, ncclFloat32, ncclSum, rk[r].comm, rk[r].s));
	NCK(g_nccl.GroupEnd());
}

static void sync_all(struct rank *rk, int n)
{
	for (int r = 0; r < n; r++) {
		HX_CK(cudaSetDevice(rk[r].dev));
		HX_CK(cudaStreamSynchronize(rk[r].s));
	}
}

/* fresh inputs, poisoned outputs, one all-reduce, the wrong outputs counted
 * per rank into bad[] (0: all right) */
static void check_size(struct rank *rk, int n, size_t count, unsigned long long seed, unsigned long long *bad)
{
	for (int r = 0; r < n; r++) {
		HX_CK(cudaSetDevice(rk[r].dev));
		fill_input<<<1024, 256, 0, rk[r].s>>>(rk[r].send, count, seed, r);
		HX_CK_LAUNCH();
		HX_CK(cudaMemsetAsync(rk[r].recv, 0xFF, count * sizeof(float), rk[r].s));
		HX_CK(cudaMemsetAsync(rk[r].bad, 0, sizeof *rk[r].bad, rk[r].s));
	}
	sync_all(rk, n);
	all_reduce(rk, n, count);
	for (int r = 0; r < n; r++) {
		HX_CK(cudaSetDevice(rk[r].dev));
		count_wrong<<<1024, 256, 0, rk[r].s>>>(rk[r].recv, count, seed, n, rk[r].bad);
		HX_CK_LAUNCH();
		HX_CK(cudaMemcpyAsync(&bad[r], rk[r].bad, sizeof bad[r], cudaMemcpyDeviceToHost, rk[r].s));
	}
	sync_all(rk, n);
}

static int cmp_f(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

static double pct(const float *sorted, int n, double q)
{
	double pos = q * (n - 1);
	int lo = (int)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
	return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/* warm-up, then iters repetitions; t gets the statistics, its samples_us
 * malloc'd in order */
static void time_size(struct rank *rk, int n, size_t count, const struct opts *o, struct hx_timing *t)
{
	memset(t, 0, sizeof *t);
	for (int w = 0; w < o->warmup; w++)
		all_reduce(rk, n, count);
	sync_all(rk, n);
	t->samples_us = (float *)malloc(sizeof(float) * o->iters);
	float *sorted = (float *)malloc(sizeof(float) * o->iters);
	if (!t->samples_us || !sorted)
		hx_failf(1, "out of memory");
	double sum = 0, sq = 0;
	for (int it = 0; it < o->iters; it++) {
		for (int r = 0; r < n; r++) {
			HX_CK(cudaSetDevice(rk[r].dev));
			HX_CK(cudaEventRecord(rk[r].t0, rk[r].s));
		}
		all_reduce(rk, n, count);
		float worst = 0;
		for (int r = 0; r < n; r++) {
			HX_CK(cudaSetDevice(rk[r].dev));
			HX_CK(cudaEventRecord(rk[r].t1, rk[r].s));
		}
		for (int r = 0; r < n; r++) {
			float ms;
			HX_CK(cudaSetDevice(rk[r].dev));
			HX_CK(cudaEventSynchronize(rk[r].t1));
			HX_CK(cudaEventElapsedTime(&ms, rk[r].t0, rk[r].t1));
			if (ms > worst)
				worst = ms;
		}
		t->samples_us[it] = worst * 1000.f;
		sum += t->samples_us[it];
		sq += (double)t->samples_us[it] * t->samples_us[it];
	}
	memcpy(sorted, t->samples_us, sizeof(float) * o->iters);
	qsort(sorted, o->iters, sizeof(float), cmp_f);
	t->n = o->iters;
	t->min = sorted[0];
	t->max = sorted[o->iters - 1];
	t->p10 = pct(sorted, o->iters, 0.1);
	t->median = pct(sorted, o->iters, 0.5);
	t->p90 = pct(sorted, o->iters, 0.9);
	t->mean = sum / o->iters;
	t->cv_pct = t->mean > 0 ? 100.0 * sqrt(fmax(0, sq / o->iters - t->mean * t->mean)) / t->mean : 0;
	t->total_gpu_s = sum / 1e6;
	t->stop_rule = "max_samples";
	t->warmup = o->warmup;
	t->input_sets = 1;
	free(sorted);
}

static void emit_link(struct hx_json *j, const int *devs, int n)
{
	struct link_gpu lg[MAX_RANKS];
	char why[512];
	int ok = link_read(devs, n, lg, why, sizeof why) == 0;
	hx_json_open(j, "link", '{');
	hx_json_str(j, "source", ok ? "nvml: nvmlDeviceGetNvLinkState (links 0-17), "
				      "nvmlDeviceGetMaxPcieLinkGeneration/Width" : why);
	{
		/* NVLink SHARP reduces in the switch: with more than 2 GPUs busbw may
		 * pass the per-GPU link rate unless it is off (store/linkpeak.c) */
		const char *nvls = getenv("NCCL_NVLS_ENABLE");
		hx_json_str(j, "nvls", nvls && !strcmp(nvls, "0") ? "off" : "default");
	}
	hx_json_open(j, "gpus", '[');
	for (int r = 0; r < n; r++) {
		hx_json_open(j, NULL, '{');
		hx_json_int(j, "rank", r);
		hx_json_str(j, "pci_bus_id", lg[r].bus_id);
		if (lg[r].nvlinks_active >= 0)
			hx_json_int(j, "nvlinks_active", lg[r].nvlinks_active);
		else {
			hx_json_key(j, "nvlinks_active");
			hx_json_raw(j, "null");
		}
		hx_json_int(j, "pcie_gen", lg[r].pcie_gen);
		hx_json_int(j, "pcie_width", lg[r].pcie_width);
		hx_json_close(j, '}');
	}
	hx_json_close(j, ']');
	hx_json_close(j, '}');
}

static void skip(struct hx_json *j, const char *mode, const char *why, const struct hx_problem *p)
{
	fprintf(stderr, "allreduce_nccl: %s\n", why);
	hx_begin_result(j, "allreduce_nccl", mode, "skipped", why, p);
	hx_json_device(j);
	hx_emit(j);
	exit(0);
}

static void open_ranks(struct rank *rk, int n, size_t max_count)
{
	int devs[MAX_RANKS];
	for (int r = 0; r < n; r++)
		devs[r] = rk[r].dev = r;
	ncclComm_t comms[MAX_RANKS];
	NCK(g_nccl.CommInitAll(comms, n, devs));
	for (int r = 0; r < n; r++) {
		rk[r].comm = comms[r];
		HX_CK(cudaSetDevice(r));
		HX_CK(cudaStreamCreateWithFlags(&rk[r].s, cudaStreamNonBlocking));
		rk[r].send = (float *)hx_malloc_dev(max_count * sizeof(float));
		rk[r].recv = (float *)hx_malloc_dev(max_count * sizeof(float));
		rk[r].bad = (unsigned long long *)hx_malloc_dev(sizeof *rk[r].bad);
		HX_CK(cudaEventCreate(&rk[r].t0));
		HX_CK(cudaEventCreate(&rk[r].t1));
	}
}

static void close_ranks(struct rank *rk, int n)
{
	for (int r = 0; r < n; r++) {
		HX_CK(cudaSetDevice(rk[r].dev));
		hx_free_dev(rk[r].send);
		hx_free_dev(rk[r].recv);
		hx_free_dev(rk[r].bad);
		cudaEventDestroy(rk[r].t0);
		cudaEventDestroy(rk[r].t1);
		cudaStreamDestroy(rk[r].s);
		g_nccl.CommDestroy(rk[r].comm);
	}
}

static void emit_size(struct hx_json *j, size_t bytes, const struct hx_timing *t, int n, unsigned long long wrong)
{
	double alg = bytes / t->median / 1e3; /* GB/s: bytes / us / 1e3 */
	hx_json_open(j, NULL, '{');
	hx_json_int(j, "bytes", (long long)bytes);
	hx_json_int(j, "n", t->n);
	hx_json_num(j, "median_us", t->median);
	hx_json_num(j, "p10_us", t->p10);
	hx_json_num(j, "p90_us", t->p90);
	hx_json_num(j, "min_us", t->min);
	hx_json_num(j, "max_us", t->max);
	hx_json_num(j, "cv_pct", t->cv_pct);
	hx_json_num(j, "algbw_gbps", alg);
	hx_json_num(j, "busbw_gbps", alg * 2.0 * (n - 1) / n);
	hx_json_int(j, "wrong", (long long)wrong);
	hx_json_close(j, '}');
}

static void emit_figure(struct hx_json *j, const char *name, double v, const char *bound)
{
	hx_json_open(j, name, '{');
	hx_json_num(j, "value", v);
	hx_json_str(j, "unit", "GB/s");
	hx_json_str(j, "better", "higher");
	if (bound)
		hx_json_str(j, "bound", bound);
	hx_json_close(j, '}');
}

int main(int argc, char **argv)
{
	static struct hx_problem p;
	struct opts o;
	struct hx_json j;
	char why[4096];
	int ndev = 0;

	parse(argc, argv, &o, &p);
	if (!o.mode || (strcmp(o.mode, "check") && strcmp(o.mode, "bench"))) {
		hx_device_init("allreduce_nccl", o.mode && !strcmp(o.mode, "profile") ? "profile" : "bench", &p);
		hx_failf(2, "'--mode=%s': expected check or bench (NCCL's kernels are not profiled here)",
			 o.mode ? o.mode : "");
	}
	if (o.min_bytes > o.max_bytes)
		hx_failf(2, "--min_bytes=%lld is over --max_bytes=%lld", o.min_bytes, o.max_bytes);
	hx_device_init("allreduce_nccl", o.mode, &p); /* no GPU: skipped, exit 0 */
	HX_CK(cudaGetDeviceCount(&ndev));
	if (ndev < o.ranks) {
		snprintf(why, sizeof why, "needs %d GPUs, %d visible (CUDA_VISIBLE_DEVICES=%s): give the step "
			 "\"gpus\": %d", o.ranks, ndev, getenv("CUDA_VISIBLE_DEVICES") ? getenv("CUDA_VISIBLE_DEVICES") : "unset",
			 o.ranks);
		skip(&j, o.mode, why, &p);
	}
	if (nccl_load(&g_nccl, o.nccl_lib, why, sizeof why) != 0)
		skip(&j, o.mode, why, &p);
	fprintf(stderr, "allreduce_nccl: NCCL %d from %s, %d ranks\n", g_nccl.version, g_nccl.path, o.ranks);

	size_t max_count = (size_t)o.max_bytes / sizeof(float);
	struct rank rk[MAX_RANKS];
	open_ranks(rk, o.ranks, max_count);

	int nsizes = 0, devs[MAX_RANKS];
	struct {
		size_t bytes;
		struct hx_timing t;
		unsigned long long wrong;
	} rows[64];
	char fail[512] = "";
	for (long long b = o.min_bytes; b <= o.max_bytes && nsizes < 64; b *= 2) {
		size_t count = (size_t)b / sizeof(float);
		unsigned long long bad[MAX_RANKS], wrong = 0;
		check_size(rk, o.ranks, count, o.seed + (unsigned long long)nsizes, bad);
		for (int r = 0; r < o.ranks; r++) {
			wrong += bad[r];
			if (bad[r] && !fail[0])
				snprintf(fail, sizeof fail, "%zu bytes (seed %llu): rank %d has %llu of %zu outputs "
					 "not the sum of the %d inputs", count * sizeof(float),
					 o.seed + (unsigned long long)nsizes, r, bad[r], count, o.ranks);
		}
		rows[nsizes].bytes = count * sizeof(float);
		rows[nsizes].wrong = wrong;
		memset(&rows[nsizes].t, 0, sizeof rows[nsizes].t);
		if (!strcmp(o.mode, "bench"))
			time_size(rk, o.ranks, count, &o, &rows[nsizes].t);
		nsizes++;
	}
	close_ranks(rk, o.ranks);

	hx_begin_result(&j, "allreduce_nccl", o.mode, fail[0] ? "fail" : "pass", fail[0] ? fail : NULL, &p);
	hx_json_device(&j);
	hx_json_open(&j, "nccl", '{');
	hx_json_int(&j, "version", g_nccl.version);
	hx_json_str(&j, "library", g_nccl.path);
	hx_json_int(&j, "ranks", o.ranks);
	hx_json_str(&j, "datatype", "float32");
	hx_json_str(&j, "op", "sum");
	hx_json_close(&j, '}');
	for (int r = 0; r < o.ranks; r++)
		devs[r] = r;
	emit_link(&j, devs, o.ranks);
	hx_json_open(&j, "correctness", '{');
	hx_json_bool(&j, "pass", !fail[0]);
	hx_json_str(&j, "verdict", "every output of every size equals the exact FP32 sum of the ranks' "
				   "nonzero integer inputs (outputs poisoned with NaN first)");
	hx_json_close(&j, '}');
	if (!strcmp(o.mode, "bench")) {
		const struct hx_timing *last = &rows[nsizes - 1].t;
		double alg = rows[nsizes - 1].bytes / last->median / 1e3;
		hx_json_open(&j, "sizes", '[');
		for (int i = 0; i < nsizes; i++)
			emit_size(&j, rows[i].bytes, &rows[i].t, o.ranks, rows[i].wrong);
		hx_json_close(&j, ']');
		hx_json_int(&j, "bytes", (long long)rows[nsizes - 1].bytes);
		hx_json_num(&j, "algbw_gbps", alg);
		hx_json_num(&j, "busbw_gbps", alg * 2.0 * (o.ranks - 1) / o.ranks);
		hx_json_open(&j, "figures", '{');
		emit_figure(&j, "busbw_gbps", alg * 2.0 * (o.ranks - 1) / o.ranks, "link");
		emit_figure(&j, "algbw_gbps", alg, NULL);
		hx_json_close(&j, '}');
		hx_json_timing(&j, last);
	} else {
		hx_json_open(&j, "sizes", '[');
		for (int i = 0; i < nsizes; i++) {
			hx_json_open(&j, NULL, '{');
			hx_json_int(&j, "bytes", (long long)rows[i].bytes);
			hx_json_int(&j, "wrong", (long long)rows[i].wrong);
			hx_json_close(&j, '}');
		}
		hx_json_close(&j, ']');
	}
	hx_emit(&j);
	for (int i = 0; i < nsizes; i++)
		free(rows[i].t.samples_us);
	return 0;
}
