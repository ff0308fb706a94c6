/* attn_common.cuh -- attention forward programs: shared problem, inputs, reference and main().
 *
 * Every attention program links attn_common.cu (problem parsing, seeded Q/K/V,
 * an FP64-accumulating GPU reference, an FP64 CPU spot check, the FLOP/byte
 * model and main()) with one kernel file that defines the four attn_kernel_*
 * functions below.  Layout: Q, K, V, O are [B, H, S, D] contiguous FP16;
 * O = softmax(Q Kᵀ / sqrt(D) [+ causal mask]) V, FP32 accumulation.
 */
#ifndef GPUORCH_ATTN_COMMON_CUH
#define GPUORCH_ATTN_COMMON_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stddef.h>

struct attn_problem {
	int B, H, S, D, causal;
	float scale; /* 1/sqrt(D) */
};

struct attn_bufs {
	const __half *q, *k, *v;
	__half *o;
};

/* implemented by each kernel file */
extern const char attn_kernel_name[];
/* 0: supported; otherwise write why (status skipped) */
int attn_kernel_supports(const struct attn_problem *p, const struct cudaDeviceProp *prop, char *why, size_t n);
void *attn_kernel_init(const struct attn_problem *p); /* workspace / handles, may return NULL */
void attn_kernel_run(void *ws, const struct attn_problem *p, const struct attn_bufs *b, cudaStream_t s);
void attn_kernel_fini(void *ws);

#endif
