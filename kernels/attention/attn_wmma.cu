/* attn_wmma.cu -- FlashAttention-2-style forward with WMMA m16n16k16 (sm_80+; built for sm_89 and sm_90a).
 *
 * DESIGN
 *   One CTA = NWARPS warps = BM query rows of one (b, h), as BM/16 groups of 16
 *   rows; warp w owns groups w, w + NWARPS, ... (rows 16w..16w+15 by default).
 *   K/V tiles of BN keys stream through shared memory with cp.async, STAGES deep
 *   (double buffering by default), rows padded by 8 halves so ldmatrix-style
 *   fragment loads spread over the banks.  Per tile, warp and row group:
 *     S(16×BN) = Q·Kᵀ      WMMA, Q fragments held in registers, K as col_major matrix_b
 *     online softmax        2 lanes per row, exp2 with log2(e)/sqrt(D) folded in,
 *                           P written as FP16 over the S tile (same bytes)
 *     O(16×D) += P·V        WMMA, the FP32 O accumulator kept in shared memory so that
 *                           the softmax rescale (alpha) can touch it row by row
 *   Keys >= S are zero-filled by cp.async and masked to -inf; causal CTAs stop at
 *   their diagonal tile.  Any S >= 1 works.  Config by D: D=64 → BN=64, D=128 → BN=32
 *   (77 KB of shared memory, so two CTAs fit on an H100 SM and one on an L4 SM).
 *
 *   TUNING (compile time; the defaults are the configuration above):
 *     -DATTN_BM=64      query rows per CTA, a multiple of 16*ATTN_NWARPS, at most
 *                       64*ATTN_NWARPS (a warp keeps Q fragments of up to 4 groups)
 *     -DATTN_NWARPS=4   warps per CTA (1..16)
 *     -DATTN_BN=N       keys per K/V tile for every D, a multiple of 16 up to 128
 *                       (default: 64 for D=64, 32 for D=128)
 *     -DATTN_STAGES=2   cp.async stages of the K/V ring (1..4; 1 = no overlap)
 *   Shared memory per CTA: STAGES*2*BN*(D+8)*2 (K, V) + NWARPS*16*(BN+4)*4 (S/P)
 *   + BM*(D+4)*4 (O) bytes; a configuration over the 227 KB opt-in limit of
 *   sm_80/sm_90 for D=64 or D=128 does not compile.  One that exceeds this
 *   device's opt-in limit, or cannot be resident at all, is reported as status
 *   "error" naming the configuration.  The result's "config" object names it.
 *
 *   -DATTN_PLANT_BUG=1 plants an indexing bug (K rows read one key late) for
 *   tests/gpu/t-planted-bug.sh: the harness must report "fail".
 */
#include "attn_common.cuh"
#include "../harness/harness.h"

#include <mma.h>
#include <stdio.h>

#ifndef ATTN_PLANT_BUG
#define ATTN_PLANT_BUG 0
#endif

using namespace nvcuda;

const char attn_kernel_name[] = "attn_wmma";

#ifndef ATTN_BM
#define ATTN_BM 64
#endif
#ifndef ATTN_NWARPS
#define ATTN_NWARPS 4
#endif
#ifndef ATTN_STAGES
#define ATTN_STAGES 2
#endif
#ifdef ATTN_BN
#define ATTN_BN_D64 ATTN_BN
#define ATTN_BN_D128 ATTN_BN
#else
#define ATTN_BN_D64 64
#define ATTN_BN_D128 32
#endif

constexpr int BM = ATTN_BM;
constexpr int NWARPS = ATTN_NWARPS;
constexpr int STAGES = ATTN_STAGES;
constexpr int RG = BM / (16 * NWARPS); /* 16-row groups per warp */
constexpr size_t SMEM_OPTIN_MAX = 227 * 1024; /* sm_80 163 KB, sm_86/89 99 KB, sm_90 227 KB */

static_assert(NWARPS >= 1 && NWARPS <= 16, "ATTN_NWARPS must be 1..16");
static_assert(BM >= 16 && BM % (16 * NWARPS) == 0, "ATTN_BM must be a positive multiple of 16*ATTN_NWARPS");
static_assert(BM <= 256, "ATTN_BM must be at most 256");
static_assert(STAGES >= 1 && STAGES <= 4, "ATTN_STAGES must be 1..4");
static_assert(RG <= 4, "a warp holds the Q fragments of at most 4 row groups: ATTN_BM <= 64*ATTN_NWARPS");

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int src_bytes)
{
	unsigned s = (unsigned)__cvta_generic_to_shared(smem);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

template <int D, int BN, int NST> struct cfg {
	static_assert(BN >= 16 && BN <= 128 && BN % 16 == 0, "ATTN_BN must be a multiple of 16 from 16 to 128");
	static constexpr int LDKV = D + 8;  /* halves */
	static constexpr int LDS = BN + 4;  /* floats; P uses 2*LDS halves */
	static constexpr int LDO = D + 4;   /* floats */
	static constexpr size_t kv_bytes = (size_t)NST * 2 * BN * LDKV * 2;
	static constexpr size_t s_bytes = (size_t)NWARPS * 16 * LDS * 4;
	static constexpr size_t o_bytes = (size_t)BM * LDO * 4;
	static constexpr size_t smem = kv_bytes + s_bytes + o_bytes;
	static_assert(smem <= SMEM_OPTIN_MAX,
		      "shared memory per CTA over 227 KB: lower ATTN_BM, ATTN_BN or ATTN_STAGES");
};

template <int D, int BN>
__device__ __forceinline__ void load_kv_tile(__half *sK, __half *sV, const __half *k, const __half *v, int n0, int S)
{
	constexpr int LDKV = D + 8, VPR = D / 8; /* 16-byte vectors per row */
	for (int i = threadIdx.x; i < BN * VPR; i += NWARPS * 32) {
		int r = i / VPR, c = (i % VPR) * 8;
		int j = n0 + r + ATTN_PLANT_BUG;
		int ok = j < S;
		size_t off = ok ? (size_t)j * D + c : 0;
		cp_async16(&sK[r * LDKV + c], k + off, ok ? 16 : 0);
		cp_async16(&sV[r * LDKV + c], v + off, ok ? 16 : 0);
	}
}

template <int D, int BN, int NST>
__global__ void __launch_bounds__(NWARPS * 32)
attn_wmma_kernel(const __half *__restrict__ Q, const __half *__restrict__ K, const __half *__restrict__ V,
		 __half *__restrict__ O, int S, int causal, float scale_log2)
{
	using C = cfg<D, BN, NST>;
	extern __shared__ __align__(128) unsigned char smem[];
	__half *sKV = (__half *)smem;
	float *sS_all = (float *)(smem + C::kv_bytes);
	float *sO_all = (float *)(smem + C::kv_bytes + C::s_bytes);
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	float *sS = sS_all + warp * 16 * C::LDS;
	__half *sP = (__half *)sS; /* P (16×BN halves, ld 2*LDS) overwrites S */
	/* row group g of this warp: rows qw0 + g*GSTEP .. +15, O at sO0 + g*GSTEP*LDO */
	float *sO0 = sO_all + warp * 16 * C::LDO;
	constexpr int GSTEP = NWARPS * 16;

	const size_t bh = blockIdx.y;
	const __half *q = Q + bh * S * D, *k = K + bh * S * D, *v = V + bh * S * D;
	const int m0 = blockIdx.x * BM, qw0 = m0 + warp * 16;

	/* Q rows of each group → (its sO area, as halves) → register fragments */
	wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> qf[RG][D / 16];
	float m_run[RG], l_run[RG];
#pragma unroll
	for (int g = 0; g < RG; g++) {
		const int qg0 = qw0 + g * GSTEP;
		float *sO = sO0 + g * GSTEP * C::LDO;
		__half *sQ = (__half *)sO;
		constexpr int VPR = D / 8;
		for (int i = lane; i < 16 * VPR; i += 32) {
			int r = i / VPR, c = (i % VPR) * 8;
			uint4 val = make_uint4(0, 0, 0, 0);
			if (qg0 + r < S)
				val = *(const uint4 *)(q + (size_t)(qg0 + r) * D + c);
			*(uint4 *)&sQ[r * (D + 8) + c] = val;
		}
		__syncwarp();
#pragma unroll
		for (int kk = 0; kk < D / 16; kk++)
			wmma::load_matrix_sync(qf[g][kk], sQ + kk * 16, D + 8);
		__syncwarp();
		for (int i = lane; i < 16 * C::LDO; i += 32)
			sO[i] = 0.f;
	}

	const int kend = causal ? min(S, m0 + BM) : S;
	const int ntiles = (kend + BN - 1) / BN;
	const int row = lane / 2, half_ = lane % 2; /* softmax: 2 lanes per row */
#pragma unroll
	for (int g = 0; g < RG; g++) {
		m_run[g] = -INFINITY;
		l_run[g] = 0.f;
	}

#pragma unroll
	for (int st = 0; st < NST - 1; st++) {
		if (st < ntiles)
			load_kv_tile<D, BN>(sKV + (size_t)st * 2 * BN * C::LDKV, sKV + ((size_t)st * 2 + 1) * BN * C::LDKV, k,
					    v, st * BN, S);
		cp_async_commit();
	}

	for (int t = 0; t < ntiles; t++) {
		__syncthreads(); /* everyone is done with the stage about to be refilled */
		{
			int tn = t + NST - 1;
			if (tn < ntiles) {
				int sg = tn % NST;
				load_kv_tile<D, BN>(sKV + (size_t)sg * 2 * BN * C::LDKV,
						    sKV + ((size_t)sg * 2 + 1) * BN * C::LDKV, k, v, tn * BN, S);
			}
			cp_async_commit();
		}
		cp_async_wait<NST - 1>();
		__syncthreads();
		const int sg = t % NST;
		const __half *sK = sKV + (size_t)sg * 2 * BN * C::LDKV;
		const __half *sV = sK + (size_t)BN * C::LDKV;
		const int n0 = t * BN;

#pragma unroll
		for (int g = 0; g < RG; g++) {
			const int qrow = qw0 + g * GSTEP + row;
			float *sO = sO0 + g * GSTEP * C::LDO;

			/* S = Q Kᵀ */
#pragma unroll
			for (int j = 0; j < BN / 16; j++) {
				wmma::fragment<wmma::accumulator, 16, 16, 16, float> sf;
				wmma::fill_fragment(sf, 0.f);
#pragma unroll
				for (int kk = 0; kk < D / 16; kk++) {
					wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> kf;
					wmma::load_matrix_sync(kf, sK + j * 16 * C::LDKV + kk * 16, C::LDKV);
					wmma::mma_sync(sf, qf[g][kk], kf, sf);
				}
				wmma::store_matrix_sync(sS + j * 16, sf, C::LDS, wmma::mem_row_major);
			}
			__syncwarp();

			/* online softmax on row `row`, columns [half_*BN/2, +BN/2) */
			constexpr int HC = BN / 2;
			float sv[HC];
			float mx = -INFINITY;
#pragma unroll
			for (int c = 0; c < HC; c++) {
				int col = half_ * HC + c, key = n0 + col;
				float x = sS[row * C::LDS + col] * scale_log2;
				if (key >= S || (causal && key > qrow))
					x = -INFINITY;
				sv[c] = x;
				mx = fmaxf(mx, x);
			}
			mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
			float m_new = fmaxf(m_run[g], mx);
			float m_use = m_new == -INFINITY ? 0.f : m_new;
			float alpha = exp2f(m_run[g] - m_use); /* m_run = -inf → 0 */
			float sum = 0.f;
#pragma unroll
			for (int c = 0; c < HC; c++) {
				sv[c] = exp2f(sv[c] - m_use);
				sum += sv[c];
			}
			sum += __shfl_xor_sync(0xffffffffu, sum, 1);
			l_run[g] = l_run[g] * alpha + sum;
			m_run[g] = m_new;
			__syncwarp(); /* all S reads done before P overwrites the bytes */
#pragma unroll
			for (int c = 0; c < HC; c += 2)
				*(__half2 *)&sP[row * 2 * C::LDS + half_ * HC + c] = __floats2half2_rn(sv[c], sv[c + 1]);
#pragma unroll 8
			for (int c = 0; c < D / 2; c++)
				sO[row * C::LDO + half_ * (D / 2) + c] *= alpha;
			__syncwarp();

			/* O += P V */
#pragma unroll
			for (int j = 0; j < D / 16; j++) {
				wmma::fragment<wmma::accumulator, 16, 16, 16, float> of;
				wmma::load_matrix_sync(of, sO + j * 16, C::LDO, wmma::mem_row_major);
#pragma unroll
				for (int kk = 0; kk < BN / 16; kk++) {
					wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> pf;
					wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> vf;
					wmma::load_matrix_sync(pf, sP + kk * 16, 2 * C::LDS);
					wmma::load_matrix_sync(vf, sV + kk * 16 * C::LDKV + j * 16, C::LDKV);
					wmma::mma_sync(of, pf, vf, of);
				}
				wmma::store_matrix_sync(sO + j * 16, of, C::LDO, wmma::mem_row_major);
			}
			__syncwarp(); /* P reads done before the next group's S overwrites them */
		}
	}
	cp_async_wait<0>();

	/* O /= l, write FP16 */
#pragma unroll
	for (int g = 0; g < RG; g++) {
		const int qrow = qw0 + g * GSTEP + row;
		if (qrow >= S)
			continue;
		float inv = l_run[g] > 0.f ? 1.f / l_run[g] : 0.f;
		__half *o = O + bh * S * D + (size_t)qrow * D + half_ * (D / 2);
		const float *so = sO0 + g * GSTEP * C::LDO + row * C::LDO + half_ * (D / 2);
#pragma unroll
		for (int c = 0; c < D / 2; c += 8) {
			union {
				uint4 u;
				__half2 h[4];
			} pk;
#pragma unroll
			for (int e = 0; e < 4; e++)
				pk.h[e] = __floats2half2_rn(so[c + 2 * e] * inv, so[c + 2 * e + 1] * inv);
			*(uint4 *)(o + c) = pk.u;
		}
	}
}

/* "BM=64,BN=64,STAGES=2,NWARPS=4" for messages */
template <int BN> static const char *config_label()
{
	static char buf[96];
	snprintf(buf, sizeof buf, "BM=%d,BN=%d,STAGES=%d,NWARPS=%d", BM, BN, STAGES, NWARPS);
	return buf;
}

template <int D, int BN, int NST>
static void launch(const struct attn_problem *p, const struct attn_bufs *b, cudaStream_t s)
{
	using C = cfg<D, BN, NST>;
	static int attr_set = 0;
	if (!attr_set) {
		HX_CK(cudaFuncSetAttribute(attn_wmma_kernel<D, BN, NST>, cudaFuncAttributeMaxDynamicSharedMemorySize,
					   (int)C::smem));
		int per_sm = 0;
		HX_CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, attn_wmma_kernel<D, BN, NST>, NWARPS * 32,
								     C::smem));
		if (per_sm < 1)
			hx_failf(1, "attn_wmma configuration %s (D=%d) cannot launch on this device: no CTA of %d threads "
				    "with %zu bytes of shared memory fits on an SM; rebuild with smaller ATTN_BM/ATTN_BN/ATTN_STAGES",
				 config_label<BN>(), D, NWARPS * 32, C::smem);
		attr_set = 1;
	}
	dim3 grid((p->S + BM - 1) / BM, p->B * p->H);
	attn_wmma_kernel<D, BN, NST><<<grid, NWARPS * 32, C::smem, s>>>(b->q, b->k, b->v, b->o, p->S, p->causal,
									  p->scale * 1.4426950408889634f);
}

/* The result's "config": the compile-time tile configuration.  BN depends on D
 * unless ATTN_BN is given; attn_kernel_supports() sets it once D is known. */
static int config_init()
{
	hx_config_int("BM", BM);
#ifdef ATTN_BN
	hx_config_int("BN", ATTN_BN);
#else
	hx_config_str("BN", "64 for D=64, 32 for D=128");
#endif
	hx_config_int("STAGES", STAGES);
	hx_config_int("NWARPS", NWARPS);
	return 0;
}
[[maybe_unused]] static const int config_done = config_init();

int attn_kernel_supports(const struct attn_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	size_t need = p->D == 64 ? cfg<64, ATTN_BN_D64, STAGES>::smem : cfg<128, ATTN_BN_D128, STAGES>::smem;
	if (p->D != 64 && p->D != 128) {
		snprintf(why, n, "attn_wmma is built for D=64 and D=128 only (got D=%d)", p->D);
		return 1;
	}
	if (prop->major < 8) {
		snprintf(why, n, "attn_wmma needs cp.async (sm_80+), device is cc %d.%d", prop->major, prop->minor);
		return 1;
	}
	const char *label = p->D == 64 ? config_label<ATTN_BN_D64>() : config_label<ATTN_BN_D128>();
	hx_config_int("BN", p->D == 64 ? ATTN_BN_D64 : ATTN_BN_D128);
	hx_config_int("smem_bytes", (long long)need);
	if (need > prop->sharedMemPerBlockOptin)
		hx_failf(1, "attn_wmma configuration %s (D=%d) cannot launch on this device: it needs %zu bytes of "
			    "shared memory per CTA, the device allows %zu; rebuild with smaller ATTN_BM/ATTN_BN/ATTN_STAGES",
			 label, p->D, need, (size_t)prop->sharedMemPerBlockOptin);
	return 0;
}

void *attn_kernel_init(const struct attn_problem *p) { (void)p; return NULL; }
void attn_kernel_fini(void *ws) { (void)ws; }

void attn_kernel_run(void *ws, const struct attn_problem *p, const struct attn_bufs *b, cudaStream_t s)
{
	(void)ws;
	if (p->D == 64)
		launch<64, ATTN_BN_D64, STAGES>(p, b, s);
	else
		launch<128, ATTN_BN_D128, STAGES>(p, b, s);
}
