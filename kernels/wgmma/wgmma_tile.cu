/* wgmma_tile.cu -- seed 003's wgmma m64n64k16 (sm_90a) grown into a tiled GEMM, checked against a reference.
 *
 * C[M,N] (FP32) = A[M,K] · B[N,K]ᵀ, A and B FP16 row-major (both K-major, as in
 * the seed's test: C = A·Bᵀ).  One CTA = one warpgroup (128 threads) = one 64×64
 * tile of C; K advances 64 at a time through a 2-stage cp.async pipeline; each
 * 64-wide K step is four `wgmma.mma_async.m64n64k16.f32.f16.f16` reading A and B
 * from shared memory through matrix descriptors.
 *
 * Shared-memory layout: no swizzle ("interleave"), K-major.  A core matrix is
 * 8 rows × 16 bytes stored as 128 contiguous bytes; core matrices adjacent in K
 * are LBO = 128 bytes apart, 8-row groups SBO = 1024 bytes apart:
 *     byte(m, k) = (m/8)·1024 + (k/8)·128 + (m%8)·16 + (k%8)·2
 * Descriptor (PTX ISA "matrix descriptor"): bits 0-13 start address >> 4,
 * 16-29 LBO >> 4, 32-45 SBO >> 4, 49-51 base offset (0), 62-63 swizzle (0 = none).
 * (The seed's note put the address in bits 19:0 and the swizzle in 48:46: wrong.)
 * -DWGMMA_SWAP_LBO_SBO=1 swaps the two offsets, to tell a layout mistake from
 * another bug on the GPU.  K need only be a multiple of 16 (the tail is zero-filled).
 */
#include "../harness/harness.h"

#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef WGMMA_SWAP_LBO_SBO
#define WGMMA_SWAP_LBO_SBO 0
#endif

#define TM 64
#define TN 64
#define TK 64
#define TILE_BYTES (TM * TK * 2) /* 8 KB per operand per stage */

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int src_bytes)
{
	unsigned s = (unsigned)__cvta_generic_to_shared(smem);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}

__device__ __forceinline__ uint64_t make_desc(const void *smem_ptr)
{
	uint32_t addr = (uint32_t)__cvta_generic_to_shared(smem_ptr);
	uint64_t lbo = WGMMA_SWAP_LBO_SBO ? 1024 : 128, sbo = WGMMA_SWAP_LBO_SBO ? 128 : 1024;
	uint64_t d = 0;
	d |= (uint64_t)((addr & 0x3FFFF) >> 4);
	d |= (uint64_t)(lbo >> 4) << 16;
	d |= (uint64_t)(sbo >> 4) << 32;
	/* base offset 0, swizzle mode 0 (none) */
	return d;
}

__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], uint64_t da, uint64_t db)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
	asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
		     "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
		     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
		     "%32, %33, 1, 1, 1, 0, 0;\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
		       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
		       "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]),
		       "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),
		       "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
		     : "l"(da), "l"(db));
#else
	__trap(); /* built without sm_90a: never launched (validate() refuses) */
#endif
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }

/* one 64×64 K-major operand tile, rows r0.., columns k0.. of a [rows, K] row-major matrix */
__device__ __forceinline__ void load_tile(unsigned char *s, const __half *g, int r0, int k0, int K)
{
	for (int i = threadIdx.x; i < TM * (TK / 8); i += 128) {
		int m = i / (TK / 8), kc = i % (TK / 8);
		int k = k0 + kc * 8;
		int ok = k < K;
		const __half *src = ok ? g + (size_t)(r0 + m) * K + k : g;
		cp_async16(s + (m / 8) * 1024 + kc * 128 + (m % 8) * 16, src, ok ? 16 : 0);
	}
	asm volatile("cp.async.commit_group;\n" ::);
}

__global__ void __launch_bounds__(128) wgmma_gemm_kernel(const __half *A, const __half *B, float *C, int M, int N, int K)
{
	__shared__ __align__(128) unsigned char smem[2][2][TILE_BYTES]; /* [stage][A|B] */
	const int m0 = blockIdx.y * TM, n0 = blockIdx.x * TN;
	float d[32];
#pragma unroll
	for (int i = 0; i < 32; i++)
		d[i] = 0.f;
	const int nk = (K + TK - 1) / TK;
	load_tile(smem[0][0], A, m0, 0, K);
	load_tile(smem[0][1], B, n0, 0, K);
	for (int t = 0; t < nk; t++) {
		const int sg = t & 1;
		if (t + 1 < nk) {
			load_tile(smem[sg ^ 1][0], A, m0, (t + 1) * TK, K);
			load_tile(smem[sg ^ 1][1], B, n0, (t + 1) * TK, K);
			asm volatile("cp.async.wait_group 2;\n" ::);
		} else {
			asm volatile("cp.async.wait_group 0;\n" ::);
		}
		/* cp.async wrote through the generic proxy; wgmma reads through the async proxy */
		asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
		__syncthreads();
		wgmma_fence();
#pragma unroll
		for (int kk = 0; kk < TK / 16; kk++)
			wgmma_m64n64k16(d, make_desc(smem[sg][0] + kk * 256), make_desc(smem[sg][1] + kk * 256));
		wgmma_commit();
		wgmma_wait0();
		__syncthreads(); /* stage sg is refilled next iteration */
	}
	const int w = threadIdx.x / 32, l = threadIdx.x % 32;
#pragma unroll
	for (int i = 0; i < 32; i++) {
		int row = m0 + 16 * w + l / 4 + 8 * ((i % 4) / 2);
		int col = n0 + 8 * (i / 4) + 2 * (l % 4) + (i % 2);
		C[(size_t)row * N + col] = d[i];
	}
}

/* ---- reference: FP64 accumulation, 16×16 shared-memory tiles ---- */

__global__ void gemm_nt_ref_kernel(const __half *A, const __half *B, float *C, int M, int N, int K)
{
	__shared__ double sa[16][17], sb[16][17];
	int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
	double acc = 0;
	for (int k0 = 0; k0 < K; k0 += 16) {
		int ka = k0 + threadIdx.x;
		int rb = blockIdx.x * 16 + threadIdx.y;
		sa[threadIdx.y][threadIdx.x] = (r < M && ka < K) ? (double)__half2float(A[(size_t)r * K + ka]) : 0.0;
		sb[threadIdx.y][threadIdx.x] = (rb < N && ka < K) ? (double)__half2float(B[(size_t)rb * K + ka]) : 0.0;
		__syncthreads();
#pragma unroll
		for (int kk = 0; kk < 16; kk++)
			acc += sa[threadIdx.y][kk] * sb[threadIdx.x][kk];
		__syncthreads();
	}
	if (r < M && c < N)
		C[(size_t)r * N + c] = (float)acc;
}

/* ---- program callbacks ---- */

static const struct hx_param params[] = {
	{"M", NULL, "rows of A and C (multiple of 64)"},
	{"N", NULL, "rows of B, columns of C (multiple of 64)"},
	{"K", NULL, "inner dimension (multiple of 16)"},
};

struct st {
	int M, N, K, nsets;
	__half **a, **b;
	float *c, *ref;
};

static void dims(const struct hx_problem *p, int *M, int *N, int *K)
{
	*M = (int)hx_get_int(p, "M");
	*N = (int)hx_get_int(p, "N");
	*K = (int)hx_get_int(p, "K");
}

static int validate(const struct hx_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	int M, N, K;
	dims(p, &M, &N, &K);
	if (M < 64 || N < 64 || K < 16 || M % 64 || N % 64 || K % 16 || M > 65535 * 64 || N > 65535 * 64) {
		snprintf(why, n, "M, N must be positive multiples of 64 and K of 16 (got %d, %d, %d)", M, N, K);
		return HX_BAD_ARGS;
	}
	if (!(prop->major == 9 && prop->minor == 0)) {
		snprintf(why, n, "wgmma needs sm_90a (compute capability 9.0), device is %d.%d", prop->major, prop->minor);
		return HX_UNSUPPORTED;
	}
	return HX_VALID;
}

static int edges(const struct hx_problem *p, struct hx_problem *out, int max)
{
	const int s[][3] = {{64, 64, 16}, {128, 192, 80}, {64, 128, 1024}};
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
	int M, N, K;
	dims(p, &M, &N, &K);
	return 2.0 * M * N * (double)K;
}

static double bytes(const struct hx_problem *p)
{
	int M, N, K;
	dims(p, &M, &N, &K);
	return 2.0 * ((double)M * K + (double)N * K) + 4.0 * M * N;
}

static size_t input_bytes(const struct hx_problem *p)
{
	int M, N, K;
	dims(p, &M, &N, &K);
	return 2 * ((size_t)M * K + (size_t)N * K);
}

static void *create(const struct hx_problem *p, int nsets)
{
	struct st *s = (struct st *)calloc(1, sizeof *s);
	dims(p, &s->M, &s->N, &s->K);
	s->nsets = nsets;
	s->a = (__half **)calloc(nsets, sizeof(void *));
	s->b = (__half **)calloc(nsets, sizeof(void *));
	for (int i = 0; i < nsets; i++) {
		s->a[i] = (__half *)hx_malloc_dev((size_t)s->M * s->K * 2);
		s->b[i] = (__half *)hx_malloc_dev((size_t)s->N * s->K * 2);
	}
	s->c = (float *)hx_malloc_dev((size_t)s->M * s->N * 4);
	s->ref = (float *)hx_malloc_dev((size_t)s->M * s->N * 4);
	return s;
}

static void destroy(void *v)
{
	struct st *s = (struct st *)v;
	HX_CK(cudaDeviceSynchronize());
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
	hx_fill_uniform_f16(s->b[set], (size_t)s->N * s->K, hx_splitmix(seed * 2 + 1), -1.f, 1.f, 0);
	HX_CK(cudaDeviceSynchronize());
}

static void run(void *v, int set, cudaStream_t str)
{
	struct st *s = (struct st *)v;
	dim3 grid(s->N / TN, s->M / TM);
	wgmma_gemm_kernel<<<grid, 128, 0, str>>>(s->a[set], s->b[set], s->c, s->M, s->N, s->K);
}

static void reference(void *v, int set, cudaStream_t str)
{
	struct st *s = (struct st *)v;
	dim3 grid((s->N + 15) / 16, (s->M + 15) / 16);
	gemm_nt_ref_kernel<<<grid, dim3(16, 16), 0, str>>>(s->a[set], s->b[set], s->ref, s->M, s->N, s->K);
}

static struct hx_output output(void *v)
{
	struct st *s = (struct st *)v;
	struct hx_output o = {s->c, (size_t)s->M * s->N, HX_F32, s->ref};
	return o;
}

/* FP64 CPU check of 64 entries (corners included) */
static int cpu_check(void *v, int set, uint64_t seed, double *max_abs, double *ref_max_abs, double *scale)
{
	struct st *s = (struct st *)v;
	uint16_t *ra = (uint16_t *)malloc((size_t)s->K * 2), *rb = (uint16_t *)malloc((size_t)s->K * 2);
	*max_abs = *ref_max_abs = *scale = 0;
	for (int t = 0; t < 64; t++) {
		uint64_t h = hx_splitmix(seed * 977 + t);
		int i = t == 0 ? 0 : (t == 1 ? s->M - 1 : (int)(h % s->M));
		int j = t == 0 ? 0 : (t == 1 ? s->N - 1 : (int)((h >> 32) % s->N));
		float got, rf;
		HX_CK(cudaMemcpy(ra, s->a[set] + (size_t)i * s->K, s->K * 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(rb, s->b[set] + (size_t)j * s->K, s->K * 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(&got, s->c + (size_t)i * s->N + j, 4, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(&rf, s->ref + (size_t)i * s->N + j, 4, cudaMemcpyDeviceToHost));
		double want = 0;
		for (int k = 0; k < s->K; k++)
			want += (double)hx_half_to_float(ra[k]) * hx_half_to_float(rb[k]);
		double e = fabs(got - want);
		*max_abs = isnan(e) ? INFINITY : fmax(*max_abs, e);
		*ref_max_abs = fmax(*ref_max_abs, fabs(rf - want));
		*scale = fmax(*scale, fabs(want));
	}
	free(ra);
	free(rb);
	return 64;
}

int main(int argc, char **argv)
{
	static const struct hx_program prog = {
		"wgmma_tile", params, 3,
		/* FP32 output of sums of K products of [-1,1) values: |c| ~ sqrt(K/9) */
		-1, -1, 1e-3,
		validate, edges, flops, bytes, input_bytes, create, destroy, fill, run, reference, output, cpu_check,
	};
	return hx_main(argc, argv, &prog);
}
