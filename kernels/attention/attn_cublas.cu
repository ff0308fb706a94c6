/* attn_cublas.cu -- seed 000's attention pipeline: batched cuBLAS GEMM QKᵀ, softmax kernel, batched GEMM PV.
 *
 * S = scale·Q·Kᵀ as FP32 [B·H, S, S] (FP16 in, FP32 compute, one strided-batched
 * GemmEx), a warp-per-row softmax writes P as FP16 (causal: keys after the query
 * get 0), then O = P·V (FP16 out, FP32 compute).  Row-major tensors are handed
 * to column-major cuBLAS as their transposes: Sᵀ = K·Qᵀ, Oᵀ = Vᵀ·Pᵀ.
 * Memory: 6·B·H·S² bytes of scratch (6.4 GB at B=4 H=16 S=4096); causal still
 * computes both full GEMMs, as the seed's pipeline did.
 */
#include "attn_common.cuh"
#include "../harness/harness.h"

#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>

const char attn_kernel_name[] = "attn_cublas";

#define CB_CK(call) do { cublasStatus_t cb_s_ = (call); \
	if (cb_s_ != CUBLAS_STATUS_SUCCESS) hx_failf(1, "cuBLAS error %d (%s) in '%s' at %s:%d", (int)cb_s_, \
		cublasGetStatusString(cb_s_), #call, __FILE__, __LINE__); } while (0)

struct ws {
	cublasHandle_t h;
	float *sc;   /* [BH][S][S] */
	__half *pr;  /* [BH][S][S] */
};

__global__ void softmax_rows(const float *__restrict__ sc, __half *__restrict__ pr, int S, size_t rows, int causal)
{
	size_t r = blockIdx.x * (size_t)(blockDim.x / 32) + threadIdx.x / 32;
	int lane = threadIdx.x % 32;
	if (r >= rows)
		return;
	int i = (int)(r % S); /* query index */
	int n = causal ? i + 1 : S;
	const float *x = sc + r * S;
	__half *y = pr + r * S;
	float m = -INFINITY, l = 0.f;
	for (int j = lane; j < n; j += 32) {
		float v = x[j];
		float mn = fmaxf(m, v);
		l = l * __expf(m - mn) + __expf(v - mn);
		m = mn;
	}
	for (int off = 16; off; off >>= 1) {
		float mo = __shfl_xor_sync(0xffffffffu, m, off), lo = __shfl_xor_sync(0xffffffffu, l, off);
		float mn = fmaxf(m, mo);
		l = (m == -INFINITY ? 0.f : l * __expf(m - mn)) + (mo == -INFINITY ? 0.f : lo * __expf(mo - mn));
		m = mn;
	}
	float inv = 1.f / l;
	for (int j = lane; j < S; j += 32)
		y[j] = __float2half_rn(j < n ? __expf(x[j] - m) * inv : 0.f);
}

int attn_kernel_supports(const struct attn_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	double need = 6.0 * p->B * p->H * (double)p->S * p->S;
	if (need > 0.8 * (double)prop->totalGlobalMem) {
		snprintf(why, n, "needs %.1f GB of score scratch, device has %.1f GB", need / 1e9, prop->totalGlobalMem / 1e9);
		return 1;
	}
	return 0;
}

void *attn_kernel_init(const struct attn_problem *p)
{
	struct ws *w = (struct ws *)calloc(1, sizeof *w);
	size_t e = (size_t)p->B * p->H * p->S * p->S;
	CB_CK(cublasCreate(&w->h));
	w->sc = (float *)hx_malloc_dev(e * 4);
	w->pr = (__half *)hx_malloc_dev(e * 2);
	return w;
}

void attn_kernel_fini(void *vw)
{
	struct ws *w = (struct ws *)vw;
	CB_CK(cublasDestroy(w->h));
	hx_free_dev(w->sc);
	hx_free_dev(w->pr);
	free(w);
}

void attn_kernel_run(void *vw, const struct attn_problem *p, const struct attn_bufs *b, cudaStream_t s)
{
	struct ws *w = (struct ws *)vw;
	int S = p->S, D = p->D, BH = p->B * p->H;
	long long sd = (long long)S * D, ss = (long long)S * S;
	float alpha = p->scale, zero = 0.f, one = 1.f;
	CB_CK(cublasSetStream(w->h, s));
	CB_CK(cublasGemmStridedBatchedEx(w->h, CUBLAS_OP_T, CUBLAS_OP_N, S, S, D, &alpha, b->k, CUDA_R_16F, D, sd, b->q,
					 CUDA_R_16F, D, sd, &zero, w->sc, CUDA_R_32F, S, ss, BH, CUBLAS_COMPUTE_32F,
					 CUBLAS_GEMM_DEFAULT));
	size_t rows = (size_t)BH * S;
	softmax_rows<<<(unsigned)((rows + 7) / 8), 256, 0, s>>>(w->sc, w->pr, S, rows, p->causal);
	HX_CK_LAUNCH();
	CB_CK(cublasGemmStridedBatchedEx(w->h, CUBLAS_OP_N, CUBLAS_OP_N, D, S, S, &one, b->v, CUDA_R_16F, D, sd, w->pr,
					 CUDA_R_16F, S, ss, &zero, b->o, CUDA_R_16F, D, sd, BH, CUBLAS_COMPUTE_32F,
					 CUBLAS_GEMM_DEFAULT));
}
