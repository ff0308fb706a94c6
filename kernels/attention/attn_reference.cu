/* attn_reference.cu -- simple attention forward: FP32 CUDA cores, no tensor cores (correct first).
 *
 * One CTA = 4 warps = 32 query rows of one (b, h), 8 rows a warp.  Keys stream
 * through shared memory 32 at a time (converted to FP32, K rows padded by one
 * word so that lane j reading key j hits its own bank); lane j scores key j,
 * the warp keeps an online softmax per row, and lane l accumulates output
 * dimensions l, l+32, ...  Any S >= 1, D a multiple of 32 up to 256.
 */
#include "attn_common.cuh"
#include "../harness/harness.h"

#include <stdio.h>

const char attn_kernel_name[] = "attn_reference";

#define RROWS 32
#define RKEYS 32

template <int D>
__global__ void __launch_bounds__(128) attn_simple_kernel(const __half *Q, const __half *K, const __half *V, __half *O,
							  int S, int causal, float scale)
{
	extern __shared__ float sm[];
	float *sq = sm;                       /* [RROWS][D] */
	float *sk = sq + RROWS * D;           /* [RKEYS][D+1] */
	float *sv = sk + RKEYS * (D + 1);     /* [RKEYS][D] */
	size_t bh = blockIdx.y;
	const __half *q = Q + bh * S * D, *k = K + bh * S * D, *v = V + bh * S * D;
	int r0 = blockIdx.x * RROWS, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	for (int i = threadIdx.x; i < RROWS * D; i += blockDim.x) {
		int r = r0 + i / D;
		sq[i] = r < S ? __half2float(q[(size_t)r * D + i % D]) : 0.f;
	}
	constexpr int R = RROWS / 4, C = D / 32;
	float m[R], l[R], o[R][C];
#pragma unroll
	for (int a = 0; a < R; a++) {
		m[a] = -INFINITY;
		l[a] = 0.f;
#pragma unroll
		for (int c = 0; c < C; c++)
			o[a][c] = 0.f;
	}
	int kend = causal ? min(S, r0 + RROWS) : S;
	for (int k0 = 0; k0 < kend; k0 += RKEYS) {
		__syncthreads();
		for (int i = threadIdx.x; i < RKEYS * D; i += blockDim.x) {
			int j = k0 + i / D, d = i % D;
			sk[(i / D) * (D + 1) + d] = j < S ? __half2float(k[(size_t)j * D + d]) : 0.f;
			sv[i] = j < S ? __half2float(v[(size_t)j * D + d]) : 0.f;
		}
		__syncthreads();
#pragma unroll
		for (int a = 0; a < R; a++) {
			int rl = warp * R + a, r = r0 + rl, j = k0 + lane;
			float sc = -INFINITY;
			if (j < S && !(causal && j > r)) {
				float acc = 0.f;
#pragma unroll 16
				for (int d = 0; d < D; d++)
					acc = fmaf(sq[rl * D + d], sk[lane * (D + 1) + d], acc);
				sc = acc * scale;
			}
			float mx = sc;
			for (int off = 16; off; off >>= 1)
				mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
			float mn = fmaxf(m[a], mx);
			if (mn == -INFINITY)
				continue;
			float pj = __expf(sc - mn);
			float alpha = __expf(m[a] - mn);
			float ps = pj;
			for (int off = 16; off; off >>= 1)
				ps += __shfl_xor_sync(0xffffffffu, ps, off);
			l[a] = l[a] * alpha + ps;
			m[a] = mn;
#pragma unroll
			for (int c = 0; c < C; c++)
				o[a][c] *= alpha;
			for (int jj = 0; jj < RKEYS; jj++) {
				float pb = __shfl_sync(0xffffffffu, pj, jj);
#pragma unroll
				for (int c = 0; c < C; c++)
					o[a][c] = fmaf(pb, sv[jj * D + lane + 32 * c], o[a][c]);
			}
		}
	}
#pragma unroll
	for (int a = 0; a < R; a++) {
		int r = r0 + warp * R + a;
		if (r < S)
#pragma unroll
			for (int c = 0; c < C; c++)
				O[bh * S * D + (size_t)r * D + lane + 32 * c] = __float2half_rn(o[a][c] / l[a]);
	}
}

template <int D> static size_t smem_for() { return sizeof(float) * ((size_t)RROWS * D + RKEYS * (D + 1) + RKEYS * D); }

template <int D> static void launch(const struct attn_problem *p, const struct attn_bufs *b, cudaStream_t s)
{
	static int attr = 0;
	if (!attr) {
		HX_CK(cudaFuncSetAttribute(attn_simple_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
					   (int)smem_for<D>()));
		attr = 1;
	}
	dim3 grid((p->S + RROWS - 1) / RROWS, p->B * p->H);
	attn_simple_kernel<D><<<grid, 128, smem_for<D>(), s>>>(b->q, b->k, b->v, b->o, p->S, p->causal, p->scale);
}

int attn_kernel_supports(const struct attn_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	if (p->D != 32 && p->D != 64 && p->D != 128 && p->D != 256) {
		snprintf(why, n, "attn_reference is built for D in {32, 64, 128, 256} (got %d)", p->D);
		return 1;
	}
	size_t need = sizeof(float) * ((size_t)RROWS * p->D + RKEYS * (p->D + 1) + RKEYS * p->D);
	if (need > prop->sharedMemPerBlockOptin) {
		snprintf(why, n, "needs %zu bytes of shared memory, device allows %zu", need,
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
	switch (p->D) {
	case 32: launch<32>(p, b, s); break;
	case 64: launch<64>(p, b, s); break;
	case 128: launch<128>(p, b, s); break;
	default: launch<256>(p, b, s); break;
	}
}
