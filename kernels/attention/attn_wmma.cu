/* attn_wmma.cu -- FlashAttention-2-style forward with WMMA m16n16k16 (sm_80+; built for sm_89 and sm_90a).
 *
 * DESIGN
 *   One CTA = 4 warps = 64 query rows of one (b, h); warp w owns rows 16w..16w+15.
 *   K/V tiles of BN keys stream through shared memory with cp.async, STAGES deep
 *   (double buffering), rows padded by 8 halves so ldmatrix-style fragment loads
 *   spread over the banks.  Per tile and warp:
 *     S(16×BN) = Q·Kᵀ      WMMA, Q fragments held in registers, K as col_major matrix_b
 *     online softmax        2 lanes per row, exp2 with log2(e)/sqrt(D) folded in,
 *                           P written as FP16 over the S tile (same bytes)
 *     O(16×D) += P·V        WMMA, the FP32 O accumulator kept in shared memory so that
 *                           the softmax rescale (alpha) can touch it row by row
 *   Keys >= S are zero-filled by cp.async and masked to -inf; causal CTAs stop at
 *   their diagonal tile.  Any S >= 1 works.  Config by D: D=64 → BN=64, D=128 → BN=32
 *   (77 KB of shared memory, so two CTAs fit on an H100 SM and one on an L4 SM).
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

#define BM 64
#define NWARPS 4

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem, int src_bytes)
{
	unsigned s = (unsigned)__cvta_generic_to_shared(smem);
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

template <int D, int BN, int STAGES> struct cfg {
	static constexpr int LDKV = D + 8;  /* halves */
	static constexpr int LDS = BN + 4;  /* floats; P uses 2*LDS halves */
	static constexpr int LDO = D + 4;   /* floats */
	static constexpr size_t kv_bytes = (size_t)STAGES * 2 * BN * LDKV * 2;
	static constexpr size_t s_bytes = (size_t)NWARPS * 16 * LDS * 4;
	static constexpr size_t o_bytes = (size_t)NWARPS * 16 * LDO * 4;
	static constexpr size_t smem = kv_bytes + s_bytes + o_bytes;
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

template <int D, int BN, int STAGES>
__global__ void __launch_bounds__(NWARPS * 32)
attn_wmma_kernel(const __half *__restrict__ Q, const __half *__restrict__ K, const __half *__restrict__ V,
		 __half *__restrict__ O, int S, int causal, float scale_log2)
{
	using C = cfg<D, BN, STAGES>;
	extern __shared__ __align__(128) unsigned char smem[];
	__half *sKV = (__half *)smem;
	float *sS_all = (float *)(smem + C::kv_bytes);
	float *sO_all = (float *)(smem + C::kv_bytes + C::s_bytes);
	const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	float *sS = sS_all + warp * 16 * C::LDS;
	__half *sP = (__half *)sS; /* P (16×BN halves, ld 2*LDS) overwrites S */
	float *sO = sO_all + warp * 16 * C::LDO;

	const size_t bh = blockIdx.y;
	const __half *q = Q + bh * S * D, *k = K + bh * S * D, *v = V + bh * S * D;
	const int m0 = blockIdx.x * BM, qw0 = m0 + warp * 16;

	/* Q rows of this warp → (sO area, as halves) → register fragments */
	{
		__half *sQ = (__half *)sO;
		constexpr int VPR = D / 8;
		for (int i = lane; i < 16 * VPR; i += 32) {
			int r = i / VPR, c = (i % VPR) * 8;
			uint4 val = make_uint4(0, 0, 0, 0);
			if (qw0 + r < S)
				val = *(const uint4 *)(q + (size_t)(qw0 + r) * D + c);
			*(uint4 *)&sQ[r * (D + 8) + c] = val;
		}
		__syncwarp();
	}
	wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> qf[D / 16];
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++)
		wmma::load_matrix_sync(qf[kk], (__half *)sO + kk * 16, D + 8);
	__syncwarp();
	for (int i = lane; i < 16 * C::LDO; i += 32)
		sO[i] = 0.f;

	const int kend = causal ? min(S, m0 + BM) : S;
	const int ntiles = (kend + BN - 1) / BN;
	const int row = lane / 2, half_ = lane % 2; /* softmax: 2 lanes per row */
	const int qrow = qw0 + row;
	float m_run = -INFINITY, l_run = 0.f;

#pragma unroll
	for (int st = 0; st < STAGES - 1; st++) {
		if (st < ntiles)
			load_kv_tile<D, BN>(sKV + (size_t)st * 2 * BN * C::LDKV, sKV + ((size_t)st * 2 + 1) * BN * C::LDKV, k,
					    v, st * BN, S);
		cp_async_commit();
	}

	for (int t = 0; t < ntiles; t++) {
		__syncthreads(); /* everyone is done with the stage about to be refilled */
		{
			int tn = t + STAGES - 1;
			if (tn < ntiles) {
				int sg = tn % STAGES;
				load_kv_tile<D, BN>(sKV + (size_t)sg * 2 * BN * C::LDKV,
						    sKV + ((size_t)sg * 2 + 1) * BN * C::LDKV, k, v, tn * BN, S);
			}
			cp_async_commit();
		}
		cp_async_wait<STAGES - 1>();
		__syncthreads();
		const int sg = t % STAGES;
		const __half *sK = sKV + (size_t)sg * 2 * BN * C::LDKV;
		const __half *sV = sK + (size_t)BN * C::LDKV;
		const int n0 = t * BN;

		/* S = Q Kᵀ */
#pragma unroll
		for (int j = 0; j < BN / 16; j++) {
			wmma::fragment<wmma::accumulator, 16, 16, 16, float> sf;
			wmma::fill_fragment(sf, 0.f);
#pragma unroll
			for (int kk = 0; kk < D / 16; kk++) {
				wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> kf;
				wmma::load_matrix_sync(kf, sK + j * 16 * C::LDKV + kk * 16, C::LDKV);
				wmma::mma_sync(sf, qf[kk], kf, sf);
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
		float m_new = fmaxf(m_run, mx);
		float m_use = m_new == -INFINITY ? 0.f : m_new;
		float alpha = exp2f(m_run - m_use); /* m_run = -inf → 0 */
		float sum = 0.f;
#pragma unroll
		for (int c = 0; c < HC; c++) {
			sv[c] = exp2f(sv[c] - m_use);
			sum += sv[c];
		}
		sum += __shfl_xor_sync(0xffffffffu, sum, 1);
		l_run = l_run * alpha + sum;
		m_run = m_new;
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
		__syncwarp();
	}
	cp_async_wait<0>();

	/* O /= l, write FP16 */
	if (qrow < S) {
		float inv = l_run > 0.f ? 1.f / l_run : 0.f;
		__half *o = O + bh * S * D + (size_t)qrow * D + half_ * (D / 2);
		const float *so = sO + row * C::LDO + half_ * (D / 2);
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

template <int D, int BN, int STAGES>
static void launch(const struct attn_problem *p, const struct attn_bufs *b, cudaStream_t s)
{
	using C = cfg<D, BN, STAGES>;
	static int attr_set = 0;
	if (!attr_set) {
		HX_CK(cudaFuncSetAttribute(attn_wmma_kernel<D, BN, STAGES>, cudaFuncAttributeMaxDynamicSharedMemorySize,
					   (int)C::smem));
		attr_set = 1;
	}
	dim3 grid((p->S + BM - 1) / BM, p->B * p->H);
	attn_wmma_kernel<D, BN, STAGES><<<grid, NWARPS * 32, C::smem, s>>>(b->q, b->k, b->v, b->o, p->S, p->causal,
									     p->scale * 1.4426950408889634f);
}

int attn_kernel_supports(const struct attn_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	size_t need = p->D == 64 ? cfg<64, 64, 2>::smem : cfg<128, 32, 2>::smem;
	if (p->D != 64 && p->D != 128) {
		snprintf(why, n, "attn_wmma is built for D=64 and D=128 only (got D=%d)", p->D);
		return 1;
	}
	if (prop->major < 8) {
		snprintf(why, n, "attn_wmma needs cp.async (sm_80+), device is cc %d.%d", prop->major, prop->minor);
		return 1;
	}
	if (need > prop->sharedMemPerBlockOptin) {
		snprintf(why, n, "needs %zu bytes of shared memory per block, device allows %zu", need,
			 (size_t)prop->sharedMemPerBlockOptin);
		return 1;
	}
	return 0;
}

void *attn_kernel_init(const struct attn_problem *p) { (void)p; return NULL; }
void attn_kernel_fini(void *ws) { (void)ws; }

void attn_kernel_run(void *ws, const struct attn_problem *p, const struct attn_bufs *b, cudaStream_t s)
{
	(void)ws;
	if (p->D == 64)
		launch<64, 64, 2>(p, b, s);
	else
		launch<128, 32, 2>(p, b, s);
}
