/* gemm_cublas.cu -- dense FP16 GEMM through cuBLAS (FP32 compute): the baseline of the BSR experiment.
 *
 * C[M,N] = A[M,K] · B[K,N], all FP16 row-major, handed to column-major cuBLAS
 * as Cᵀ = Bᵀ·Aᵀ.  `block` and `topk` are accepted and ignored so that the
 * program runs on the BSR experiment's problem list (dense = every block).
 */
#include "../harness/harness.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CB_CK(call) do { cublasStatus_t cb_s_ = (call); \
	if (cb_s_ != CUBLAS_STATUS_SUCCESS) hx_failf(1, "cuBLAS error %d (%s) in '%s' at %s:%d", (int)cb_s_, \
		cublasGetStatusString(cb_s_), #call, __FILE__, __LINE__); } while (0)

__global__ void gemm_nn_ref_kernel(const __half *A, const __half *B, float *C, int M, int N, int K)
{
	__shared__ double sa[16][17], sb[16][17];
	int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
	double acc = 0;
	for (int k0 = 0; k0 < K; k0 += 16) {
		int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
		sa[threadIdx.y][threadIdx.x] = (r < M && ka < K) ? (double)__half2float(A[(size_t)r * K + ka]) : 0.0;
		sb[threadIdx.y][threadIdx.x] = (c < N && kb < K) ? (double)__half2float(B[(size_t)kb * N + c]) : 0.0;
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < 16; kk++)
			acc += sa[threadIdx.y][kk] * sb[kk][threadIdx.x];
		__syncthreads();
	}
	if (r < M && c < N)
		C[(size_t)r * N + c] = (float)acc;
}

static const struct hx_param params[] = {
	{"M", NULL, "rows of A and C"},
	{"N", NULL, "columns of B and C"},
	{"K", NULL, "inner dimension"},
	{"block", "0", "ignored (BSR problems)"},
	{"topk", "0", "ignored (BSR problems)"},
};

struct st {
	int M, N, K, nsets;
	__half **a, **b, *c;
	float *ref;
	cublasHandle_t h;
};

static void dims(const struct hx_problem *p, struct st *s)
{
	s->M = (int)hx_get_int(p, "M");
	s->N = (int)hx_get_int(p, "N");
	s->K = (int)hx_get_int(p, "K");
}

static int validate(const struct hx_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	struct st s;
	(void)prop;
	dims(p, &s);
	if (s.M < 1 || s.N < 1 || s.K < 1 || s.M > (1 << 20) || s.N > (1 << 20) || s.K > (1 << 20)) {
		snprintf(why, n, "M, N, K must be in 1..2^20");
		return HX_BAD_ARGS;
	}
	return HX_VALID;
}

static int edges(const struct hx_problem *p, struct hx_problem *out, int max)
{
	const int s[][3] = {{1, 1, 1}, {77, 130, 300}, {256, 128, 4096}};
	int k = 0;
	for (int i = 0; i < 3 && k < max; i++) {
		out[k] = *p;
		hx_set_int(&out[k], "M", s[i][0]);
		hx_set_int(&out[k], "N", s[i][1]);
		hx_set_int(&out[k], "K", s[i][2]);
		k++;
	}
	return k;
}

static double flops(const struct hx_problem *p)
{
	struct st s;
	dims(p, &s);
	return 2.0 * s.M * s.N * (double)s.K;
}

static double bytes(const struct hx_problem *p)
{
	struct st s;
	dims(p, &s);
	return 2.0 * ((double)s.M * s.K + (double)s.K * s.N + (double)s.M * s.N);
}

static size_t input_bytes(const struct hx_problem *p)
{
	struct st s;
	dims(p, &s);
	return 2 * ((size_t)s.M * s.K + (size_t)s.K * s.N);
}

static void *create(const struct hx_problem *p, int nsets)
{
	struct st *s = (struct st *)calloc(1, sizeof *s);
	dims(p, s);
	s->nsets = nsets;
	s->a = (__half **)calloc(nsets, sizeof(void *));
	s->b = (__half **)calloc(nsets, sizeof(void *));
	for (int i = 0; i < nsets; i++) {
		s->a[i] = (__half *)hx_malloc_dev((size_t)s->M * s->K * 2);
		s->b[i] = (__half *)hx_malloc_dev((size_t)s->K * s->N * 2);
	}
	s->c = (__half *)hx_malloc_dev((size_t)s->M * s->N * 2);
	s->ref = (float *)hx_malloc_dev((size_t)s->M * s->N * 4);
	CB_CK(cublasCreate(&s->h));
	return s;
}

static void destroy(void *v)
{
	struct st *s = (struct st *)v;
	HX_CK(cudaDeviceSynchronize());
	CB_CK(cublasDestroy(s->h));
	for (int i = 0; i < s->nsets; i++) {
		hx_free_dev(s->a[i]);
		hx_free_dev(s->b[i]);
	}
	hx_free_dev(s->c);
	hx_free_dev(s->ref);
	free(s->a);
	free(s->b);
	free(s);
}

static void fill(void *v, int set, uint64_t seed)
{
	struct st *s = (struct st *)v;
	hx_fill_uniform_f16(s->a[set], (size_t)s->M * s->K, hx_splitmix(seed * 2), -1.f, 1.f, 0);
	hx_fill_uniform_f16(s->b[set], (size_t)s->K * s->N, hx_splitmix(seed * 2 + 1), -1.f, 1.f, 0);
	HX_CK(cudaDeviceSynchronize());
}

static void run(void *v, int set, cudaStream_t str)
{
	struct st *s = (struct st *)v;
	float one = 1.f, zero = 0.f;
	CB_CK(cublasSetStream(s->h, str));
	CB_CK(cublasGemmEx(s->h, CUBLAS_OP_N, CUBLAS_OP_N, s->N, s->M, s->K, &one, s->b[set], CUDA_R_16F, s->N,
			   s->a[set], CUDA_R_16F, s->K, &zero, s->c, CUDA_R_16F, s->N, CUBLAS_COMPUTE_32F,
			   CUBLAS_GEMM_DEFAULT));
}

static void reference(void *v, int set, cudaStream_t str)
{
	struct st *s = (struct st *)v;
	dim3 grid((s->N + 15) / 16, (s->M + 15) / 16);
	gemm_nn_ref_kernel<<<grid, dim3(16, 16), 0, str>>>(s->a[set], s->b[set], s->ref, s->M, s->N, s->K);
}

static struct hx_output output(void *v)
{
	struct st *s = (struct st *)v;
	struct hx_output o = {s->c, (size_t)s->M * s->N, HX_F16, s->ref};
	return o;
}

static int cpu_check(void *v, int set, uint64_t seed, double *max_abs, double *ref_max_abs, double *scale)
{
	struct st *s = (struct st *)v;
	uint16_t *ra = (uint16_t *)malloc((size_t)s->K * 2), *cb = (uint16_t *)malloc((size_t)s->K * 2);
	*max_abs = *ref_max_abs = *scale = 0;
	for (int t = 0; t < 16; t++) {
		uint64_t h = hx_splitmix(seed * 911 + t);
		int i = t == 0 ? 0 : (t == 1 ? s->M - 1 : (int)(h % s->M));
		int j = t == 0 ? 0 : (t == 1 ? s->N - 1 : (int)((h >> 32) % s->N));
		HX_CK(cudaMemcpy(ra, s->a[set] + (size_t)i * s->K, (size_t)s->K * 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy2D(cb, 2, s->b[set] + j, (size_t)s->N * 2, 2, s->K, cudaMemcpyDeviceToHost));
		uint16_t got;
		float rf;
		HX_CK(cudaMemcpy(&got, s->c + (size_t)i * s->N + j, 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(&rf, s->ref + (size_t)i * s->N + j, 4, cudaMemcpyDeviceToHost));
		double want = 0;
		for (int k = 0; k < s->K; k++)
			want += (double)hx_half_to_float(ra[k]) * hx_half_to_float(cb[k]);
		double e = fabs(hx_half_to_float(got) - want);
		*max_abs = isnan(e) ? INFINITY : fmax(*max_abs, e);
		*ref_max_abs = fmax(*ref_max_abs, fabs(rf - want));
		*scale = fmax(*scale, fabs(want));
	}
	free(ra);
	free(cb);
	return 16;
}

int main(int argc, char **argv)
{
	static const struct hx_program prog = {
		"gemm_cublas", params, 5, -1, -1, 2e-3,
		validate, edges, flops, bytes, input_bytes, create, destroy, fill, run, reference, output, cpu_check,
	};
	return hx_main(argc, argv, &prog);
}
