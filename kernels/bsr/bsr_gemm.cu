/* bsr_gemm.cu -- seed 004's block-sparse GEMM: C = A_bsr · B with WMMA and a cp.async pipeline.
 *
 * A is M×K in BSR form with 128×128 blocks and exactly `topk` nonzero blocks per
 * block-row (columns drawn per seed, sorted); B is dense K×N, C dense M×N, all
 * FP16 row-major, FP32 accumulation.  Problem of the seed: M=N=K=8192, topk=16.
 *
 * DESIGN
 *   One CTA (8 warps) = one block-row × 128 columns of C; warps tile it 2×4, each
 *   warp 64×32 = 4×2 WMMA m16n16k16 accumulators.  The CTA walks its topk blocks
 *   32 columns of K at a time (4 steps a block): the A slice (128×32, from the
 *   block's values) and the matching B slice (32×128, rows col·128+k of B) land
 *   in shared memory through a 3-stage cp.async pipeline, rows padded by 8 halves.
 *   Epilogue: accumulators → shared memory (FP32) → FP16, 16-byte stores.
 *   FLOP model: 2·(M/128)·topk·128·128·N useful multiply-adds ×2.
 */
#include "../harness/harness.h"

#include <cuda_fp16.h>
#include <math.h>
#include <mma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

using namespace nvcuda;

#define BLK 128
#define BK 32
#define BN 128
#define STAGES 3
#define LDA (BK + 8)
#define LDB (BN + 8)
#define LDC (BN + 4)
#define A_STAGE (BLK * LDA)  /* halves */
#define B_STAGE (BK * LDB)
#define PIPE_BYTES (STAGES * (A_STAGE + B_STAGE) * 2)
#define EPI_BYTES (BLK * LDC * 4)
#define SMEM_BYTES (PIPE_BYTES > EPI_BYTES ? PIPE_BYTES : EPI_BYTES)

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem)
{
	unsigned s = (unsigned)__cvta_generic_to_shared(smem);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void load_stage(__half *sA, __half *sB, const __half *vals, const __half *B,
					   const int *cols, int br, int topk, int t, int n0, int N)
{
	int bi = t / (BLK / BK), kk = (t % (BLK / BK)) * BK;
	const __half *a = vals + ((size_t)br * topk + bi) * BLK * BLK;
	int kb = cols[br * topk + bi] * BLK + kk;
	for (int i = threadIdx.x; i < BLK * (BK / 8); i += 256) {
		int r = i / (BK / 8), c = (i % (BK / 8)) * 8;
		cp_async16(&sA[r * LDA + c], a + (size_t)r * BLK + kk + c);
	}
	for (int i = threadIdx.x; i < BK * (BN / 8); i += 256) {
		int r = i / (BN / 8), c = (i % (BN / 8)) * 8;
		cp_async16(&sB[r * LDB + c], B + (size_t)(kb + r) * N + n0 + c);
	}
}

__global__ void __launch_bounds__(256) bsr_wmma_kernel(const __half *__restrict__ vals, const int *__restrict__ cols,
						       const __half *__restrict__ B, __half *__restrict__ C, int N,
						       int topk)
{
	extern __shared__ __align__(128) unsigned char smem[];
	__half *sA = (__half *)smem, *sB = sA + STAGES * A_STAGE;
	const int br = blockIdx.y, n0 = blockIdx.x * BN;
	const int warp = threadIdx.x / 32, wm = warp / 4, wn = warp % 4; /* 2×4 warps, 64×32 each */
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 2; j++)
			wmma::fill_fragment(acc[i][j], 0.f);
	const int T = topk * (BLK / BK);
#pragma unroll
	for (int s = 0; s < STAGES - 1; s++) {
		if (s < T)
			load_stage(sA + s * A_STAGE, sB + s * B_STAGE, vals, B, cols, br, topk, s, n0, N);
		asm volatile("cp.async.commit_group;\n" ::);
	}
	for (int t = 0; t < T; t++) {
		asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
		__syncthreads(); /* stage t landed for all; stage t-1 is free */
		int tn = t + STAGES - 1;
		if (tn < T)
			load_stage(sA + (tn % STAGES) * A_STAGE, sB + (tn % STAGES) * B_STAGE, vals, B, cols, br, topk, tn,
				   n0, N);
		asm volatile("cp.async.commit_group;\n" ::);
		const __half *a = sA + (t % STAGES) * A_STAGE, *b = sB + (t % STAGES) * B_STAGE;
#pragma unroll
		for (int k = 0; k < BK; k += 16) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[4];
			wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
#pragma unroll
			for (int i = 0; i < 4; i++)
				wmma::load_matrix_sync(fa[i], a + (wm * 64 + i * 16) * LDA + k, LDA);
#pragma unroll
			for (int j = 0; j < 2; j++)
				wmma::load_matrix_sync(fb[j], b + k * LDB + wn * 32 + j * 16, LDB);
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 2; j++)
					wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
		}
	}
	asm volatile("cp.async.wait_group 0;\n" ::);
	__syncthreads();
	float *sC = (float *)smem;
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 2; j++)
			wmma::store_matrix_sync(sC + (wm * 64 + i * 16) * LDC + wn * 32 + j * 16, acc[i][j], LDC,
						wmma::mem_row_major);
	__syncthreads();
	for (int i = threadIdx.x; i < BLK * (BN / 8); i += 256) {
		int r = i / (BN / 8), c = (i % (BN / 8)) * 8;
		union {
			uint4 u;
			__half2 h[4];
		} pk;
#pragma unroll
		for (int e = 0; e < 4; e++)
			pk.h[e] = __floats2half2_rn(sC[r * LDC + c + 2 * e], sC[r * LDC + c + 2 * e + 1]);
		*(uint4 *)&C[(size_t)(br * BLK + r) * N + n0 + c] = pk.u;
	}
}

/* reference: FP64 accumulation over the nonzero blocks, 16×16 tiles */
__global__ void bsr_ref_kernel(const __half *vals, const int *cols, const __half *B, float *C, int N, int topk)
{
	__shared__ double sa[16][17], sb[16][17];
	int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
	int br = r / BLK, rr = r % BLK;
	double acc = 0;
	for (int bi = 0; bi < topk; bi++) {
		const __half *a = vals + ((size_t)br * topk + bi) * BLK * BLK;
		int kb = cols[br * topk + bi] * BLK;
		for (int k0 = 0; k0 < BLK; k0 += 16) {
			sa[threadIdx.y][threadIdx.x] = (double)__half2float(a[(size_t)rr * BLK + k0 + threadIdx.x]);
			sb[threadIdx.y][threadIdx.x] =
				(double)__half2float(B[(size_t)(kb + k0 + threadIdx.y) * N + blockIdx.x * 16 + threadIdx.x]);
			__syncthreads();
#pragma unroll
			for (int kk = 0; kk < 16; kk++)
				acc += sa[threadIdx.y][kk] * sb[kk][threadIdx.x];
			__syncthreads();
		}
	}
	C[(size_t)r * N + c] = (float)acc;
}

/* ---- program callbacks ---- */

static const struct hx_param params[] = {
	{"M", NULL, "rows of A and C (multiple of 128)"},
	{"N", NULL, "columns of B and C (multiple of 128)"},
	{"K", NULL, "columns of A, rows of B (multiple of 128)"},
	{"block", "128", "BSR block size (only 128)"},
	{"topk", NULL, "nonzero blocks per block-row (1..K/128)"},
};

struct st {
	int M, N, K, topk, nsets;
	__half **vals, **b;
	int **cols;
	int *hcols; /* host copy of the last filled pattern (set 0) */
	__half *c;
	float *ref;
};

static void dims(const struct hx_problem *p, struct st *s)
{
	s->M = (int)hx_get_int(p, "M");
	s->N = (int)hx_get_int(p, "N");
	s->K = (int)hx_get_int(p, "K");
	s->topk = (int)hx_get_int(p, "topk");
}

static int validate(const struct hx_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	struct st s;
	dims(p, &s);
	if (hx_get_int(p, "block") != 128) {
		snprintf(why, n, "'--block=%s': only 128 is built", hx_get_str(p, "block"));
		return HX_UNSUPPORTED;
	}
	if (s.M < 128 || s.N < 128 || s.K < 128 || s.M % 128 || s.N % 128 || s.K % 128) {
		snprintf(why, n, "M, N, K must be positive multiples of 128 (got %d, %d, %d)", s.M, s.N, s.K);
		return HX_BAD_ARGS;
	}
	if (s.topk < 1 || s.topk > s.K / 128) {
		snprintf(why, n, "'--topk=%d': expected 1..K/128 = %d", s.topk, s.K / 128);
		return HX_BAD_ARGS;
	}
	if (prop->major < 8 || (size_t)SMEM_BYTES > prop->sharedMemPerBlockOptin) {
		snprintf(why, n, "needs sm_80+ and %d bytes of shared memory per block", SMEM_BYTES);
		return HX_UNSUPPORTED;
	}
	return HX_VALID;
}

static int edges(const struct hx_problem *p, struct hx_problem *out, int max)
{
	const int s[][4] = {{128, 128, 128, 1}, {256, 384, 1024, 8}, {512, 256, 2048, 3}};
	int k = 0;
	for (int i = 0; i < 3 && k < max; i++) {
		out[k] = *p;
		hx_set_int(&out[k], "M", s[i][0]);
		hx_set_int(&out[k], "N", s[i][1]);
		hx_set_int(&out[k], "K", s[i][2]);
		hx_set_int(&out[k], "topk", s[i][3]);
		k++;
	}
	return k;
}

static double flops(const struct hx_problem *p)
{
	struct st s;
	dims(p, &s);
	return 2.0 * (s.M / 128) * (double)s.topk * 128 * 128 * s.N;
}

/* A's nonzero blocks and indices once, B once, C once */
static double bytes(const struct hx_problem *p)
{
	struct st s;
	dims(p, &s);
	return 2.0 * (s.M / 128) * (double)s.topk * 128 * 128 + 4.0 * (s.M / 128) * s.topk + 2.0 * s.K * s.N +
	       2.0 * s.M * s.N;
}

static size_t input_bytes(const struct hx_problem *p)
{
	struct st s;
	dims(p, &s);
	return 2 * (size_t)(s.M / 128) * s.topk * 128 * 128 + 2 * (size_t)s.K * s.N;
}

static void *create(const struct hx_problem *p, int nsets)
{
	struct st *s = (struct st *)calloc(1, sizeof *s);
	dims(p, s);
	s->nsets = nsets;
	size_t nnzb = (size_t)(s->M / 128) * s->topk;
	s->vals = (__half **)calloc(nsets, sizeof(void *));
	s->b = (__half **)calloc(nsets, sizeof(void *));
	s->cols = (int **)calloc(nsets, sizeof(void *));
	s->hcols = (int *)calloc(nnzb, sizeof(int));
	for (int i = 0; i < nsets; i++) {
		s->vals[i] = (__half *)hx_malloc_dev(nnzb * 128 * 128 * 2);
		s->b[i] = (__half *)hx_malloc_dev((size_t)s->K * s->N * 2);
		s->cols[i] = (int *)hx_malloc_dev(nnzb * sizeof(int));
	}
	s->c = (__half *)hx_malloc_dev((size_t)s->M * s->N * 2);
	s->ref = (float *)hx_malloc_dev((size_t)s->M * s->N * 4);
	return s;
}

static void destroy(void *v)
{
	struct st *s = (struct st *)v;
	HX_CK(cudaDeviceSynchronize());
	for (int i = 0; i < s->nsets; i++) {
		hx_free_dev(s->vals[i]);
		hx_free_dev(s->b[i]);
		hx_free_dev(s->cols[i]);
	}
	hx_free_dev(s->c);
	hx_free_dev(s->ref);
	free(s->vals);
	free(s->b);
	free(s->cols);
	free(s->hcols);
	free(s);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* pattern: per block-row, topk distinct block columns by a seeded partial Fisher-Yates, sorted */
static void fill(void *v, int set, uint64_t seed)
{
	struct st *s = (struct st *)v;
	int nbr = s->M / 128, nbc = s->K / 128;
	size_t nnzb = (size_t)nbr * s->topk;
	int *perm = (int *)malloc(sizeof(int) * nbc), *hc = (int *)malloc(sizeof(int) * nnzb);
	for (int r = 0; r < nbr; r++) {
		for (int i = 0; i < nbc; i++)
			perm[i] = i;
		for (int i = 0; i < s->topk; i++) {
			int j = i + (int)(hx_splitmix(seed * 7777 + (uint64_t)r * 4099 + i) % (uint64_t)(nbc - i));
			int t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		qsort(perm, s->topk, sizeof(int), cmp_int);
		memcpy(hc + (size_t)r * s->topk, perm, sizeof(int) * s->topk);
	}
	HX_CK(cudaMemcpy(s->cols[set], hc, nnzb * sizeof(int), cudaMemcpyHostToDevice));
	if (set == 0)
		memcpy(s->hcols, hc, nnzb * sizeof(int));
	free(perm);
	free(hc);
	hx_fill_uniform_f16(s->vals[set], nnzb * 128 * 128, hx_splitmix(seed * 2), -1.f, 1.f, 0);
	hx_fill_uniform_f16(s->b[set], (size_t)s->K * s->N, hx_splitmix(seed * 2 + 1), -1.f, 1.f, 0);
	HX_CK(cudaDeviceSynchronize());
}

static void run(void *v, int set, cudaStream_t str)
{
	struct st *s = (struct st *)v;
	static int attr = 0;
	if (!attr) {
		HX_CK(cudaFuncSetAttribute(bsr_wmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
		attr = 1;
	}
	dim3 grid(s->N / BN, s->M / BLK);
	bsr_wmma_kernel<<<grid, 256, SMEM_BYTES, str>>>(s->vals[set], s->cols[set], s->b[set], s->c, s->N, s->topk);
}

static void reference(void *v, int set, cudaStream_t str)
{
	struct st *s = (struct st *)v;
	dim3 grid(s->N / 16, s->M / 16);
	bsr_ref_kernel<<<grid, dim3(16, 16), 0, str>>>(s->vals[set], s->cols[set], s->b[set], s->ref, s->N, s->topk);
}

static struct hx_output output(void *v)
{
	struct st *s = (struct st *)v;
	struct hx_output o = {s->c, (size_t)s->M * s->N, HX_F16, s->ref};
	return o;
}

/* FP64 CPU check of 32 entries, from the host copy of the pattern */
static int cpu_check(void *v, int set, uint64_t seed, double *max_abs, double *ref_max_abs, double *scale)
{
	struct st *s = (struct st *)v;
	(void)set;
	uint16_t *arow = (uint16_t *)malloc(128 * 2), *bcol = (uint16_t *)malloc(128 * 2);
	*max_abs = *ref_max_abs = *scale = 0;
	for (int t = 0; t < 32; t++) {
		uint64_t h = hx_splitmix(seed * 313 + t);
		int i = t == 0 ? 0 : (t == 1 ? s->M - 1 : (int)(h % s->M));
		int j = t == 0 ? 0 : (t == 1 ? s->N - 1 : (int)((h >> 32) % s->N));
		int br = i / 128;
		double want = 0;
		for (int bi = 0; bi < s->topk; bi++) {
			int kb = s->hcols[br * s->topk + bi] * 128;
			HX_CK(cudaMemcpy(arow, s->vals[0] + (((size_t)br * s->topk + bi) * 128 + i % 128) * 128, 256,
					 cudaMemcpyDeviceToHost));
			HX_CK(cudaMemcpy2D(bcol, 2, s->b[0] + (size_t)kb * s->N + j, (size_t)s->N * 2, 2, 128,
					   cudaMemcpyDeviceToHost));
			for (int k = 0; k < 128; k++)
				want += (double)hx_half_to_float(arow[k]) * hx_half_to_float(bcol[k]);
		}
		uint16_t got;
		float rf;
		HX_CK(cudaMemcpy(&got, s->c + (size_t)i * s->N + j, 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(&rf, s->ref + (size_t)i * s->N + j, 4, cudaMemcpyDeviceToHost));
		double e = fabs(hx_half_to_float(got) - want);
		*max_abs = isnan(e) ? INFINITY : fmax(*max_abs, e);
		*ref_max_abs = fmax(*ref_max_abs, fabs(rf - want));
		*scale = fmax(*scale, fabs(want));
	}
	free(arow);
	free(bcol);
	return 32;
}

int main(int argc, char **argv)
{
	static const struct hx_program prog = {
		"bsr_gemm", params, 5,
		/* FP16 output of sums of topk·128 products: |c| ~ sqrt(topk·128/9) ≈ 15 at topk=16 */
		-1, -1, 2e-3,
		validate, edges, flops, bytes, input_bytes, create, destroy, fill, run, reference, output, cpu_check,
	};
	return hx_main(argc, argv, &prog);
}
