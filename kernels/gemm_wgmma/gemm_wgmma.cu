/* gemm_wgmma.cu -- Hopper-native dense FP16 GEMM (issue 11, rung 1): TMA into 128-byte-swizzled shared
 * memory, an mbarrier ring, wgmma from swizzled descriptors, a producer warpgroup and GW_BM/64 consumer
 * warpgroups with setmaxnreg, a persistent grid walking the tiles in an L2-friendly grouped order.
 *
 * C[M,N] (FP16) = A[M,K] · B[N,K]ᵀ, FP32 accumulation.  A and B are FP16, row-major with leading dimension
 * ld = K rounded up to ld_align elements (a problem parameter, default 8: TMA needs 16-byte row strides; 64 starts
 * every row on a 128-byte line, and rows that are not cost the ragged shapes ~40 %, NOTES.md; the pad columns are filled with random
 * values and must be ignored: the tensor map's K extent is the true K, and TMA zero-fills the box beyond
 * it, beyond M and beyond N).  C is row-major with ld = N; stores are guarded, so any M, N, K >= 1 works.
 * Same FLOPs, bytes and output type as gemm_cublas (FP16 in, FP32 compute, FP16 out); the cuBLAS program
 * multiplies by B[K,N] instead of B[N,K]ᵀ (the layout wgmma reads natively, both operands K-major).
 *
 * Pipeline (one CTA per SM, persistent; CTAs in clusters of two along M, GW_CLUSTER):
 *   the pair takes two tile rows of one tile column at a time, so both CTAs need the same B tile: each loads
 *     half of it (BN/2 rows) and multicasts it into both CTAs' stage, so L2 serves B once per pair.
 *   warpgroup 0, one thread: for each tile of this CTA, for each 64-wide K step: wait empty[s] (released by
 *     the consumers of both CTAs: the stage's B is written by both producers), expect STAGE bytes on full[s],
 *     cp.async.bulk.tensor.2d loads (A box 64×BM; B box 64×BN/2 multicast to the pair; 128B swizzle).
 *   warpgroup 1+c (c < BM/64): rows c·64.. of the tile; wait full[s], four wgmma m64nBNk16 (K advances 32 B
 *     inside the 128-byte swizzled row), commit, wait_group 1 (one K step stays in flight), then release the
 *     previous step's stage (one arrive per warp on empty[] of each CTA of the pair).  End of tile: wait_group 0, FP16 stores.
 *   While consumers store (a 64×BN block in two halves through a 64×BN/2 buffer: GW_CPARTS), the producer
 *   already fills the ring for their next tile.
 *   Edge tiles (GW_NARROW): a last tile column with at most 64 (128) live columns runs m64n64 (m64n128)
 *   wgmmas, frees each stage as soon as its own wgmmas are done (its K loop waits on loads, not the tensor
 *   pipe), and its tiles come after every full one in a walk whose odd waves run backwards, so the clusters
 *   that took a wave's cheap tiles take the next wave's extra ones.
 * Shared-memory descriptor (PTX ISA "matrix descriptor", K-major, 128B swizzle): start address >> 4 in
 * bits 0-13, LBO (unused for swizzled K-major) = 1, SBO = 1024 B (8 rows × 128 B) in bits 32-45, swizzle
 * mode 1 (128B) in bits 62-63; each stage's tiles are 1024-byte aligned so the base offset is 0.
 *
 * Compile-time parameters (a gpuorch sweep varies them):
 *   -DGW_BM=128     rows per tile = 64 × consumer warpgroups (64 or 128)
 *   -DGW_BN=256     columns per tile = wgmma N (128 or 256)
 *   -DGW_STAGES     ring depth (2..8, shared memory <= 227 KB; default 4, 3 for 128×256 with GW_CPARTS=1)
 *   -DGW_CLUSTER=2  CTAs per cluster along M (1: no cluster, each CTA loads all of B; the kernel before 2026-11-27)
 *   -DGW_GROUP_M    tile rows per L2 group of the persistent schedule (default 16 with clusters, 8 without)
 *   -DGW_NARROW=1   narrow wgmmas and the walk above for a ragged last tile column (0: every tile at BN, every
 *                   CL-th cluster tile in order; the kernel before 2026-11-27 evening, byte for byte)
 *   -DGW_CPARTS=2   the epilogue's C block through its buffer in 2 parts (half the buffer, so a 4-deep ring at
 *                   128×256; 1: one part, 3 stages, the kernel before 2026-11-27 night, byte for byte)
 *   -DGW_TMA_STORE=1 epilogue through shared memory and a TMA store (when N % 8 == 0, else direct stores):
 *                   each consumer writes its 64×BN FP16 block into a 128B-swizzled buffer and one thread
 *                   issues the bulk store, which runs while the consumers start the next tile
 *   -DGW_PLANT_BUG=1  negative control: B's descriptor ignores the swizzle (mode 0) -> wrong results
 * sm_90a only (wgmma, setmaxnreg); built for another arch the kernel traps and validate() refuses the device.
 */
#include "../harness/harness.h"

#include "../hopper/hopper.cuh" /* PTX wrappers (mbarrier, TMA, wgmma), tensor maps */
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GW_BM
#define GW_BM 128
#endif
#ifndef GW_BN
#define GW_BN 256
#endif
#ifndef GW_DESCU /* 1: the consumer index through __shfl_sync (A's address warp-uniform, its descriptors on the
                    * uniform datapath) and each K step's descriptors as the first plus an offset (desc_add). H100,
                    * 2026-11-27: no difference in two rounds (NOTES.md); 0, the default, is the kernel as before */
#define GW_DESCU 0
#endif
#ifndef GW_CLUSTER /* CTAs per cluster along M: 2 = two tile rows share each B tile, each CTA loads half of it and
		    * multicasts it to both (L2 -> SM traffic for B halved); 1 = no cluster. H100, 2026-11-27: 2 with
		    * GROUP_M 16 ran 4095x4104x4100 in 273 us against 355, 4096^3 1 % faster (NOTES.md) */
#define GW_CLUSTER 2
#endif
#ifndef GW_NARROW /* 1: a tile whose last columns lie past N runs the narrowest wgmma that covers the live ones
		   * (m64n64 for <= 64 columns, m64n128 for <= 128; with pairs, a B half wholly past N is not loaded),
		   * and those tiles come last in a back-and-forth walk. H100, 2026-11-27: the ragged shapes 7-10 %
		   * faster, 4096^3 the same (NOTES.md); 0 = every tile at BN, in the previous order */
#define GW_NARROW 1
#endif
#ifndef GW_GROUP_M
#define GW_GROUP_M (GW_CLUSTER == 2 ? 16 : 8)
#endif
#ifndef GW_TMA_STORE
#define GW_TMA_STORE 1
#endif
#ifndef GW_CPARTS /* a consumer's 64×BN C block goes through its shared buffer in this many parts (1 or 2; the
		   * buffer is 64×BN/GW_CPARTS): with 2, 128×256 tiles keep a 4-deep ring beside the buffers. H100,
		   * 2026-11-27: 2 (4 stages) 1.5 % faster at 4096^3, 2-4 % at the ragged shapes; 2 at 3 stages the
		   * same as 1 (NOTES.md v5); 1 = the kernel before, byte for byte */
#define GW_CPARTS (GW_BN == 256 ? 2 : 1)
#endif
#ifndef GW_STAGES /* the deepest ring that fits beside the C buffers */
#define GW_STAGES (GW_TMA_STORE && GW_CPARTS == 1 && GW_BN == 256 && GW_BM == 128 ? 3 : 4)
#endif
#ifndef GW_PLANT_BUG
#define GW_PLANT_BUG 0
#endif

constexpr int BM = GW_BM, BN = GW_BN, BK = 64, STAGES = GW_STAGES, GROUP_M = GW_GROUP_M, CL = GW_CLUSTER;
constexpr int NC = BM / 64;                   /* consumer warpgroups */
constexpr int NTHREADS = 128 * (NC + 1);
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int CPARTS = GW_CPARTS; /* the C block's parts through the buffer */
constexpr int C_BYTES = GW_TMA_STORE ? 64 * BN * 2 / CPARTS : 0; /* per consumer: 64 rows × BN/CPARTS FP16, 64×64 swizzled blocks */
constexpr size_t SMEM_BYTES = (size_t)STAGES * STAGE_BYTES + (size_t)NC * C_BYTES + 2 * STAGES * 8 + 1024; /* + barriers + align slack */

static_assert(BM == 64 || BM == 128, "GW_BM must be 64 or 128 (64 rows per consumer warpgroup)");
static_assert(BN == 128 || BN == 256, "GW_BN must be 128 or 256 (the wgmma N of this kernel; TMA box <= 256)");
static_assert(STAGES >= 2 && STAGES <= 8, "GW_STAGES must be in 2..8");
static_assert(GROUP_M >= 1, "GW_GROUP_M must be >= 1");
static_assert(CL == 1 || CL == 2, "GW_CLUSTER must be 1 or 2");
static_assert(CPARTS == 1 || (CPARTS == 2 && BN == 256), "GW_CPARTS must be 1, or 2 with GW_BN=256 (a part is whole 64-column blocks)");
static_assert(SMEM_BYTES <= 227 * 1024, "shared memory per CTA over 227 KB: lower GW_STAGES, GW_BN or GW_BM (or GW_TMA_STORE=0)");

#define GW_DEVICE_OK HP_DEVICE_OK

/* the wgmma N a tile runs at: the narrowest of 64, 128, BN that covers its live columns (GW_NARROW) */
__device__ __forceinline__ int tile_nn(int tn, int N)
{
	const int live = N - tn * BN;
	if (!GW_NARROW || live > 128)
		return BN;
	return live <= 64 ? 64 : 128;
}

/* tile t of the persistent walk -> (tile row, tile column): GROUP_M tile rows at a time, column by column,
 * so that the CTAs running at once share A rows and B columns in L2.  With GW_NARROW a narrow last column
 * (tile_nn < BN) comes after every full tile, so that with next_tile's order the clusters that take its cheap
 * tiles in one wave are the ones that take the extra tiles of the next */
__device__ __forceinline__ void tile_coords(int t, int num_m, int num_n, int N, int &tm, int &tn)
{
	const int nf = num_n - (GW_NARROW && tile_nn(num_n - 1, N) < BN ? 1 : 0); /* full tile columns */
	if (GW_NARROW && t >= num_m * nf) {
		tm = t - num_m * nf;
		tn = num_n - 1;
		return;
	}
	constexpr int G = GROUP_M / CL > 0 ? GROUP_M / CL : 1; /* in rows of clusters: the same rows of A in L2 */
	const int per_group = G * nf;
	const int g = t / per_group, first = g * G;
	const int gs = min(num_m - first, G);
	const int r = t - g * per_group;
	tm = first + r % gs;
	tn = r / gs;
}

/* the tile after t for cluster p of P, whose next wave is w: the p-th of a wave in even waves, the
 * (P-1-p)-th in odd ones with GW_NARROW (a boustrophedon: the clusters that got a wave's last tiles, the
 * narrow ones, get the next wave's first; without, every P-th); >= tiles: none, in this wave or after */
__device__ __forceinline__ int next_tile(int t, int w, int p, int P)
{
	return GW_NARROW ? w * P + ((w & 1) ? P - 1 - p : p) : t + P;
}

/* a consumer warp is done with a stage: every CTA whose producer fills part of it may refill it */
__device__ __forceinline__ void release(uint64_t *empty_s)
{
	mbar_arrive(empty_s);
	if (CL == 2)
		mbar_arrive_cluster(empty_s, cluster_rank() ^ 1u); /* the other CTA of the pair */
}

/* the first NN/2 accumulators of a consumer's BN/2 (the fragment of m64nNN is the first NN/2 registers of
 * m64nBN's: columns 8·(i/4).., the same for every i < NN/2) */
template <int NN> __device__ __forceinline__ float (&acc_head(float (&d)[BN / 2]))[NN / 2]
{
	static_assert(NN <= BN, "a narrow tile is at most BN wide");
	return *reinterpret_cast<float (*)[NN / 2]>(&d[0]);
}

/* one tile's K loop at wgmma N = NN for consumer cu: wait full[s], four wgmmas a K step, one K step in flight,
 * the previous step's stage released; returns with every wgmma of the tile done and its last stage released.
 * A narrow tile (NN < BN) waits for its own step's wgmmas and releases the stage at once: its K loop is bound
 * by the loads' latency, not the tensor pipe, and holding two of the three stages (v4) left one load in flight
 * (H100, 4095x4104x4100, narrow tiles in the old walk: 272-274 us at BN, 264-265 holding two stages, 257-258
 * releasing at once) */
template <int NN>
__device__ __forceinline__ void tile_mainloop(float (&d)[NN / 2], unsigned char *smem, uint64_t *full,
					      uint64_t *empty, int nk, int &it, int cu, int l)
{
	for (int kt = 0; kt < nk; kt++, it++) {
		const int s = it % STAGES;
		mbar_wait(&full[s], (unsigned)(it / STAGES) & 1u);
		const unsigned char *sa = smem + (size_t)s * STAGE_BYTES + cu * 64 * 128;
		const unsigned char *sb = smem + (size_t)s * STAGE_BYTES + A_BYTES;
		wgmma_fence();
		const uint64_t da0 = desc_sw128(sa, 1), db0 = desc_sw128(sb, GW_PLANT_BUG ? 0 : 1);
#pragma unroll
		for (int kk = 0; kk < BK / 16; kk++)
			acc_t<NN>::mma(d, GW_DESCU ? desc_add(da0, kk * 32) : desc_sw128(sa + kk * 32, 1),
				       GW_DESCU ? desc_add(db0, kk * 32) : desc_sw128(sb + kk * 32, GW_PLANT_BUG ? 0 : 1));
		wgmma_commit();
		if (NN < BN) {
			wgmma_wait<0>();
			if (l == 0)
				release(&empty[s]);
			continue;
		}
		wgmma_wait<1>();
		/* the previous K step's wgmmas are done: its stage may be refilled */
		if (kt > 0 && l == 0)
			release(&empty[(it - 1) % STAGES]);
	}
	if (NN < BN)
		return;
	wgmma_wait<0>();
	if (l == 0)
		release(&empty[(it - 1) % STAGES]);
}

__global__ void __launch_bounds__(NTHREADS, 1)
gemm_wgmma_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
		  const __grid_constant__ CUtensorMap tmC, __half *C, int M, int N, int K, int tma_store)
{
#if GW_DEVICE_OK
	extern __shared__ unsigned char smem_raw[];
	unsigned char *smem = (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
	uint64_t *full = (uint64_t *)(smem + (size_t)STAGES * STAGE_BYTES + (size_t)NC * C_BYTES);
	uint64_t *empty = full + STAGES;
	const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
	/* a cluster of CL CTAs takes CL tile rows (one each, its rank's) of one tile column at a time: the
	 * walk is over cluster tiles of CL*BM rows */
	const int num_m = (M + BM * CL - 1) / (BM * CL), num_n = (N + BN - 1) / BN, tiles = num_m * num_n;
	const int nk = (K + BK - 1) / BK;
	const int rank = CL > 1 ? (int)cluster_rank() : 0; /* cluster c is CTAs CL*c.. (x-major ranks) */

	if (threadIdx.x == 0) {
		for (int s = 0; s < STAGES; s++) {
			mbar_init(&full[s], 1);
			mbar_init(&empty[s], NC * 4 * CL); /* one arrive per consumer warp of every CTA that reads the stage */
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	if (CL > 1)
		cluster_sync(); /* the other CTA's barriers are initialised before anything arrives on them */
	else
		__syncthreads();

	if (wg == 0) {
		/* producer warpgroup: gives its registers to the consumers */
		asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
		if (tid == 0) {
			asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)&tmA) : "memory");
			asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)&tmB) : "memory");
			int it = 0;
			for (int t = blockIdx.x / CL, wv = 1; t < tiles; /* only the last wave is partial */
			     t = next_tile(t, wv++, blockIdx.x / CL, gridDim.x / CL)) {
				int tm, tn;
				tile_coords(t, num_m, num_n, N, tm, tn);
				tm = tm * CL + rank;
				for (int kt = 0; kt < nk; kt++, it++) {
					const int s = it % STAGES;
					const unsigned ph = (unsigned)(it / STAGES) & 1u;
					mbar_wait(&empty[s], ph ^ 1u);
					unsigned char *st = smem + (size_t)s * STAGE_BYTES;
					/* a cluster's last tile row may lie wholly past M: its A is not loaded (the rows are
					 * never stored), B still is, for the other CTA */
					const bool a_live = CL == 1 || tm * BM < M;
					/* with pairs, a B half wholly past N is not loaded by its CTA (GW_NARROW: a narrow
					 * tile's wgmma reads only the first half); every CTA's full[s] counts the halves sent */
					const int b_halves = CL == 1 || !GW_NARROW || tn * BN + BN / CL < N ? CL : 1;
					mbar_expect_tx(&full[s], (a_live ? A_BYTES : 0) + b_halves * (B_BYTES / CL));
					if (a_live)
						tma_load_2d(st, &tmA, kt * BK, tm * BM, &full[s]);
					if (CL == 1)
						tma_load_2d(st + A_BYTES, &tmB, kt * BK, tn * BN, &full[s]);
					else if (!GW_NARROW || rank < b_halves) /* this CTA's share of B, to every CTA of the cluster (full[s] there counts it) */
						tma_load_2d_mc(st + A_BYTES + rank * (B_BYTES / CL), &tmB, kt * BK,
							       tn * BN + rank * (BN / CL), &full[s], (uint16_t)((1u << CL) - 1));
				}
			}
		}
	} else {
		asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
		const int c = wg - 1, w = tid / 32, l = tid % 32;
		const int cu = GW_DESCU ? __shfl_sync(0xffffffffu, c, 0) : c;   /* GW_DESCU */
		float d[BN / 2];
		int it = 0;
		for (int t = blockIdx.x / CL, wv = 1; t < tiles; /* only the last wave is partial */
		     t = next_tile(t, wv++, blockIdx.x / CL, gridDim.x / CL)) {
			int tm, tn;
			tile_coords(t, num_m, num_n, N, tm, tn);
			tm = tm * CL + rank;
#pragma unroll
			for (int i = 0; i < BN / 2; i++)
				d[i] = 0.f;
			const int nn = tile_nn(tn, N);
			if (nn == BN)
				tile_mainloop<BN>(d, smem, full, empty, nk, it, cu, l);
			else if (BN == 256 && nn == 128)
				tile_mainloop<128>(acc_head<128>(d), smem, full, empty, nk, it, cu, l);
			else
				tile_mainloop<64>(acc_head<64>(d), smem, full, empty, nk, it, cu, l);

			/* epilogue: accumulator fragment (row 16w + l/4 + 8·((i%4)/2), column 8·(i/4) + 2·(l%4) + i%2) */
#if GW_TMA_STORE
			if (tma_store) {
				/* this consumer's C buffer (64 rows × BN/CPARTS); the block in CPARTS parts; with GW_NARROW a
				 * block wholly past N is not stored */
				unsigned char *cb = smem + (size_t)STAGES * STAGE_BYTES + (size_t)c * C_BYTES;
				hp_store_c_tma<BN, CPARTS, GW_NARROW>(d, cb, &tmC, tn * BN, tm * BM + c * 64, N, 1 + c, tid);
				continue;
			}
#endif
			{
				const int r0 = tm * BM + c * 64 + 16 * w + l / 4;
				const int c0 = tn * BN + 2 * (l % 4);
				const bool pairs = (N % 2) == 0;
#pragma unroll
				for (int i = 0; i < BN / 2; i += 2) {
					const int row = r0 + 8 * ((i % 4) / 2), col = c0 + 8 * (i / 4);
					if (row >= M)
						continue;
					__half *p = C + (size_t)row * N + col;
					if (pairs && col + 1 < N) {
						*(__half2 *)p = __floats2half2_rn(d[i], d[i + 1]);
					} else {
						if (col < N)
							p[0] = __float2half_rn(d[i]);
						if (col + 1 < N)
							p[1] = __float2half_rn(d[i + 1]);
					}
				}
			}
		}
#if GW_TMA_STORE
		if (tma_store && tid == 0)
			asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); /* stores done before the CTA exits */
#endif
	}
	if (CL > 1)
		cluster_sync(); /* no CTA leaves while the other may still write its stages or arrive on its barriers */
#else
	(void)M; (void)N; (void)K; (void)C; (void)tma_store;
	__trap(); /* built without sm_90a: never launched (validate() refuses the device) */
#endif
}

/* ---- reference: FP64 accumulation, 16×16 shared-memory tiles, C = A·Bᵀ with leading dimension ld ---- */

__global__ void gemm_nt_ref_kernel(const __half *A, const __half *B, float *C, int M, int N, int K, int ld)
{
	__shared__ double sa[16][17], sb[16][17];
	int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;
	int rb = blockIdx.x * 16 + threadIdx.y;
	double acc = 0;
	for (int k0 = 0; k0 < K; k0 += 16) {
		int ka = k0 + threadIdx.x;
		sa[threadIdx.y][threadIdx.x] = (r < M && ka < K) ? (double)__half2float(A[(size_t)r * ld + ka]) : 0.0;
		sb[threadIdx.y][threadIdx.x] = (rb < N && ka < K) ? (double)__half2float(B[(size_t)rb * ld + ka]) : 0.0;
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
	{"M", NULL, "rows of A and C (any >= 1)"},
	{"N", NULL, "rows of B, columns of C (any >= 1)"},
	{"K", NULL, "inner dimension (any >= 1; stored with leading dimension K rounded up to ld_align)"},
	{"ld_align", "8", "A's and B's leading dimension is K rounded up to this many elements (a multiple of 8, "
			  "TMA's 16-byte row strides; 64 puts every row on a 128-byte line)"},
};

struct st {
	int M, N, K, ld, nsets, nsm, max_clusters;
	__half **a, **b, *c;
	float *ref;
	CUtensorMap *ta, *tb, tc;
	int tma_store;
};

static void dims(const struct hx_problem *p, int *M, int *N, int *K)
{
	*M = (int)hx_get_int(p, "M");
	*N = (int)hx_get_int(p, "N");
	*K = (int)hx_get_int(p, "K");
}

static int ld_of(const struct hx_problem *p)
{
	int K = (int)hx_get_int(p, "K"), a = (int)hx_get_int(p, "ld_align");
	return (K + a - 1) / a * a;
}

static int validate(const struct hx_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	int M, N, K;
	dims(p, &M, &N, &K);
	if (M < 1 || N < 1 || K < 1 || M > (1 << 20) || N > (1 << 20) || K > (1 << 20)) {
		snprintf(why, n, "M, N, K must be in 1..2^20 (got %d, %d, %d)", M, N, K);
		return HX_BAD_ARGS;
	}
	const long long la = hx_get_int(p, "ld_align");
	if (la < 8 || la > 4096 || la % 8) {
		snprintf(why, n, "ld_align must be a multiple of 8 in 8..4096 (TMA row strides are multiples of 16 bytes), "
			 "got %lld", la);
		return HX_BAD_ARGS;
	}
	if (!(prop->major == 9 && prop->minor == 0)) {
		snprintf(why, n, "gemm_wgmma needs sm_90a (compute capability 9.0: TMA, wgmma, setmaxnreg), device is %d.%d",
			 prop->major, prop->minor);
		return HX_UNSUPPORTED;
	}
	if (prop->sharedMemPerBlockOptin < SMEM_BYTES) {
		snprintf(why, n, "needs %zu bytes of shared memory per CTA, the device allows %zu; rebuild with smaller "
			 "GW_STAGES/GW_BN", SMEM_BYTES, (size_t)prop->sharedMemPerBlockOptin);
		return HX_UNSUPPORTED;
	}
	return HX_VALID;
}

static int edges(const struct hx_problem *p, struct hx_problem *out, int max)
{
	/* tiny, odd everything, K < one K step, N odd (scalar stores), partial tiles in M and N with N % 8 == 0
	 * (TMA store clipped at the edges), long K */
	/* with BN 256 (GW_NARROW): the last tile column's live width exactly 64, 100, exactly 128, 129 */
	const int s[][3] = {{1, 1, 1}, {1, 8, 1}, {77, 130, 300}, {77, 136, 300}, {129, 257, 72}, {200, 301, 9},
			    {385, 520, 1000}, {256, 512, 4096}, {70, 320, 200}, {150, 100, 200}, {130, 384, 640},
			    {33, 385, 64}};
	int k = 0;
	for (int i = 0; i < (int)(sizeof s / sizeof s[0]) && k < max; i++) {
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
	return 2.0 * ((double)M * K + (double)N * K + (double)M * N);
}

static size_t input_bytes(const struct hx_problem *p)
{
	int M, N, K;
	dims(p, &M, &N, &K);
	return 2 * ((size_t)M * ld_of(p) + (size_t)N * ld_of(p));
}

/* 2-D FP16 tensor map over a [rows, K] matrix with leading dimension ld: box 64 (K, 128 B) × box_rows, 128B swizzle
 * (C: K = N columns, box 64 × 64) */
static void make_map(CUtensorMap *m, const __half *g, int rows, int K, int ld, int box_rows)
{
	hp_make_map(m, g, rows, K, ld, BK, box_rows);
}

/* the launch of `grid` CTAs in clusters of CL along x (at: the attribute cfg points to) */
static void cluster_launch(cudaLaunchConfig_t *cfg, cudaLaunchAttribute *at, int grid, cudaStream_t str)
{
	memset(cfg, 0, sizeof *cfg);
	memset(at, 0, sizeof *at);
	at->id = cudaLaunchAttributeClusterDimension;
	at->val.clusterDim.x = CL;
	at->val.clusterDim.y = 1;
	at->val.clusterDim.z = 1;
	cfg->gridDim = dim3(grid);
	cfg->blockDim = dim3(NTHREADS);
	cfg->dynamicSmemBytes = SMEM_BYTES;
	cfg->stream = str;
	cfg->attrs = at;
	cfg->numAttrs = 1;
}

static void *create(const struct hx_problem *p, int nsets)
{
	struct st *s = (struct st *)calloc(1, sizeof *s);
	dims(p, &s->M, &s->N, &s->K);
	s->ld = ld_of(p);
	s->nsets = nsets;
	s->nsm = hx_device_prop()->multiProcessorCount;
	s->a = (__half **)calloc(nsets, sizeof(void *));
	s->b = (__half **)calloc(nsets, sizeof(void *));
	s->ta = (CUtensorMap *)calloc(nsets, sizeof(CUtensorMap));
	s->tb = (CUtensorMap *)calloc(nsets, sizeof(CUtensorMap));
	for (int i = 0; i < nsets; i++) {
		s->a[i] = (__half *)hx_malloc_dev((size_t)s->M * s->ld * 2);
		s->b[i] = (__half *)hx_malloc_dev((size_t)s->N * s->ld * 2);
		make_map(&s->ta[i], s->a[i], s->M, s->K, s->ld, BM);
		make_map(&s->tb[i], s->b[i], s->N, s->K, s->ld, BN / CL); /* each CTA of a cluster loads BN/CL rows */
	}
	s->c = (__half *)hx_malloc_dev((size_t)s->M * s->N * 2);
	s->ref = (float *)hx_malloc_dev((size_t)s->M * s->N * 4);
	/* TMA store needs 16-byte rows of C: N % 8 == 0; other N take the guarded direct stores */
	s->tma_store = GW_TMA_STORE && s->N % 8 == 0;
	if (s->tma_store)
		make_map(&s->tc, s->c, s->M, s->N, s->N, 64);
	HX_CK(cudaFuncSetAttribute(gemm_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SMEM_BYTES));
	s->max_clusters = s->nsm / CL;
	if (CL > 1) {
		/* the persistent grid is as many clusters as fit at once (the GPCs' SM counts decide, not nsm / CL) */
		cudaLaunchConfig_t cfg;
		cudaLaunchAttribute at;
		cluster_launch(&cfg, &at, s->max_clusters * CL, 0);
		HX_CK(cudaOccupancyMaxActiveClusters(&s->max_clusters, gemm_wgmma_kernel, &cfg));
		if (s->max_clusters < 1)
			hx_failf(1, "no cluster of %d CTAs with %zu bytes of shared memory each fits this device", CL,
				 SMEM_BYTES);
		hx_config_int("active_clusters", s->max_clusters);
	}
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
	free(s->ta);
	free(s->tb);
	free(s);
}

static void fill(void *v, int set, uint64_t seed)
{
	struct st *s = (struct st *)v;
	/* the pad columns K..ld-1 get random values too: the kernel must not read them */
	hx_fill_uniform_f16(s->a[set], (size_t)s->M * s->ld, hx_splitmix(seed * 2), -1.f, 1.f, 0);
	hx_fill_uniform_f16(s->b[set], (size_t)s->N * s->ld, hx_splitmix(seed * 2 + 1), -1.f, 1.f, 0);
	HX_CK(cudaDeviceSynchronize());
}

static void run(void *v, int set, cudaStream_t str)
{
	struct st *s = (struct st *)v;
	const int tiles = ((s->M + BM * CL - 1) / (BM * CL)) * ((s->N + BN - 1) / BN); /* cluster tiles */
	const int grid = (tiles < s->max_clusters ? tiles : s->max_clusters) * CL;
	if (CL == 1) {
		gemm_wgmma_kernel<<<grid, NTHREADS, SMEM_BYTES, str>>>(s->ta[set], s->tb[set], s->tc, s->c, s->M, s->N,
									 s->K, s->tma_store);
		return;
	}
	cudaLaunchConfig_t cfg;
	cudaLaunchAttribute at;
	cluster_launch(&cfg, &at, grid, str);
	HX_CK(cudaLaunchKernelEx(&cfg, gemm_wgmma_kernel, s->ta[set], s->tb[set], s->tc, s->c, s->M, s->N, s->K,
				 s->tma_store));
}

static void reference(void *v, int set, cudaStream_t str)
{
	struct st *s = (struct st *)v;
	dim3 grid((s->N + 15) / 16, (s->M + 15) / 16);
	gemm_nt_ref_kernel<<<grid, dim3(16, 16), 0, str>>>(s->a[set], s->b[set], s->ref, s->M, s->N, s->K, s->ld);
}

static struct hx_output output(void *v)
{
	struct st *s = (struct st *)v;
	struct hx_output o = {s->c, (size_t)s->M * s->N, HX_F16, s->ref};
	return o;
}

/* FP64 CPU check of 64 entries (both corners included) */
static int cpu_check(void *v, int set, uint64_t seed, double *max_abs, double *ref_max_abs, double *scale)
{
	struct st *s = (struct st *)v;
	uint16_t *ra = (uint16_t *)malloc((size_t)s->K * 2), *rb = (uint16_t *)malloc((size_t)s->K * 2);
	*max_abs = *ref_max_abs = *scale = 0;
	for (int t = 0; t < 64; t++) {
		uint64_t h = hx_splitmix(seed * 977 + t);
		int i = t == 0 ? 0 : (t == 1 ? s->M - 1 : (int)(h % s->M));
		int j = t == 0 ? 0 : (t == 1 ? s->N - 1 : (int)((h >> 32) % s->N));
		uint16_t got;
		float rf;
		HX_CK(cudaMemcpy(ra, s->a[set] + (size_t)i * s->ld, (size_t)s->K * 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(rb, s->b[set] + (size_t)j * s->ld, (size_t)s->K * 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(&got, s->c + (size_t)i * s->N + j, 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(&rf, s->ref + (size_t)i * s->N + j, 4, cudaMemcpyDeviceToHost));
		double want = 0;
		for (int k = 0; k < s->K; k++)
			want += (double)hx_half_to_float(ra[k]) * hx_half_to_float(rb[k]);
		double e = fabs(hx_half_to_float(got) - want);
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
		"gemm_wgmma", params, (int)(sizeof(params) / sizeof(params[0])),
		/* FP16 output, as gemm_cublas */
		-1, -1, 2e-3,
		validate, edges, flops, bytes, input_bytes, create, destroy, fill, run, reference, output, cpu_check,
	};
	hx_config_int("BM", BM);
	hx_config_int("BN", BN);
	hx_config_int("BK", BK);
	hx_config_int("STAGES", STAGES);
	hx_config_int("GROUP_M", GROUP_M);
	hx_config_int("CLUSTER", CL);
	hx_config_int("consumer_warpgroups", NC);
	hx_config_int("TMA_STORE", GW_TMA_STORE);
	hx_config_int("CPARTS", CPARTS);
	hx_config_int("smem_bytes", (long long)SMEM_BYTES);
	if (GW_PLANT_BUG)
		hx_config_int("PLANT_BUG", GW_PLANT_BUG);
	return hx_main(argc, argv, &prog);
}
