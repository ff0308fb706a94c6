/* hopper.cuh -- the sm_90a building blocks shared by gemm_wgmma and bsr_wgmma: PTX wrappers for mbarriers,
 * TMA (cp.async.bulk.tensor) loads and stores, wgmma (m64n128k16 / m64n256k16, FP16 in, FP32 accumulate) with
 * 128B-swizzled K-major shared-memory descriptors, and the host side of TMA: cuTensorMapEncodeTiled reached
 * through cudaGetDriverEntryPointByVersion (no -lcuda) and 2-D / 3-D FP16 tensor maps with 128-byte swizzle.
 * attn_wgmma adds the 3-D TMA load, N-major (transposed-B) descriptors and wgmma with A in registers.
 * Include after harness.h; the device functions compile for any arch but are only meaningful on sm_90a
 * (callers guard their kernels with HP_DEVICE_OK).
 */
#ifndef GPUORCH_HOPPER_CUH
#define GPUORCH_HOPPER_CUH

#include <cuda.h>          /* CUtensorMap and its enums (types only: no -lcuda) */
#include <cudaTypedefs.h>  /* PFN_cuTensorMapEncodeTiled */
#include <cuda_fp16.h>     /* __half2 (the C epilogue) */
#include <stdint.h>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define HP_DEVICE_OK 1
#else
#define HP_DEVICE_OK 0
#endif

/* ---- PTX wrappers (sm_90a) ---- */

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint64_t *b, unsigned count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(b)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(uint64_t *b, unsigned bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(b)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t *b)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(b)) : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t *b, unsigned parity)
{
	uint32_t done = 0, a = smem_u32(b);
	while (!done)
		asm volatile("{\n\t.reg .pred p;\n\t"
			     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
			     "selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done) : "r"(a), "r"(parity) : "memory");
}

__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, int x, int y, uint64_t *bar)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
		     ::"r"(smem_u32(dst)), "l"((uint64_t)map), "r"(x), "r"(y), "r"(smem_u32(bar)) : "memory");
}

__device__ __forceinline__ void tma_load_3d(void *dst, const CUtensorMap *map, int x, int y, int z, uint64_t *bar)
{
	asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
		     ::"r"(smem_u32(dst)), "l"((uint64_t)map), "r"(x), "r"(y), "r"(z), "r"(smem_u32(bar)) : "memory");
}

/* the same load, written to the same shared-memory offset of every CTA of the cluster named in cta_mask (bit
 * r = the CTA of rank r), each completing `bar` at the same offset in its own shared memory */
__device__ __forceinline__ void tma_load_2d_mc(void *dst, const CUtensorMap *map, int x, int y, uint64_t *bar,
					       uint16_t cta_mask)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
		     " [%0], [%1, {%2, %3}], [%4], %5;\n"
		     ::"r"(smem_u32(dst)), "l"((uint64_t)map), "r"(x), "r"(y), "r"(smem_u32(bar)), "h"(cta_mask)
		     : "memory");
}

/* ---- clusters ---- */

__device__ __forceinline__ uint32_t cluster_rank()
{
	uint32_t r;
	asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
	return r;
}

/* arrive on the mbarrier at b's offset in the shared memory of the cluster's CTA of rank `rank` (itself too).
 * The default semantics (release at CTA scope), as CUTLASS's ClusterBarrier: what the arrive publishes is that
 * this warp's wgmmas have finished reading a stage (wgmma.wait_group), not data. `.release.cluster` compiles to
 * MEMBAR.ALL.GPU before every arrive: on an H100 that halved gemm_wgmma's throughput (NOTES.md) */
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t *b, uint32_t rank)
{
	asm volatile("{\n\t.reg .b32 ra;\n\t"
		     "mapa.shared::cluster.u32 ra, %0, %1;\n\t"
		     "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n"
		     ::"r"(smem_u32(b)), "r"(rank) : "memory");
}

/* every thread of every CTA of the cluster: what each wrote before (barrier inits included) is seen after */
__device__ __forceinline__ void cluster_sync()
{
	asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;\n" ::: "memory");
}

__device__ __forceinline__ void tma_store_2d(const CUtensorMap *map, const void *src, int x, int y)
{
	asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
		     ::"l"((uint64_t)map), "r"(x), "r"(y), "r"(smem_u32(src)) : "memory");
}

__device__ __forceinline__ void tma_store_3d(const CUtensorMap *map, const void *src, int x, int y, int z)
{
	asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n"
		     ::"l"((uint64_t)map), "r"(x), "r"(y), "r"(z), "r"(smem_u32(src)) : "memory");
}

/* fetch a TMA descriptor (a __grid_constant__ kernel parameter) into its cache before its first use */
__device__ __forceinline__ void hp_prefetch_tmap(const CUtensorMap *map)
{
	asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)map) : "memory");
}

__device__ __forceinline__ void bar_named(int id, int n) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory"); }

__device__ __forceinline__ uint64_t desc_sw128(const void *p, int swizzle)
{
	uint64_t d = (uint64_t)((smem_u32(p) & 0x3FFFF) >> 4);
	d |= (uint64_t)1 << 16;             /* LBO: unused for swizzled K-major */
	d |= (uint64_t)(1024 >> 4) << 32;   /* SBO: 8 rows × 128 B */
	d |= (uint64_t)swizzle << 62;       /* 1 = 128B swizzle */
	return d;
}

/* MN-major operand (B with imm-trans-b = 1: N contiguous), 128B swizzle: 64 elements of N per 128-byte row,
 * 8 rows of K at 128 B, groups of 8 K rows at SBO = 1024 B, the next 64 N at LBO bytes (PTX ISA "matrix
 * descriptor"; CUTLASS's canonical Major-MN SW128 layout ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))) */
__device__ __forceinline__ uint64_t desc_mn_sw128(const void *p, uint32_t lbo_bytes)
{
	uint64_t d = (uint64_t)((smem_u32(p) & 0x3FFFF) >> 4);
	d |= (uint64_t)((lbo_bytes >> 4) & 0x3FFF) << 16;
	d |= (uint64_t)(1024 >> 4) << 32;
	d |= (uint64_t)1 << 62;
	return d;
}

/* descriptor d moved by `bytes` (a multiple of 16) in shared memory: its address field (bits 0-13, the
 * address >> 4) is the low word's low bits, and no shared address reaches 256 KB, so no carry leaves it:
 * one add, where building the descriptor from the address again is a mask, a shift and an or */
__device__ __forceinline__ uint64_t desc_add(uint64_t d, uint32_t bytes)
{
	return (d & 0xFFFFFFFF00000000ull) | (uint32_t)((uint32_t)d + (bytes >> 4));
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

/* The wgmma accumulator operands, so that each wrapper need not spell them out: HP_D<n> is the asm text
 * "%0, %1, ..., %<n-1>" (the numbers must be literal text, hence a table in groups of 8) and HP_C<n> the
 * matching constraints "+f"(d[0]), ..., "+f"(d[n-1]); the inputs that follow are numbered from n */
#define HP_ACC8(b) "+f"(d[b]), "+f"(d[b + 1]), "+f"(d[b + 2]), "+f"(d[b + 3]), \
		   "+f"(d[b + 4]), "+f"(d[b + 5]), "+f"(d[b + 6]), "+f"(d[b + 7])
#define HP_D8            "%0, %1, %2, %3, %4, %5, %6, %7"
#define HP_D16  HP_D8    ", %8, %9, %10, %11, %12, %13, %14, %15"
#define HP_D24  HP_D16   ", %16, %17, %18, %19, %20, %21, %22, %23"
#define HP_D32  HP_D24   ", %24, %25, %26, %27, %28, %29, %30, %31"
#define HP_D40  HP_D32   ", %32, %33, %34, %35, %36, %37, %38, %39"
#define HP_D48  HP_D40   ", %40, %41, %42, %43, %44, %45, %46, %47"
#define HP_D56  HP_D48   ", %48, %49, %50, %51, %52, %53, %54, %55"
#define HP_D64  HP_D56   ", %56, %57, %58, %59, %60, %61, %62, %63"
#define HP_D72  HP_D64   ", %64, %65, %66, %67, %68, %69, %70, %71"
#define HP_D80  HP_D72   ", %72, %73, %74, %75, %76, %77, %78, %79"
#define HP_D88  HP_D80   ", %80, %81, %82, %83, %84, %85, %86, %87"
#define HP_D96  HP_D88   ", %88, %89, %90, %91, %92, %93, %94, %95"
#define HP_D104 HP_D96   ", %96, %97, %98, %99, %100, %101, %102, %103"
#define HP_D112 HP_D104  ", %104, %105, %106, %107, %108, %109, %110, %111"
#define HP_D120 HP_D112  ", %112, %113, %114, %115, %116, %117, %118, %119"
#define HP_D128 HP_D120  ", %120, %121, %122, %123, %124, %125, %126, %127"
#define HP_C8            HP_ACC8(0)
#define HP_C16  HP_C8,   HP_ACC8(8)
#define HP_C24  HP_C16,  HP_ACC8(16)
#define HP_C32  HP_C24,  HP_ACC8(24)
#define HP_C40  HP_C32,  HP_ACC8(32)
#define HP_C48  HP_C40,  HP_ACC8(40)
#define HP_C56  HP_C48,  HP_ACC8(48)
#define HP_C64  HP_C56,  HP_ACC8(56)
#define HP_C72  HP_C64,  HP_ACC8(64)
#define HP_C80  HP_C72,  HP_ACC8(72)
#define HP_C88  HP_C80,  HP_ACC8(80)
#define HP_C96  HP_C88,  HP_ACC8(88)
#define HP_C104 HP_C96,  HP_ACC8(96)
#define HP_C112 HP_C104, HP_ACC8(104)
#define HP_C120 HP_C112, HP_ACC8(112)
#define HP_C128 HP_C120, HP_ACC8(120)

/* the asm of wgmma m64n<n>k16 with A and B from shared-memory descriptors da and db: the accumulators are
 * operands 0 .. r-1, da and db operands r and r1 = r + 1 (literal text, as above) */
#define HP_WGMMA_SS(n, r, r1) \
	asm volatile("wgmma.mma_async.sync.aligned.m64n" #n "k16.f32.f16.f16 {" HP_D##r "}, %" #r ", %" #r1 \
		     ", 1, 1, 1, 0, 0;\n" : HP_C##r : "l"(da), "l"(db))

__device__ __forceinline__ void wgmma_n128(float (&d)[64], uint64_t da, uint64_t db) { HP_WGMMA_SS(128, 64, 65); }

/* wgmma_n128 with scale-d from a register: 0 overwrites D (D = A·B: no zeroing of D needed), 1 accumulates */
__device__ __forceinline__ void wgmma_n128_sd(float (&d)[64], uint64_t da, uint64_t db, int scale_d)
{
	asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %66, 0;\n\t"
		     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" HP_D64 "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
		     : HP_C64 : "l"(da), "l"(db), "r"(scale_d));
}

__device__ __forceinline__ void wgmma_n256(float (&d)[128], uint64_t da, uint64_t db) { HP_WGMMA_SS(256, 128, 129); }

/* D(64x64) += A(64x16, registers: the m16n8k16 A fragment per warp) * B(16x64, N-major via descriptor) */
__device__ __forceinline__ void wgmma_rs_n64_tb(float (&d)[32], const uint32_t (&a)[4], uint64_t db)
{
	asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {" HP_D32 "}, {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
		     : HP_C32 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

/* D(64x128) += A(64x16, registers: the m16n8k16 A fragment per warp) * B(16x128, N-major via descriptor) */
__device__ __forceinline__ void wgmma_rs_n128_tb(float (&d)[64], const uint32_t (&a)[4], uint64_t db)
{
	asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" HP_D64 "}, {%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"
		     : HP_C64 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

/* D(64x64) += A(64x16) * B(16x64), both from 128B-swizzled K-major shared memory (attn_wgmma's Q·Kᵀ at BN = 64) */
__device__ __forceinline__ void wgmma_n64(float (&d)[32], uint64_t da, uint64_t db) { HP_WGMMA_SS(64, 32, 33); }

/* D(64xN) += A(64x16) * B(16xN), both from 128B-swizzled K-major shared memory: attn_wgmma's Q·Kᵀ at D=128
 * with K/V tiles of BN = N keys (FA_BN128; FlashAttention-3 uses 176 at D=128 non-causal) */
__device__ __forceinline__ void wgmma_n160(float (&d)[80], uint64_t da, uint64_t db) { HP_WGMMA_SS(160, 80, 81); }

__device__ __forceinline__ void wgmma_n176(float (&d)[88], uint64_t da, uint64_t db) { HP_WGMMA_SS(176, 88, 89); }

__device__ __forceinline__ void wgmma_n192(float (&d)[96], uint64_t da, uint64_t db) { HP_WGMMA_SS(192, 96, 97); }
/* A consumer warpgroup's 64×BN FP32 accumulators (the m64nBNk16 fragment: element i of thread tid is row
 * 16·(tid/32) + (tid%32)/4 + 8·((i%4)/2), column 8·(i/4) + 2·(tid%4) + i%2) stored as FP16 at (x0, y0) of a 2-D
 * tensor map, through the warpgroup's shared buffer cb in PARTS (1 or 2) parts of BN/PARTS columns: 64×64 blocks
 * of 64 rows × 128 B, 16-byte chunks XOR row%8 (the 128B swizzle the map reads: a warp's 8 rows land in 8
 * different chunks, no bank conflicts), one TMA store per block. Each part first waits until the previous store
 * (the previous tile's too) has read the buffer; the stores run on while the warpgroup goes on. CLIP: a block
 * whose first column is at or past x_end is not stored and a part wholly past it is skipped (TMA clips a box at
 * the matrix edge anyway). bar: a named barrier of this warpgroup's 128 threads (tid 0..127) */
template <int BN, int PARTS, int PART, bool CLIP>
__device__ __forceinline__ void hp_store_c_part(const float (&d)[BN / 2], unsigned char *cb, const CUtensorMap *map,
						int x0, int y0, int x_end, int bar, int tid)
{
	constexpr int CBLK = BN / 64 / PARTS; /* 64-column blocks a part */
	const int w = tid / 32, l = tid % 32;
	const uint32_t base = smem_u32(cb);
	if (tid == 0)
		asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); /* the last store read it */
	bar_named(bar, 128);
#pragma unroll
	for (int i = PART * CBLK * 32; i < (PART + 1) * CBLK * 32; i += 2) {
		const int row = 16 * w + l / 4 + 8 * ((i % 4) / 2), col = 8 * (i / 4) + 2 * (l % 4);
		const int blk = col / 64 - PART * CBLK, chunk = (col % 64) / 8;
		const __half2 h = __floats2half2_rn(d[i], d[i + 1]);
		/* a shared-window address: st.shared, not a generic store through a 64-bit pointer */
		asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(base + blk * 8192 + row * 128 + ((chunk ^ (row % 8)) * 16) +
							    (col % 8) * 2),
			     "r"(*reinterpret_cast<const uint32_t *>(&h))
			     : "memory");
	}
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
	bar_named(bar, 128);
	if (tid == 0) {
#pragma unroll
		for (int b = 0; b < CBLK; b++) {
			const int x = x0 + (PART * CBLK + b) * 64;
			if (!CLIP || x < x_end)
				tma_store_2d(map, cb + b * 8192, x, y0);
		}
		asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
	}
}

template <int BN, int PARTS, bool CLIP>
__device__ __forceinline__ void hp_store_c_tma(const float (&d)[BN / 2], unsigned char *cb, const CUtensorMap *map,
					       int x0, int y0, int x_end, int bar, int tid)
{
	static_assert((PARTS == 1 || PARTS == 2) && BN % (64 * PARTS) == 0, "1 or 2 parts of whole 64-column blocks");
	hp_store_c_part<BN, PARTS, 0, CLIP>(d, cb, map, x0, y0, x_end, bar, tid);
	if (PARTS == 2 && (!CLIP || x0 + BN / 2 < x_end)) /* else the second half lies wholly past the edge */
		hp_store_c_part<BN, PARTS, PARTS - 1, CLIP>(d, cb, map, x0, y0, x_end, bar, tid);
}

template <int N> struct acc_t;
template <> struct acc_t<64> { static __device__ __forceinline__ void mma(float (&d)[32], uint64_t a, uint64_t b) { wgmma_n64(d, a, b); } };
template <> struct acc_t<128> { static __device__ __forceinline__ void mma(float (&d)[64], uint64_t a, uint64_t b) { wgmma_n128(d, a, b); } };
template <> struct acc_t<160> { static __device__ __forceinline__ void mma(float (&d)[80], uint64_t a, uint64_t b) { wgmma_n160(d, a, b); } };
template <> struct acc_t<176> { static __device__ __forceinline__ void mma(float (&d)[88], uint64_t a, uint64_t b) { wgmma_n176(d, a, b); } };
template <> struct acc_t<192> { static __device__ __forceinline__ void mma(float (&d)[96], uint64_t a, uint64_t b) { wgmma_n192(d, a, b); } };
template <> struct acc_t<256> { static __device__ __forceinline__ void mma(float (&d)[128], uint64_t a, uint64_t b) { wgmma_n256(d, a, b); } };


/* ---- host: tensor maps ---- */

static PFN_cuTensorMapEncodeTiled_v12000 encode_fn(void)
{
	static PFN_cuTensorMapEncodeTiled_v12000 fn;
	if (!fn) {
		enum cudaDriverEntryPointQueryResult q;
		void *f = NULL;
		HX_CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q));
		if (q != cudaDriverEntryPointSuccess || !f)
			hx_failf(1, "cuTensorMapEncodeTiled not found in the driver (query result %d); needs a CUDA 12+ driver",
				 (int)q);
		fn = (PFN_cuTensorMapEncodeTiled_v12000)f;
	}
	return fn;
}

/* 2-D FP16 tensor map over a row-major [rows, cols] matrix with row stride ld elements (ld * 2 % 16 == 0):
 * box box_cols (inner, 64 = 128 B for the 128B swizzle) x box_rows, 128B swizzle; TMA zero-fills loads
 * beyond rows/cols and clips stores there */
static void hp_make_map(CUtensorMap *m, const void *g, int rows, int cols, int ld, int box_cols, int box_rows)
{
	cuuint64_t dim[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
	cuuint64_t stride[1] = {(cuuint64_t)ld * 2};
	cuuint32_t box[2] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows};
	cuuint32_t estride[2] = {1, 1};
	CUresult r = encode_fn()(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)g, dim, stride, box, estride,
				 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
				 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r != CUDA_SUCCESS)
		hx_failf(1, "cuTensorMapEncodeTiled failed (CUresult %d) for a %d x %d matrix, ld %d, box %d x %d",
			 (int)r, rows, cols, ld, box_rows, box_cols);
}


/* 3-D FP16 tensor map over a contiguous [planes, rows, cols] array (cols * 2 % 16 == 0): box box_cols (64 =
 * 128 B for the 128B swizzle) x box_rows x 1, 128B swizzle; TMA zero-fills rows beyond `rows` inside each
 * plane, so a tile never reads the next plane's rows */
static void hp_make_map_3d(CUtensorMap *m, const void *g, int planes, int rows, int cols, int box_cols, int box_rows)
{
	cuuint64_t dim[3] = {(cuuint64_t)cols, (cuuint64_t)rows, (cuuint64_t)planes};
	cuuint64_t stride[2] = {(cuuint64_t)cols * 2, (cuuint64_t)rows * cols * 2};
	cuuint32_t box[3] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows, 1};
	cuuint32_t estride[3] = {1, 1, 1};
	CUresult r = encode_fn()(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, (void *)g, dim, stride, box, estride,
				 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
				 CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r != CUDA_SUCCESS)
		hx_failf(1, "cuTensorMapEncodeTiled failed (CUresult %d) for a %d x %d x %d array, box %d x %d",
			 (int)r, planes, rows, cols, box_rows, box_cols);
}

#endif
