/* peaks.cu -- measures the two ceilings the harness's floor uses: FP16 matrix rate and copy bandwidth.
 *
 * --mode=bench: a device-to-device cudaMemcpy of --copy-mib MiB (bytes read plus
 * written) and a cuBLAS FP16 GEMM (FP32 compute) of --gemm-n cubed, each timed
 * with the harness's timing loop (L2 flush, events); prints the medians' rates
 * under "peaks".  Pass them to kernel programs as --peak-tflops/--peak-gbps.
 * --mode=check has nothing to check: status "skipped".
 */
#include "../harness/harness.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct copy_arg {
	void *src, *dst;
	size_t bytes;
};
static void run_copy(void *a, int set, cudaStream_t s)
{
	struct copy_arg *c = (struct copy_arg *)a;
	(void)set;
	HX_CK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, s));
}

struct gemm_arg {
	cublasHandle_t h;
	__half *a, *b, *c;
	int n;
};
static void run_gemm(void *a, int set, cudaStream_t s)
{
	struct gemm_arg *g = (struct gemm_arg *)a;
	float one = 1.f, zero = 0.f;
	(void)set;
	cublasSetStream(g->h, s);
	cublasStatus_t st = cublasGemmEx(g->h, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one, g->a, CUDA_R_16F, g->n,
					 g->b, CUDA_R_16F, g->n, &zero, g->c, CUDA_R_16F, g->n, CUBLAS_COMPUTE_32F,
					 CUBLAS_GEMM_DEFAULT);
	if (st != CUBLAS_STATUS_SUCCESS)
		hx_failf(1, "cublasGemmEx: %s", cublasGetStatusString(st));
}

int main(int argc, char **argv)
{
	static struct hx_problem p;
	const char *mode = NULL;
	long copy_mib = 1024, gn = 8192;
	double max_time = 5;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--mode=", 7))
			mode = argv[i] + 7;
		else if (!strncmp(argv[i], "--copy-mib=", 11))
			copy_mib = atol(argv[i] + 11);
		else if (!strncmp(argv[i], "--gemm-n=", 9))
			gn = atol(argv[i] + 9);
		else if (!strncmp(argv[i], "--max-time-s=", 13))
			max_time = atof(argv[i] + 13);
		else {
			hx_device_init("peaks", mode ? mode : "bench", &p); /* no device: skipped */
			hx_failf(2, "'%s': unknown argument (known: --mode, --copy-mib, --gemm-n, --max-time-s)", argv[i]);
		}
	}
	hx_set_int(&p, "copy_mib", copy_mib);
	hx_set_int(&p, "gemm_n", gn);
	if (!mode || (strcmp(mode, "bench") && strcmp(mode, "check"))) {
		hx_device_init("peaks", "bench", &p);
		hx_failf(2, "missing or bad --mode=check|bench");
	}
	hx_device_init("peaks", mode, &p);
	struct hx_json j;
	if (!strcmp(mode, "check")) {
		hx_begin_result(&j, "peaks", mode, "skipped", "measurement program: nothing to check", &p);
		hx_json_device(&j);
		hx_emit(&j);
		return 0;
	}
	cudaStream_t s;
	HX_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	struct hx_timing_opts o;
	hx_timing_defaults(&o);
	o.max_time_s = max_time;

	struct copy_arg c;
	c.bytes = (size_t)copy_mib << 20;
	c.src = hx_malloc_dev(c.bytes);
	c.dst = hx_malloc_dev(c.bytes);
	hx_fill_uniform_f32((float *)c.src, c.bytes / 4, 1, -1, 1, s);
	struct hx_timing tc;
	hx_measure(run_copy, &c, 1, s, &o, &tc);
	hx_free_dev(c.src);
	hx_free_dev(c.dst);

	struct gemm_arg g;
	g.n = (int)gn;
	size_t e = (size_t)gn * gn;
	g.a = (__half *)hx_malloc_dev(e * 2);
	g.b = (__half *)hx_malloc_dev(e * 2);
	g.c = (__half *)hx_malloc_dev(e * 2);
	hx_fill_uniform_f16(g.a, e, 2, -1, 1, s);
	hx_fill_uniform_f16(g.b, e, 3, -1, 1, s);
	if (cublasCreate(&g.h) != CUBLAS_STATUS_SUCCESS)
		hx_failf(1, "cublasCreate failed");
	struct hx_timing tg;
	hx_measure(run_gemm, &g, 1, s, &o, &tg);
	cublasDestroy(g.h);
	hx_free_dev(g.a);
	hx_free_dev(g.b);
	hx_free_dev(g.c);

	double gbps = 2.0 * c.bytes / tc.median / 1e3;
	double tflops = 2.0 * gn * gn * (double)gn / tg.median / 1e6;
	fprintf(stderr, "peaks: copy %.0f GB/s (median %.1f us), fp16 gemm %.1f TFLOP/s (median %.1f us)\n", gbps,
		tc.median, tflops, tg.median);
	hx_begin_result(&j, "peaks", mode, "pass", NULL, &p);
	hx_json_device(&j);
	hx_json_open(&j, "peaks", '{');
	hx_json_num(&j, "gbps_copy", gbps);
	hx_json_num(&j, "tflops_f16", tflops);
	hx_json_num(&j, "copy_median_us", tc.median);
	hx_json_num(&j, "copy_cv_pct", tc.cv_pct);
	hx_json_num(&j, "gemm_median_us", tg.median);
	hx_json_num(&j, "gemm_cv_pct", tg.cv_pct);
	hx_json_close(&j, '}');
	hx_json_timing(&j, &tg);
	hx_emit(&j);
	free(tc.samples_us);
	free(tg.samples_us);
	return 0;
}
