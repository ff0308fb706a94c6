/* bsr_wgmma.cu -- block-sparse GEMM on the Hopper mainloop of gemm_wgmma (issue 11, rung 2).
 *
 * C[M,N] (FP16) = A_bsr[M,K] · Bᵀ, FP32 accumulation.  A is BSR with 128×128 blocks: row_ptr[M/128 + 1],
 * col_idx[nnzb] (block columns, sorted within a block-row), vals[nnzb][128][128] FP16 row-major (K-major
 * inside a block).  B is dense FP16 stored as Bᵀ, N×K row-major (K-major, the layout wgmma reads natively,
 * as in gemm_wgmma; the cuBLAS baseline multiplies by B[K,N]: same FLOPs and bytes).  M, N, K multiples of 128.
 * Patterns: `--irregular=0` top-k (exactly `topk` distinct block columns per block-row, seed 004's shape),
 * `--irregular=1` a fixed irregular profile (nnz per block-row drawn from 0..K/128 by a seed-independent
 * hash, block-row 0 empty, the last block-row full), block columns drawn per seed.
 *
 * DESIGN (gemm_wgmma's pipeline with a gathered K loop)
 *   Work unit: one block-row br × BN columns of C (a 128×BN tile); its K loop walks the block-row's nonzero
 *   blocks, two 64-wide K steps each.  The tile walk: group by group, column by column inside a group, over
 *   a block-row order made on the host (block-rows sorted by nnz, largest first, so the walk ends with the
 *   short tiles) cut into groups whose nonzero A blocks fit a third of L2 (make_groups(), below).  One
 *   persistent CTA per SM takes the walk's tiles one at a time from an atomic counter (BW_DYNAMIC).
 *   Warpgroup 0 (one thread, setmaxnreg 40) is the producer: it takes the next tile, posts it to the
 *   consumers in a 2-slot ring (tfull/tempty mbarriers), and per K step it waits empty[s], then two TMA
 *   loads complete on full[s]: the A box 64×128 at (h·64, j·128) of vals viewed as a [nnzb·128, 128] matrix, and the B box 64×BN at (col_idx[j]·128 + h·64, tn·BN) of Bᵀ.  Two consumer
 *   warpgroups (setmaxnreg 232) own 64 rows each: wgmma m64nBNk16 ×4 per K step from 128B-swizzled
 *   descriptors, one K step kept in flight, then release the stage.  Epilogue: FP16 through a swizzled
 *   shared buffer (in two halves: BW_CPARTS) and TMA stores that overlap the next tile (hp_store_c_tma,
 *   shared with gemm_wgmma).  An empty block-row's tiles skip the loop and store zeros.  Work, bytes and
 *   time are linear in nnzb (plus the C write, M·N·2 bytes).
 *   FLOP model: useful work only, 2·nnzb·128·128·N.
 *
 * Compile-time parameters (a gpuorch sweep varies them):
 *   -DBW_BN=256       columns per tile = wgmma N (128 or 256)
 *   -DBW_CPARTS=2     the epilogue's C block through its buffer in 2 parts at BN=256 (half the buffer, so a 4-deep
 *                     ring; 1: one part and 3 stages, the kernel before 2026-11-27 night, byte for byte)
 *   -DBW_STAGES       ring depth (default 4; 3 for BN=256 with BW_CPARTS=1: the deepest that fits beside the C buffers)
 *   -DBW_GROUP_M=0    block-rows per group of the tile walk; 0: make_groups() cuts the groups
 *   -DBW_DYNAMIC=1    tiles handed out in walk order by an atomic counter (the producer takes the next one
 *                     and posts it to the consumers through a 2-slot mbarrier ring); 0: static round-robin
 *   -DBW_L2_DIV=3     with BW_GROUP_M=0: a group grows while its nonzero A blocks fit L2 size / BW_L2_DIV;
 *                     0: groups sized by the wave model instead (make_groups())
 *   -DBW_PLANT_BUG=1  negative control: every nonzero block is read from the B columns of block column 0
 *                     (the gather ignores col_idx) -> wrong results unless every block sits in column 0
 * sm_90a only (TMA, wgmma, setmaxnreg); built for another arch the kernel traps and validate() refuses.
 * Correctness: cuBLAS (FP32 output, FP32 compute) on the densified masked A, plus an FP64 CPU spot check.
 */
#include "../harness/harness.h"

#include "../hopper/hopper.cuh" /* PTX wrappers (mbarrier, TMA, wgmma), tensor maps */
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BW_BN
#define BW_BN 256
#endif
#ifndef BW_DESCU /* 1: the consumer index through __shfl_sync (A's address warp-uniform, its descriptors on the
                    * uniform datapath) and each K step's descriptors as the first plus an offset (desc_add). H100,
                    * 2026-11-27: no difference in two rounds (NOTES.md); 0, the default, is the kernel as before */
#define BW_DESCU 0
#endif
#ifndef BW_CPARTS /* a consumer's 64×BN C block goes through its shared buffer in this many parts (1 or 2; the
		   * buffer is 64×BN/BW_CPARTS): with 2, BN=256 keeps a 4-deep ring beside the buffers (gemm_wgmma's
		   * GW_CPARTS); 1 = the kernel before 2026-11-27 night, byte for byte */
#define BW_CPARTS (BW_BN == 256 ? 2 : 1)
#endif
#ifndef BW_STAGES /* the deepest ring that fits beside the C buffers */
#define BW_STAGES (BW_BN == 256 && BW_CPARTS == 1 ? 3 : 4)
#endif
#ifndef BW_GROUP_M /* 0: groups cut per problem by make_groups() */
#define BW_GROUP_M 0
#endif
#ifndef BW_L2_DIV /* > 0: make_groups() cuts groups by an L2 budget for their A blocks: L2 size / BW_L2_DIV */
#define BW_L2_DIV 3
#endif
#ifndef BW_DYNAMIC /* 1: tiles handed out by an atomic counter; 0: static round-robin (tile += gridDim.x) */
#define BW_DYNAMIC 1
#endif
#ifndef BW_PLANT_BUG
#define BW_PLANT_BUG 0
#endif

constexpr int BLK = 128, BM = 128, BN = BW_BN, BK = 64, STAGES = BW_STAGES, CPARTS = BW_CPARTS;
constexpr int NC = BM / 64, NTHREADS = 128 * (NC + 1);
constexpr int A_BYTES = BM * BK * 2, B_BYTES = BN * BK * 2, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int C_BYTES = 64 * BN * 2 / CPARTS; /* per consumer: 64 rows × BN/CPARTS FP16 in swizzled 64×64 blocks */
/* + the stage barriers, 2 tile-slot barrier pairs and 2 tile slots, + alignment slack */
constexpr size_t SMEM_BYTES = (size_t)STAGES * STAGE_BYTES + (size_t)NC * C_BYTES + 2 * STAGES * 8 + 4 * 8 + 2 * 4 + 1024;

static_assert(BN == 128 || BN == 256, "BW_BN must be 128 or 256 (the wgmma N of this kernel; TMA box <= 256)");
static_assert(STAGES >= 2 && STAGES <= 8, "BW_STAGES must be in 2..8");
static_assert(CPARTS == 1 || (CPARTS == 2 && BN == 256), "BW_CPARTS must be 1, or 2 with BW_BN=256 (a part is whole 64-column blocks)");
static_assert(BW_GROUP_M >= 0, "BW_GROUP_M must be >= 0 (0: chosen per problem)");
static_assert(BW_L2_DIV >= 0, "BW_L2_DIV must be >= 0");
static_assert(SMEM_BYTES <= 227 * 1024, "shared memory per CTA over 227 KB: lower BW_STAGES or BW_BN");

#define CB_CK(call) do { cublasStatus_t cb_s_ = (call); \
	if (cb_s_ != CUBLAS_STATUS_SUCCESS) hx_failf(1, "cuBLAS error %d (%s) in '%s' at %s:%d", (int)cb_s_, \
		cublasGetStatusString(cb_s_), #call, __FILE__, __LINE__); } while (0)

/* tile t of the persistent walk -> (index into the block-row order, tile column).  Group g holds order
 * positions gstart[g]..gstart[g+1]-1 and tiles gstart[g]·num_n.. of the walk, column by column.  t only
 * grows in a CTA's walk, so the group cursor g (0 at the start) only moves forward. */
__device__ __forceinline__ void tile_coords(int t, int num_n, const int *__restrict__ gstart, int &g, int &tm,
					    int &tn)
{
	while (t >= __ldg(&gstart[g + 1]) * num_n)
		g++;
	const int first = __ldg(&gstart[g]), gs = __ldg(&gstart[g + 1]) - first;
	const int r = t - first * num_n;
	tm = first + r % gs;
	tn = r / gs;
}

__global__ void __launch_bounds__(NTHREADS, 1)
bsr_wgmma_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
		 const __grid_constant__ CUtensorMap tmC, const int *__restrict__ row_ptr,
		 const int *__restrict__ col_idx, const int *__restrict__ order, const int *__restrict__ gstart,
		 int *__restrict__ sched, int nbr, int N)
{
#if HP_DEVICE_OK
	extern __shared__ unsigned char smem_raw[];
	unsigned char *smem = (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
	uint64_t *full = (uint64_t *)(smem + (size_t)STAGES * STAGE_BYTES + (size_t)NC * C_BYTES);
	uint64_t *empty = full + STAGES;
	/* tile hand-off from the producer to the consumers: 2 slots, each with a full/empty barrier pair */
	uint64_t *tfull = empty + STAGES, *tempty = tfull + 2;
	int *tslot = (int *)(tempty + 2);
	const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
	const int num_n = (N + BN - 1) / BN, tiles = nbr * num_n;

	if (threadIdx.x == 0) {
		for (int s = 0; s < STAGES; s++) {
			mbar_init(&full[s], 1);
			mbar_init(&empty[s], NC * 4); /* one arrive per consumer warp */
		}
		for (int s = 0; s < 2; s++) {
			mbar_init(&tfull[s], 1);
			mbar_init(&tempty[s], NC * 4);
		}
		asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
	}
	__syncthreads();

	if (wg == 0) {
		asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
		if (tid == 0) {
			asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)&tmA) : "memory");
			asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)&tmB) : "memory");
			int it = 0, g = 0;
			/* tile q of this CTA: the first is blockIdx.x, the next ones come from the counter sched[0]
			 * (dynamic) or by stepping gridDim.x (static); either way t only grows.  Each one is posted in
			 * slot q%2 for the consumers; t >= tiles tells them to stop. */
			for (int t = blockIdx.x, q = 0;; q++) {
				mbar_wait(&tempty[q % 2], ((unsigned)(q / 2) & 1u) ^ 1u);
				*(volatile int *)&tslot[q % 2] = t;
				mbar_arrive(&tfull[q % 2]);
				if (t >= tiles)
					break;
				int tm, tn;
				tile_coords(t, num_n, gstart, g, tm, tn);
				const int br = order[tm], j1 = row_ptr[br + 1];
				for (int j = row_ptr[br]; j < j1; j++) {
					const int kb = BW_PLANT_BUG ? 0 : col_idx[j] * BLK;
#pragma unroll
					for (int h = 0; h < BLK / BK; h++, it++) {
						const int s = it % STAGES;
						mbar_wait(&empty[s], ((unsigned)(it / STAGES) & 1u) ^ 1u);
						unsigned char *st = smem + (size_t)s * STAGE_BYTES;
						mbar_expect_tx(&full[s], STAGE_BYTES);
						tma_load_2d(st, &tmA, h * BK, j * BLK, &full[s]);
						tma_load_2d(st + A_BYTES, &tmB, kb + h * BK, tn * BN, &full[s]);
					}
				}
				t = BW_DYNAMIC ? atomicAdd(&sched[0], 1) + (int)gridDim.x : t + (int)gridDim.x;
			}
		}
	} else {
		asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
		const int c = wg - 1, l = tid % 32;
		const int cu = BW_DESCU ? __shfl_sync(0xffffffffu, c, 0) : c;   /* BW_DESCU */
		unsigned char *cb = smem + (size_t)STAGES * STAGE_BYTES + (size_t)c * C_BYTES;
		float d[BN / 2];
		int it = 0, g = 0;
		for (int q = 0;; q++) {
			mbar_wait(&tfull[q % 2], (unsigned)(q / 2) & 1u);
			const int t = *(volatile int *)&tslot[q % 2];
			__syncwarp();
			if (l == 0)
				mbar_arrive(&tempty[q % 2]); /* this warp has read the slot */
			if (t >= tiles)
				break;
			int tm, tn;
			tile_coords(t, num_n, gstart, g, tm, tn);
			const int br = order[tm];
			const int nk = (row_ptr[br + 1] - row_ptr[br]) * (BLK / BK);
#pragma unroll
			for (int i = 0; i < BN / 2; i++)
				d[i] = 0.f;
			for (int kt = 0; kt < nk; kt++, it++) {
				const int s = it % STAGES;
				mbar_wait(&full[s], (unsigned)(it / STAGES) & 1u);
				const unsigned char *sa = smem + (size_t)s * STAGE_BYTES + cu * 64 * 128;
				const unsigned char *sb = smem + (size_t)s * STAGE_BYTES + A_BYTES;
				wgmma_fence();
				const uint64_t da0 = desc_sw128(sa, 1), db0 = desc_sw128(sb, 1);
#pragma unroll
				for (int kk = 0; kk < BK / 16; kk++)
					acc_t<BN>::mma(d, BW_DESCU ? desc_add(da0, kk * 32) : desc_sw128(sa + kk * 32, 1),
						       BW_DESCU ? desc_add(db0, kk * 32) : desc_sw128(sb + kk * 32, 1));
				wgmma_commit();
				wgmma_wait<1>();
				if (kt > 0 && l == 0) /* the previous K step's wgmmas are done: its stage may be refilled */
					mbar_arrive(&empty[(it - 1) % STAGES]);
			}
			wgmma_wait<0>(); /* unconditional: with it under `nk > 0` ptxas injects its own wait (C7517) */
			if (nk > 0 && l == 0)
				mbar_arrive(&empty[(it - 1) % STAGES]);
			/* epilogue: through this consumer's swizzled buffer and TMA stores, in CPARTS parts */
			hp_store_c_tma<BN, CPARTS, false>(d, cb, &tmC, tn * BN, br * BM + c * 64, N, 1 + c, tid);
		}
		if (tid == 0)
			asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); /* stores done before the CTA exits */
	}
	/* the last CTA out resets the counter for the next launch (every CTA has taken its last tile) */
	if (BW_DYNAMIC && threadIdx.x == 0) {
		__threadfence();
		if (atomicAdd(&sched[1], 1) == (int)gridDim.x - 1) {
			sched[0] = 0;
			sched[1] = 0;
			__threadfence();
		}
	}
#else
	(void)row_ptr; (void)col_idx; (void)order; (void)gstart; (void)sched; (void)nbr; (void)N;
	__trap(); /* built without sm_90a: never launched (validate() refuses the device) */
#endif
}

/* reference input: the masked dense A (zeroed by the caller), one CTA per nonzero block */
__global__ void bsr_densify_kernel(const __half *vals, const int *col_idx, const int *blk_row, __half *Ad, int K)
{
	const int j = blockIdx.x, r0 = blk_row[j] * BLK, c0 = col_idx[j] * BLK;
	const uint4 *src = (const uint4 *)(vals + (size_t)j * BLK * BLK);
	for (int i = threadIdx.x; i < BLK * BLK / 8; i += blockDim.x) {
		const int r = i / (BLK / 8), c = (i % (BLK / 8)) * 8;
		*(uint4 *)(Ad + (size_t)(r0 + r) * K + c0 + c) = src[i];
	}
}

/* ---- the pattern (host) ---- */

static const struct hx_param params[] = {
	{"M", NULL, "rows of A and C (multiple of 128)"},
	{"N", NULL, "rows of Bᵀ, columns of C (multiple of 128)"},
	{"K", NULL, "columns of A and Bᵀ (multiple of 128)"},
	{"block", "128", "BSR block size (only 128)"},
	{"topk", "16", "nonzero blocks per block-row when --irregular=0 (1..K/128)"},
	{"irregular", "0", "1: irregular pattern, nnz per block-row in 0..K/128 (row 0 empty, the last full)"},
};

struct shape {
	int M, N, K, topk, irregular, nbr, nbc;
};

static void dims(const struct hx_problem *p, struct shape *s)
{
	s->M = (int)hx_get_int(p, "M");
	s->N = (int)hx_get_int(p, "N");
	s->K = (int)hx_get_int(p, "K");
	s->topk = (int)hx_get_int(p, "topk");
	s->irregular = (int)hx_get_int(p, "irregular");
	s->nbr = s->M / BLK;
	s->nbc = s->K / BLK;
}

/* nonzero blocks of block-row r: the problem alone fixes the counts (so the FLOP model needs no seed) */
static int row_nnz(const struct shape *s, int r)
{
	if (!s->irregular)
		return s->topk;
	if (r == 0)
		return 0;
	if (r == s->nbr - 1)
		return s->nbc;
	return (int)(hx_splitmix(0xb5ull * 1000003ull + (uint64_t)r) % (uint64_t)(s->nbc + 1));
}

static long long total_nnz(const struct shape *s)
{
	long long n = 0;
	for (int r = 0; r < s->nbr; r++)
		n += row_nnz(s, r);
	return n;
}

static int validate(const struct hx_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	struct shape s;
	dims(p, &s);
	if (hx_get_int(p, "block") != 128) {
		snprintf(why, n, "'--block=%s': only 128 is built", hx_get_str(p, "block"));
		return HX_UNSUPPORTED;
	}
	if (s.M < 128 || s.N < 128 || s.K < 128 || s.M % 128 || s.N % 128 || s.K % 128 || s.M > (1 << 17) ||
	    s.N > (1 << 17) || s.K > (1 << 17)) {
		snprintf(why, n, "M, N, K must be multiples of 128 in 128..131072 (got %d, %d, %d)", s.M, s.N, s.K);
		return HX_BAD_ARGS;
	}
	if (s.irregular != 0 && s.irregular != 1) {
		snprintf(why, n, "'--irregular=%d': expected 0 (top-k) or 1 (irregular)", s.irregular);
		return HX_BAD_ARGS;
	}
	if (!s.irregular && (s.topk < 1 || s.topk > s.nbc)) {
		snprintf(why, n, "'--topk=%d': expected 1..K/128 = %d", s.topk, s.nbc);
		return HX_BAD_ARGS;
	}
	if (total_nnz(&s) * BLK > (1ll << 31) - 1) {
		snprintf(why, n, "%lld nonzero blocks: over the TMA coordinate range (2^31 rows of vals)", total_nnz(&s));
		return HX_BAD_ARGS;
	}
	if (!(prop->major == 9 && prop->minor == 0)) {
		snprintf(why, n, "bsr_wgmma needs sm_90a (compute capability 9.0: TMA, wgmma, setmaxnreg), device is %d.%d",
			 prop->major, prop->minor);
		return HX_UNSUPPORTED;
	}
	if (prop->sharedMemPerBlockOptin < SMEM_BYTES) {
		snprintf(why, n, "needs %zu bytes of shared memory per CTA, the device allows %zu; rebuild with smaller "
			 "BW_STAGES/BW_BN", SMEM_BYTES, (size_t)prop->sharedMemPerBlockOptin);
		return HX_UNSUPPORTED;
	}
	return HX_VALID;
}

static int edges(const struct hx_problem *p, struct hx_problem *out, int max)
{
	/* {M, N, K, topk, irregular}: one block; N not a multiple of BN (clipped store); every block (dense);
	 * irregular with an empty first row and a full last row (larger, and 2 block-rows: one empty, one full);
	 * tall and thin (N < BN) */
	const int s[][5] = {{128, 128, 128, 1, 0}, {256, 384, 1024, 8, 0}, {384, 256, 512, 4, 0},
			    {1024, 512, 2048, 0, 1}, {256, 256, 512, 0, 1}, {2048, 128, 8192, 0, 1}};
	int k = 0;
	for (int i = 0; i < 6 && k < max; i++) {
		out[k] = *p;
		hx_set_int(&out[k], "M", s[i][0]);
		hx_set_int(&out[k], "N", s[i][1]);
		hx_set_int(&out[k], "K", s[i][2]);
		hx_set_int(&out[k], "topk", s[i][3] ? s[i][3] : 1);
		hx_set_int(&out[k], "irregular", s[i][4]);
		k++;
	}
	return k;
}

static double flops(const struct hx_problem *p)
{
	struct shape s;
	dims(p, &s);
	return 2.0 * (double)total_nnz(&s) * BLK * BLK * s.N;
}

/* A's nonzero blocks and their indices once, Bᵀ once, C once */
static double bytes(const struct hx_problem *p)
{
	struct shape s;
	dims(p, &s);
	const double nnzb = (double)total_nnz(&s);
	return 2.0 * nnzb * BLK * BLK + 4.0 * (nnzb + s.nbr + 1) + 2.0 * s.K * s.N + 2.0 * s.M * s.N;
}

static size_t input_bytes(const struct hx_problem *p)
{
	struct shape s;
	dims(p, &s);
	return 2 * (size_t)total_nnz(&s) * BLK * BLK + 2 * (size_t)s.K * s.N;
}

/* ---- program state ---- */

struct st {
	struct shape sh;
	int nsets, nsm;
	long long nnzb;
	__half **vals, **b, *c, *ad;
	int **rp, **ci, **brow;        /* device: row_ptr, col_idx, block -> block-row */
	int *ord, *gstart, ngroups;    /* device: block-row order, group starts in it (the counts fix both) */
	int *sched;                    /* device: the tile counter and the CTAs-done counter (zero between launches) */
	int **hrp, **hci;              /* host copies of row_ptr and col_idx per set (CPU check) */
	float *ref;
	CUtensorMap *ta, *tb, tc;
	cublasHandle_t h;
};

static const int *g_sort_cnt; /* qsort has no context argument */
static int cmp_rows(const void *a, const void *b)
{
	const int ra = *(const int *)a, rb = *(const int *)b;
	const int na = g_sort_cnt[ra], nb = g_sort_cnt[rb];
	return na != nb ? nb - na : ra - rb; /* most blocks first, then by index */
}

/* The tile walk's order and groups, from the per-row counts alone (so every input set shares them).
 * Order: block-rows by nnz, largest first.  Groups: consecutive rows of that order, each walked column by
 * column, so the tiles in flight share the group's A blocks (re-read for every tile column) and each Bᵀ
 * slice (read by the group's rows at about the same time).
 *   BW_GROUP_M > 0: fixed groups of BW_GROUP_M rows.
 *   BW_L2_DIV > 0 (default 3): a group grows while its rows' nonzero A blocks (32 KB each) fit L2 size /
 *     BW_L2_DIV, so they can stay resident while the Bᵀ slices stream through the rest.  Measured (NOTES.md,
 *     runs 3-6): with the static walk, /3 was best or within 2 % of the best of /2, /3, /4, /8 and the wave
 *     model at 4 of 5 shapes (fixed groups of 8-16 rows were 4-5 % faster on the irregular 8192³ pattern);
 *     with the dynamic counter, /3, /2 and fixed 16 are within 2 % of each other there.
 *   BW_L2_DIV = 0, the wave model: the P = min(tiles, SMs) tiles in flight cover g rows × P/g columns; if
 *     they share what they read, a wave reads g·a + (P/g)·b bytes (a = nnz·32 KB of a row, b = BN·K·2 of a
 *     Bᵀ slice), least at g = sqrt(P·b/a), taken for each group from its first (heaviest) row; an empty
 *     row takes all the rest.  It picks 32 at the seed shape (the best fixed size there) but loses 6-11 %
 *     on the irregular patterns.
 * Fills ord[nbr] and gstart[ngroups + 1]; returns ngroups. */
static int make_groups(const struct shape *sh, size_t l2_bytes, int nsm, int *ord, int *gstart)
{
	int *cnt = (int *)malloc(sizeof(int) * sh->nbr);
	for (int r = 0; r < sh->nbr; r++) {
		cnt[r] = row_nnz(sh, r);
		ord[r] = r;
	}
	g_sort_cnt = cnt;
	qsort(ord, sh->nbr, sizeof(int), cmp_rows);
	const double budget = BW_L2_DIV > 0 ? (double)l2_bytes / BW_L2_DIV : 0;
	const int num_n = (sh->N + BN - 1) / BN;
	const double P = sh->nbr * num_n < nsm ? sh->nbr * num_n : nsm, b = (double)BN * sh->K * 2;
	int ng = 0, want = 0;
	double a = 0;
	gstart[0] = 0;
	for (int i = 0; i < sh->nbr; i++) {
		const double ai = (double)cnt[ord[i]] * BLK * BLK * 2;
		const int size = i - gstart[ng];
		bool full;
		if (BW_GROUP_M > 0)
			full = size == BW_GROUP_M;
		else if (BW_L2_DIV > 0)
			full = size > 0 && a + ai > budget;
		else
			full = size > 0 && size == want;
		if (full) {
			gstart[++ng] = i;
			a = 0;
		}
		if (i == gstart[ng]) /* a new group: its size from its first (heaviest) row */
			want = ai > 0 ? (int)fmax(1.0, floor(sqrt(P * b / ai) + 0.5)) : sh->nbr;
		a += ai;
	}
	gstart[++ng] = sh->nbr;
	free(cnt);
	return ng;
}

static void *create(const struct hx_problem *p, int nsets)
{
	struct st *s = (struct st *)calloc(1, sizeof *s);
	dims(p, &s->sh);
	s->nsets = nsets;
	s->nsm = hx_device_prop()->multiProcessorCount;
	s->nnzb = total_nnz(&s->sh);
	const size_t nb = s->nnzb > 0 ? (size_t)s->nnzb : 1, nbr = (size_t)s->sh.nbr;
	s->vals = (__half **)calloc(nsets, sizeof(void *));
	s->b = (__half **)calloc(nsets, sizeof(void *));
	s->rp = (int **)calloc(nsets, sizeof(void *));
	s->ci = (int **)calloc(nsets, sizeof(void *));
	s->brow = (int **)calloc(nsets, sizeof(void *));
	s->hrp = (int **)calloc(nsets, sizeof(void *));
	s->hci = (int **)calloc(nsets, sizeof(void *));
	s->ta = (CUtensorMap *)calloc(nsets, sizeof(CUtensorMap));
	s->tb = (CUtensorMap *)calloc(nsets, sizeof(CUtensorMap));
	for (int i = 0; i < nsets; i++) {
		s->vals[i] = (__half *)hx_malloc_dev(nb * BLK * BLK * 2);
		s->b[i] = (__half *)hx_malloc_dev((size_t)s->sh.N * s->sh.K * 2);
		s->rp[i] = (int *)hx_malloc_dev((nbr + 1) * sizeof(int));
		s->ci[i] = (int *)hx_malloc_dev(nb * sizeof(int));
		s->brow[i] = (int *)hx_malloc_dev(nb * sizeof(int));
		s->hrp[i] = (int *)calloc(nbr + 1, sizeof(int));
		s->hci[i] = (int *)calloc(nb, sizeof(int));
		hp_make_map(&s->ta[i], s->vals[i], (int)(nb * BLK), BLK, BLK, BK, BM);
		hp_make_map(&s->tb[i], s->b[i], s->sh.N, s->sh.K, s->sh.K, BK, BN);
	}
	s->c = (__half *)hx_malloc_dev((size_t)s->sh.M * s->sh.N * 2);
	s->ad = (__half *)hx_malloc_dev((size_t)s->sh.M * s->sh.K * 2);
	s->ref = (float *)hx_malloc_dev((size_t)s->sh.M * s->sh.N * 4);
	hp_make_map(&s->tc, s->c, s->sh.M, s->sh.N, s->sh.N, 64, 64);
	CB_CK(cublasCreate(&s->h));
	s->sched = (int *)hx_malloc_dev(2 * sizeof(int));
	HX_CK(cudaMemset(s->sched, 0, 2 * sizeof(int)));
	{
		int *ord = (int *)malloc(sizeof(int) * nbr), *gs = (int *)malloc(sizeof(int) * (nbr + 1));
		s->ngroups = make_groups(&s->sh, (size_t)hx_device_prop()->l2CacheSize, s->nsm, ord, gs);
		s->ord = (int *)hx_malloc_dev(nbr * sizeof(int));
		s->gstart = (int *)hx_malloc_dev((s->ngroups + 1) * sizeof(int));
		HX_CK(cudaMemcpy(s->ord, ord, sizeof(int) * nbr, cudaMemcpyHostToDevice));
		HX_CK(cudaMemcpy(s->gstart, gs, sizeof(int) * (s->ngroups + 1), cudaMemcpyHostToDevice));
		hx_config_int("groups", s->ngroups);
		hx_config_int("first_group_rows", gs[1] - gs[0]);
		free(ord);
		free(gs);
	}
	HX_CK(cudaFuncSetAttribute(bsr_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SMEM_BYTES));
	return s;
}

static void destroy(void *v)
{
	struct st *s = (struct st *)v;
	HX_CK(cudaDeviceSynchronize());
	for (int i = 0; i < s->nsets; i++) {
		hx_free_dev(s->vals[i]);
		hx_free_dev(s->b[i]);
		hx_free_dev(s->rp[i]);
		hx_free_dev(s->ci[i]);
		hx_free_dev(s->brow[i]);
		free(s->hrp[i]);
		free(s->hci[i]);
	}
	hx_free_dev(s->c);
	hx_free_dev(s->ad);
	hx_free_dev(s->ref);
	CB_CK(cublasDestroy(s->h));
	free(s->vals);
	free(s->b);
	free(s->rp);
	free(s->ci);
	free(s->brow);
	hx_free_dev(s->ord);
	hx_free_dev(s->gstart);
	hx_free_dev(s->sched);
	free(s->hrp);
	free(s->hci);
	free(s->ta);
	free(s->tb);
	free(s);
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* per block-row, row_nnz distinct block columns by a seeded partial Fisher-Yates, sorted */
static void fill(void *v, int set, uint64_t seed)
{
	struct st *s = (struct st *)v;
	const int nbr = s->sh.nbr, nbc = s->sh.nbc;
	const size_t nb = s->nnzb > 0 ? (size_t)s->nnzb : 1;
	int *perm = (int *)malloc(sizeof(int) * nbc), *rp = s->hrp[set], *ci = s->hci[set];
	int *brow = (int *)calloc(nb, sizeof(int));
	rp[0] = 0;
	for (int r = 0; r < nbr; r++) {
		const int k = row_nnz(&s->sh, r);
		for (int i = 0; i < nbc; i++)
			perm[i] = i;
		for (int i = 0; i < k; i++) {
			int j = i + (int)(hx_splitmix(seed * 7777 + (uint64_t)r * 4099 + i) % (uint64_t)(nbc - i));
			int t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		qsort(perm, k, sizeof(int), cmp_int);
		memcpy(ci + rp[r], perm, sizeof(int) * k);
		for (int i = 0; i < k; i++)
			brow[rp[r] + i] = r;
		rp[r + 1] = rp[r] + k;
	}
	HX_CK(cudaMemcpy(s->rp[set], rp, sizeof(int) * (nbr + 1), cudaMemcpyHostToDevice));
	HX_CK(cudaMemcpy(s->ci[set], ci, sizeof(int) * nb, cudaMemcpyHostToDevice));
	HX_CK(cudaMemcpy(s->brow[set], brow, sizeof(int) * nb, cudaMemcpyHostToDevice));
	free(perm);
	free(brow);
	hx_fill_uniform_f16(s->vals[set], nb * BLK * BLK, hx_splitmix(seed * 2), -1.f, 1.f, 0);
	hx_fill_uniform_f16(s->b[set], (size_t)s->sh.N * s->sh.K, hx_splitmix(seed * 2 + 1), -1.f, 1.f, 0);
	HX_CK(cudaDeviceSynchronize());
}

static void run(void *v, int set, cudaStream_t str)
{
	struct st *s = (struct st *)v;
	const int tiles = s->sh.nbr * ((s->sh.N + BN - 1) / BN);
	const int grid = tiles < s->nsm ? tiles : s->nsm;
	bsr_wgmma_kernel<<<grid, NTHREADS, SMEM_BYTES, str>>>(s->ta[set], s->tb[set], s->tc, s->rp[set], s->ci[set],
								s->ord, s->gstart, s->sched, s->sh.nbr, s->sh.N);
}

/* dense cuBLAS on the masked matrix: Ad = A with zeros outside the blocks; ref[M,N] = Ad · Bᵀ, handed to
 * column-major cuBLAS as refᵀ (N×M) = (Bᵀ viewed K×N)ᵀ · (Ad viewed K×M) */
static void reference(void *v, int set, cudaStream_t str)
{
	struct st *s = (struct st *)v;
	const float one = 1.f, zero = 0.f;
	HX_CK(cudaMemsetAsync(s->ad, 0, (size_t)s->sh.M * s->sh.K * 2, str));
	if (s->nnzb > 0)
		bsr_densify_kernel<<<(unsigned)s->nnzb, 256, 0, str>>>(s->vals[set], s->ci[set], s->brow[set], s->ad,
									  s->sh.K);
	HX_CK_LAUNCH();
	CB_CK(cublasSetStream(s->h, str));
	CB_CK(cublasGemmEx(s->h, CUBLAS_OP_T, CUBLAS_OP_N, s->sh.N, s->sh.M, s->sh.K, &one, s->b[set], CUDA_R_16F,
			   s->sh.K, s->ad, CUDA_R_16F, s->sh.K, &zero, s->ref, CUDA_R_32F, s->sh.N, CUBLAS_COMPUTE_32F,
			   CUBLAS_GEMM_DEFAULT));
}

static struct hx_output output(void *v)
{
	struct st *s = (struct st *)v;
	struct hx_output o = {s->c, (size_t)s->sh.M * s->sh.N, HX_F16, s->ref};
	return o;
}

/* FP64 CPU check of 32 entries (both corners, an entry of the empty block-row when there is one) */
static int cpu_check(void *v, int set, uint64_t seed, double *max_abs, double *ref_max_abs, double *scale)
{
	struct st *s = (struct st *)v;
	uint16_t *arow = (uint16_t *)malloc(BLK * 2), *brow = (uint16_t *)malloc(BLK * 2);
	*max_abs = *ref_max_abs = *scale = 0;
	for (int t = 0; t < 32; t++) {
		uint64_t h = hx_splitmix(seed * 313 + t);
		int i = t == 0 ? 0 : (t == 1 ? s->sh.M - 1 : (int)(h % s->sh.M));
		int j = t == 0 ? 0 : (t == 1 ? s->sh.N - 1 : (int)((h >> 32) % s->sh.N));
		const int br = i / BLK;
		double want = 0;
		for (int q = s->hrp[set][br]; q < s->hrp[set][br + 1]; q++) {
			const int kb = s->hci[set][q] * BLK;
			HX_CK(cudaMemcpy(arow, s->vals[set] + ((size_t)q * BLK + i % BLK) * BLK, BLK * 2,
					 cudaMemcpyDeviceToHost));
			HX_CK(cudaMemcpy(brow, s->b[set] + (size_t)j * s->sh.K + kb, BLK * 2, cudaMemcpyDeviceToHost));
			for (int k = 0; k < BLK; k++)
				want += (double)hx_half_to_float(arow[k]) * hx_half_to_float(brow[k]);
		}
		uint16_t got;
		float rf;
		HX_CK(cudaMemcpy(&got, s->c + (size_t)i * s->sh.N + j, 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(&rf, s->ref + (size_t)i * s->sh.N + j, 4, cudaMemcpyDeviceToHost));
		double e = fabs(hx_half_to_float(got) - want);
		*max_abs = isnan(e) ? INFINITY : fmax(*max_abs, e);
		*ref_max_abs = fmax(*ref_max_abs, fabs(rf - want));
		*scale = fmax(*scale, fabs(want));
	}
	free(arow);
	free(brow);
	return 32;
}

int main(int argc, char **argv)
{
	static const struct hx_program prog = {
		"bsr_wgmma", params, 6,
		/* FP16 output of FP32 sums, as bsr_gemm */
		-1, -1, 2e-3,
		validate, edges, flops, bytes, input_bytes, create, destroy, fill, run, reference, output, cpu_check,
	};
	hx_config_int("BM", BM);
	hx_config_int("BN", BN);
	hx_config_int("BK", BK);
	hx_config_int("STAGES", STAGES);
	hx_config_int("CPARTS", CPARTS);
	hx_config_int("GROUP_M", BW_GROUP_M);
	hx_config_int("L2_DIV", BW_L2_DIV);
	hx_config_int("DYNAMIC", BW_DYNAMIC);
	hx_config_int("smem_bytes", (long long)SMEM_BYTES);
	if (BW_PLANT_BUG)
		hx_config_int("PLANT_BUG", BW_PLANT_BUG);
	return hx_main(argc, argv, &prog);
}
