/* attn_mma.cu -- FlashAttention-2-class forward with mma.sync m16n8k16 (sm_80+; built for sm_89 and sm_90a).
 *
 * DESIGN (the ladder's "FA2-class" rung, issue 11)
 *   One CTA = NWARPS warps = 16*NWARPS query rows of one (b, h); warp w owns rows 16w..16w+15.
 *   Shared memory holds the CTA's Q tile and a double-buffered ring of K and V tiles of BN keys,
 *   every row stored as 16-byte chunks XOR-swizzled by (row % 8): the 8 rows an ldmatrix
 *   8x8 matrix reads sit in 8 different bank groups, with no padding.  cp.async fills the ring;
 *   tile j+1 is in flight while tile j is computed.
 *   Per K/V tile, per warp, everything lives in registers:
 *     S(16xBN) = Q·Kᵀ       mma.sync m16n8k16 (FP16 in, FP32 acc); Q fragments loaded once
 *                           (ldmatrix.x4), K fragments by ldmatrix.x4 (K row-major = Bᵀ)
 *     online softmax         a row's 4 owners (a quad) reduce max with two shuffles; exp2 with
 *                           log2(e)/sqrt(D) folded into the scale; the row sum stays per
 *                           thread until the end
 *     P (FP16)               the S accumulators are the A fragments of P·V as they stand
 *                           (C layout of m16n8 == A layout of m16k16): no shared memory
 *     O(16xD) += P·V         V fragments by ldmatrix.x4.trans (V row-major = B)
 *   Keys >= S are zero-filled by cp.async and masked to -inf; causal CTAs stop after their
 *   diagonal tile and mask only there.  Any S >= 1 works; D is 64 or 128.
 *   Shared memory: (BM + 2*2*BN) * D * 2 bytes: 160 KB for D=128 at the sm_90 default
 *   (NWARPS=8 so BM=128, BN=128), 80 KB at the default elsewhere (NWARPS=4, BN=64).
 *
 *   TUNING (compile time): -DATTN_NWARPS=N (BM = 16*N, 2..8), -DATTN_BN=32|64|128.
 */
#include "attn_common.cuh"
#include "../harness/harness.h"

#include <stdint.h>
#include <stdio.h>

const char attn_kernel_name[] = "attn_mma";

/* Defaults by target: the H100 sweep's winner (8 warps, 128-key tiles: 160 KB
 * of shared memory at D=128, 1 CTA of 8 warps per SM) where the opt-in limit
 * allows it (sm_90: 227 KB), else 4 warps and 64 keys (80 KB: sm_80/86/89).
 * __CUDA_ARCH_LIST__ is the build's -arch, seen by host code too. */
#if defined(__CUDA_ARCH_LIST__) && __CUDA_ARCH_LIST__ >= 900
#define ATTN_BIG_SMEM 1
#else
#define ATTN_BIG_SMEM 0
#endif
#ifndef ATTN_NWARPS
#define ATTN_NWARPS (ATTN_BIG_SMEM ? 8 : 4)
#endif
#ifndef ATTN_BN
#define ATTN_BN (ATTN_BIG_SMEM ? 128 : 64)
#endif

constexpr int NWARPS = ATTN_NWARPS;
constexpr int BM = 16 * NWARPS;
constexpr int BN = ATTN_BN;
static_assert(NWARPS >= 2 && NWARPS <= 8, "ATTN_NWARPS must be 2..8");
static_assert(BN == 32 || BN == 64 || BN == 128, "ATTN_BN must be 32, 64 or 128");

template <int D> struct cfg {
	static constexpr int CH = D / 8;                      /* 16-byte chunks per row */
	static constexpr size_t q_bytes = (size_t)BM * D * 2;
	static constexpr size_t kv_tile = (size_t)BN * D * 2;
	static constexpr size_t smem = q_bytes + 4 * kv_tile; /* K, V double-buffered */
};

/* ---- PTX ---- */

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void cp_async16(uint32_t s, const void *g, int src_bytes)
{
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(g), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldsm_x4(uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3, uint32_t a)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3, uint32_t a)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
		     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(a));
}

/* D(16x8, f32) += A(16x16, f16, row) * B(16x8, f16, col) */
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
		     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
		     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t pack_half2(float lo, float hi)
{
	__half2 h = __floats2half2_rn(lo, hi);
	return *(uint32_t *)&h;
}

/* byte offset of (row, 16-byte chunk) in a swizzled tile of rows of CH chunks */
template <int CH> __device__ __forceinline__ uint32_t swz(int row, int chunk)
{
	return (uint32_t)((row * CH + (chunk ^ (row & 7))) * 16);
}

/* rows [r0, r0 + ROWS) of a [S, D] matrix into a swizzled tile; rows >= S zero-filled */
template <int D, int ROWS>
__device__ __forceinline__ void load_tile(uint32_t s_base, const __half *g, int r0, int S)
{
	constexpr int CH = D / 8;
	for (int i = threadIdx.x; i < ROWS * CH; i += NWARPS * 32) {
		int r = i / CH, c = i % CH, row = r0 + r;
		int ok = row < S;
		cp_async16(s_base + swz<CH>(r, c), g + (ok ? (size_t)row * D + c * 8 : 0), ok ? 16 : 0);
	}
}

template <int D>
__global__ void __launch_bounds__(NWARPS * 32)
attn_mma_kernel(const __half *__restrict__ Q, const __half *__restrict__ K, const __half *__restrict__ V,
		__half *__restrict__ O, int S, int causal, float scale_log2)
{
	using C = cfg<D>;
	constexpr int CH = C::CH, KS = D / 16, NT = BN / 8, DT = D / 8;
	extern __shared__ __align__(128) unsigned char smem[];
	const uint32_t sQ = smem_u32(smem);
	const uint32_t sK0 = sQ + (uint32_t)C::q_bytes, sV0 = sK0 + (uint32_t)(2 * C::kv_tile);
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	const int g = lane >> 2, t = lane & 3;

	/* heavy (causal) query blocks first: they have the most key tiles */
	const int qblk = causal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
	const size_t bh = blockIdx.y;
	const __half *q = Q + bh * S * D, *k = K + bh * S * D, *v = V + bh * S * D;
	const int m0 = qblk * BM;
	const int row0 = m0 + warp * 16 + g, row1 = row0 + 8; /* this thread's two query rows */

	int ntiles = (S + BN - 1) / BN;
	if (causal)
		ntiles = min(ntiles, (m0 + BM - 1) / BN + 1);

	load_tile<D, BM>(sQ, q, m0, S);
	load_tile<D, BN>(sK0, k, 0, S);
	load_tile<D, BN>(sV0, v, 0, S);
	cp_async_commit();

	float o[DT][4];
#pragma unroll
	for (int i = 0; i < DT; i++)
		o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.f;
	float mrow[2] = {-INFINITY, -INFINITY}, lrow[2] = {0.f, 0.f};
	uint32_t qf[KS][4];

	for (int j = 0; j < ntiles; j++) {
		const int buf = j & 1;
		if (j + 1 < ntiles) {
			const uint32_t nb = (uint32_t)((buf ^ 1) * C::kv_tile);
			load_tile<D, BN>(sK0 + nb, k, (j + 1) * BN, S);
			load_tile<D, BN>(sV0 + nb, v, (j + 1) * BN, S);
		}
		cp_async_commit();
		cp_async_wait<1>();
		__syncthreads();
		if (j == 0) {
			/* this warp's 16 Q rows, once: matrices (rows 0-7 | 8-15) x (chunk 2ks | 2ks+1) */
#pragma unroll
			for (int ks = 0; ks < KS; ks++) {
				int r = warp * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, c = 2 * ks + (lane >> 4);
				ldsm_x4(qf[ks][0], qf[ks][1], qf[ks][2], qf[ks][3], sQ + swz<CH>(r, c));
			}
		}
		const uint32_t sK = sK0 + (uint32_t)(buf * C::kv_tile), sV = sV0 + (uint32_t)(buf * C::kv_tile);

		/* S = Q Kᵀ */
		/* k-step outer, key tiles inner: consecutive MMAs write different accumulators, so
		 * they issue back to back (the asm is volatile: the compiler keeps this order) */
		float s[NT][4];
#pragma unroll
		for (int n = 0; n < NT; n++)
			s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
#pragma unroll
		for (int ks = 0; ks < KS; ks++) {
#pragma unroll
			for (int n = 0; n < NT; n += 2) {
				/* keys (8n..8n+7 | 8n+8..8n+15) x chunks 2ks, 2ks+1: b0,b1 of tile n and of n+1 */
				uint32_t b0, b1, b2, b3;
				ldsm_x4(b0, b1, b2, b3,
					sK + swz<CH>(8 * n + (lane & 7) + (lane >> 4) * 8, 2 * ks + ((lane >> 3) & 1)));
				mma16816(s[n], qf[ks], b0, b1);
				mma16816(s[n + 1], qf[ks], b2, b3);
			}
		}

		/* mask: keys past S, and past the diagonal when causal */
		const int n0 = j * BN;
		const bool edge = n0 + BN > S || (causal && n0 + BN - 1 > m0);
		if (edge) {
#pragma unroll
			for (int n = 0; n < NT; n++) {
#pragma unroll
				for (int e = 0; e < 4; e++) {
					int key = n0 + 8 * n + 2 * t + (e & 1), row = e < 2 ? row0 : row1;
					if (key >= S || (causal && key > row))
						s[n][e] = -INFINITY;
				}
			}
		}

		/* online softmax, rows row0 (e = 0, 1) and row1 (e = 2, 3) */
		float mx[2] = {mrow[0], mrow[1]};
#pragma unroll
		for (int n = 0; n < NT; n++) {
			mx[0] = fmaxf(mx[0], fmaxf(s[n][0], s[n][1]) * scale_log2);
			mx[1] = fmaxf(mx[1], fmaxf(s[n][2], s[n][3]) * scale_log2);
		}
#pragma unroll
		for (int h = 0; h < 2; h++) {
			mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffff, mx[h], 1));
			mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffff, mx[h], 2));
		}
		float base[2], alpha[2];
#pragma unroll
		for (int h = 0; h < 2; h++) {
			base[h] = mx[h] == -INFINITY ? 0.f : mx[h]; /* a row with no key yet: exp2(-inf) = 0 */
			alpha[h] = exp2f(mrow[h] - base[h]);
			mrow[h] = mx[h];
			lrow[h] *= alpha[h];
		}
#pragma unroll
		for (int i = 0; i < DT; i++) {
			o[i][0] *= alpha[0];
			o[i][1] *= alpha[0];
			o[i][2] *= alpha[1];
			o[i][3] *= alpha[1];
		}
		uint32_t p[NT][2];
#pragma unroll
		for (int n = 0; n < NT; n++) {
			float p0 = exp2f(s[n][0] * scale_log2 - base[0]), p1 = exp2f(s[n][1] * scale_log2 - base[0]);
			float p2 = exp2f(s[n][2] * scale_log2 - base[1]), p3 = exp2f(s[n][3] * scale_log2 - base[1]);
			lrow[0] += p0 + p1;
			lrow[1] += p2 + p3;
			p[n][0] = pack_half2(p0, p1);
			p[n][1] = pack_half2(p2, p3);
		}

		/* O += P V: k-step kk covers keys 16kk..16kk+15 = S n-tiles 2kk, 2kk+1 */
#pragma unroll
		for (int kk = 0; kk < BN / 16; kk++) {
			const uint32_t a[4] = {p[2 * kk][0], p[2 * kk][1], p[2 * kk + 1][0], p[2 * kk + 1][1]};
#pragma unroll
			for (int dn = 0; dn < DT; dn += 2) {
				/* keys 16kk + (0-7 | 8-15) x chunks dn, dn+1: b0,b1 of d-tile dn and of dn+1 */
				uint32_t b0, b1, b2, b3;
				int r = 16 * kk + (lane & 7) + ((lane >> 3) & 1) * 8, c = dn + (lane >> 4);
				ldsm_x4_t(b0, b1, b2, b3, sV + swz<CH>(r, c));
				mma16816(o[dn], a, b0, b1);
				mma16816(o[dn + 1], a, b2, b3);
			}
		}
		__syncthreads(); /* the buffer is refilled by the next iteration's loads */
	}

	/* normalise and store */
#pragma unroll
	for (int h = 0; h < 2; h++) {
		lrow[h] += __shfl_xor_sync(0xffffffff, lrow[h], 1);
		lrow[h] += __shfl_xor_sync(0xffffffff, lrow[h], 2);
	}
	const float inv0 = lrow[0] > 0.f ? 1.f / lrow[0] : 0.f, inv1 = lrow[1] > 0.f ? 1.f / lrow[1] : 0.f;
	__half *out = O + bh * S * D;
#pragma unroll
	for (int dn = 0; dn < DT; dn++) {
		int col = 8 * dn + 2 * t;
		if (row0 < S)
			*(__half2 *)(out + (size_t)row0 * D + col) = __floats2half2_rn(o[dn][0] * inv0, o[dn][1] * inv0);
		if (row1 < S)
			*(__half2 *)(out + (size_t)row1 * D + col) = __floats2half2_rn(o[dn][2] * inv1, o[dn][3] * inv1);
	}
}

template <int D> static void launch(const struct attn_problem *p, const struct attn_bufs *b, cudaStream_t s)
{
	static int attr_set = 0;
	if (!attr_set) {
		HX_CK(cudaFuncSetAttribute(attn_mma_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
					   (int)cfg<D>::smem));
		attr_set = 1;
	}
	dim3 grid((p->S + BM - 1) / BM, p->B * p->H);
	attn_mma_kernel<D><<<grid, NWARPS * 32, cfg<D>::smem, s>>>(b->q, b->k, b->v, b->o, p->S, p->causal,
								     p->scale * 1.4426950408889634f);
}

static int config_init()
{
	hx_config_int("BM", BM);
	hx_config_int("BN", BN);
	hx_config_int("NWARPS", NWARPS);
	hx_config_int("STAGES", 2);
	return 0;
}
[[maybe_unused]] static const int config_done = config_init();

int attn_kernel_supports(const struct attn_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	if (p->D != 64 && p->D != 128) {
		snprintf(why, n, "attn_mma is built for D=64 and D=128 only (got D=%d)", p->D);
		return 1;
	}
	if (prop->major < 8) {
		snprintf(why, n, "attn_mma needs mma.sync m16n8k16, ldmatrix and cp.async (sm_80+), device is cc %d.%d",
			 prop->major, prop->minor);
		return 1;
	}
	size_t need = p->D == 64 ? cfg<64>::smem : cfg<128>::smem;
	hx_config_int("smem_bytes", (long long)need);
	if (need > prop->sharedMemPerBlockOptin)
		hx_failf(1, "attn_mma (BM=%d, BN=%d, D=%d) needs %zu bytes of shared memory per CTA, the device "
			    "allows %zu; rebuild with a smaller ATTN_BN or ATTN_NWARPS",
			 BM, BN, p->D, need, (size_t)prop->sharedMemPerBlockOptin);
	return 0;
}

void *attn_kernel_init(const struct attn_problem *p) { (void)p; return NULL; }
void attn_kernel_fini(void *ws) { (void)ws; }

void attn_kernel_run(void *ws, const struct attn_problem *p, const struct attn_bufs *b, cudaStream_t s)
{
	(void)ws;
	if (p->D == 64)
		launch<64>(p, b, s);
	else
		launch<128>(p, b, s);
}
