/* attn_common.cu -- attention programs' shared part: hx_program callbacks, reference, main(). */
#include "attn_common.cuh"
#include "../harness/harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct hx_param attn_params[] = {
	{"B", NULL, "batch"},
	{"H", NULL, "heads"},
	{"S", NULL, "sequence length (queries = keys)"},
	{"D", NULL, "head dimension"},
	{"causal", "0", "1: mask keys after the query"},
};

static struct attn_problem to_attn(const struct hx_problem *hp)
{
	struct attn_problem p;
	p.B = (int)hx_get_int(hp, "B");
	p.H = (int)hx_get_int(hp, "H");
	p.S = (int)hx_get_int(hp, "S");
	p.D = (int)hx_get_int(hp, "D");
	p.causal = (int)hx_get_int(hp, "causal");
	p.scale = (float)(1.0 / sqrt((double)p.D));
	return p;
}

static int attn_validate(const struct hx_problem *hp, const struct cudaDeviceProp *prop, char *why, size_t n)
{
	struct attn_problem p = to_attn(hp);
	if (p.B < 1 || p.H < 1 || p.S < 1 || p.D < 1 || p.B > 65535 || p.H > 65535 || p.S > (1 << 20)) {
		snprintf(why, n, "B, H, S, D must be positive (B,H <= 65535, S <= 2^20)");
		return HX_BAD_ARGS;
	}
	if (p.D % 32 != 0 || p.D > 256) {
		snprintf(why, n, "'--D=%d': expected a multiple of 32 up to 256", p.D);
		return HX_BAD_ARGS;
	}
	if (p.causal != 0 && p.causal != 1) {
		snprintf(why, n, "'--causal=%d': expected 0 or 1", p.causal);
		return HX_BAD_ARGS;
	}
	return attn_kernel_supports(&p, prop, why, n) ? HX_UNSUPPORTED : HX_VALID;
}

static int attn_edges(const struct hx_problem *hp, struct hx_problem *out, int max)
{
	struct attn_problem p = to_attn(hp);
	/* ragged S below one tile, both masks; a ragged S over several tiles with the other mask; S = 1 */
	const int shapes[][4] = {{1, 2, 77, 0}, {1, 2, 77, 1}, {2, 1, 300, 1 - p.causal}, {1, 1, 1, 0}};
	int k = 0;
	for (int i = 0; i < 4 && k < max; i++) {
		out[k] = *hp;
		hx_set_int(&out[k], "B", shapes[i][0]);
		hx_set_int(&out[k], "H", shapes[i][1]);
		hx_set_int(&out[k], "S", shapes[i][2]);
		hx_set_int(&out[k], "causal", shapes[i][3]);
		k++;
	}
	return k;
}

/* FLOPs: QKᵀ and PV, 2 each per multiply-add: 4·B·H·S²·D; causal counts half
 * (the FlashAttention convention).  Bytes: Q, K, V read once, O written once. */
static double attn_flops(const struct hx_problem *hp)
{
	struct attn_problem p = to_attn(hp);
	double f = 4.0 * p.B * p.H * (double)p.S * p.S * p.D;
	return p.causal ? f / 2 : f;
}

static double attn_bytes(const struct hx_problem *hp)
{
	struct attn_problem p = to_attn(hp);
	return 4.0 * p.B * p.H * (double)p.S * p.D * 2;
}

static size_t attn_input_bytes(const struct hx_problem *hp)
{
	struct attn_problem p = to_attn(hp);
	return 3 * (size_t)p.B * p.H * p.S * p.D * 2;
}

struct attn_state {
	struct attn_problem p;
	int nsets;
	size_t n; /* elements of one tensor */
	__half **q, **k, **v;
	__half *o;
	float *ref;
	void *ws;
};

static void *attn_create(const struct hx_problem *hp, int nsets)
{
	struct attn_state *st = (struct attn_state *)calloc(1, sizeof *st);
	st->p = to_attn(hp);
	st->nsets = nsets;
	st->n = (size_t)st->p.B * st->p.H * st->p.S * st->p.D;
	st->q = (__half **)calloc(nsets, sizeof(__half *));
	st->k = (__half **)calloc(nsets, sizeof(__half *));
	st->v = (__half **)calloc(nsets, sizeof(__half *));
	for (int i = 0; i < nsets; i++) {
		st->q[i] = (__half *)hx_malloc_dev(st->n * 2);
		st->k[i] = (__half *)hx_malloc_dev(st->n * 2);
		st->v[i] = (__half *)hx_malloc_dev(st->n * 2);
	}
	st->o = (__half *)hx_malloc_dev(st->n * 2);
	st->ref = (float *)hx_malloc_dev(st->n * 4);
	st->ws = attn_kernel_init(&st->p);
	return st;
}

static void attn_destroy(void *vs)
{
	struct attn_state *st = (struct attn_state *)vs;
	HX_CK(cudaDeviceSynchronize());
	attn_kernel_fini(st->ws);
	for (int i = 0; i < st->nsets; i++) {
		hx_free_dev(st->q[i]);
		hx_free_dev(st->k[i]);
		hx_free_dev(st->v[i]);
	}
	hx_free_dev(st->o);
	hx_free_dev(st->ref);
	free(st->q);
	free(st->k);
	free(st->v);
	free(st);
}

/* Q, K uniform in [-2, 2) (scores with std ~4/3, so softmax is not flat), V in [-1, 1). */
static void attn_fill(void *vs, int set, uint64_t seed)
{
	struct attn_state *st = (struct attn_state *)vs;
	hx_fill_uniform_f16(st->q[set], st->n, hx_splitmix(seed * 3 + 0), -2.f, 2.f, 0);
	hx_fill_uniform_f16(st->k[set], st->n, hx_splitmix(seed * 3 + 1), -2.f, 2.f, 0);
	hx_fill_uniform_f16(st->v[set], st->n, hx_splitmix(seed * 3 + 2), -1.f, 1.f, 0);
	HX_CK(cudaDeviceSynchronize());
}

static void attn_run(void *vs, int set, cudaStream_t s)
{
	struct attn_state *st = (struct attn_state *)vs;
	struct attn_bufs b = {st->q[set], st->k[set], st->v[set], st->o};
	attn_kernel_run(st->ws, &st->p, &b, s);
}

/* ---- reference: FP64 online softmax, 16 query rows a block, 4 rows a warp ---- */

#define REF_ROWS 16
#define REF_KEYS 32

__global__ void attn_ref_kernel(const __half *Q, const __half *K, const __half *V, float *O, int S, int D,
				int causal, double scale)
{
	extern __shared__ double sm[];
	double *sq = sm;                          /* [REF_ROWS][D] */
	double *sk = sq + REF_ROWS * D;           /* [REF_KEYS][D+1] */
	double *sv = sk + REF_KEYS * (D + 1);     /* [REF_KEYS][D] */
	size_t bh = blockIdx.y;
	const __half *q = Q + bh * S * D, *k = K + bh * S * D, *v = V + bh * S * D;
	int r0 = blockIdx.x * REF_ROWS;
	int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	for (int i = threadIdx.x; i < REF_ROWS * D; i += blockDim.x) {
		int r = r0 + i / D;
		sq[i] = r < S ? (double)__half2float(q[(size_t)r * D + i % D]) : 0.0;
	}
	double m[4], l[4], o[4][8];
	for (int a = 0; a < 4; a++) {
		m[a] = -INFINITY;
		l[a] = 0;
		for (int c = 0; c < 8; c++)
			o[a][c] = 0;
	}
	int kend = causal ? min(S, r0 + REF_ROWS) : S;
	for (int k0 = 0; k0 < kend; k0 += REF_KEYS) {
		__syncthreads();
		for (int i = threadIdx.x; i < REF_KEYS * D; i += blockDim.x) {
			int j = k0 + i / D, d = i % D;
			sk[(i / D) * (D + 1) + d] = j < S ? (double)__half2float(k[(size_t)j * D + d]) : 0.0;
			sv[i] = j < S ? (double)__half2float(v[(size_t)j * D + d]) : 0.0;
		}
		__syncthreads();
		for (int a = 0; a < 4; a++) {
			int rl = warp * 4 + a, r = r0 + rl;
			int j = k0 + lane;
			double sc = -INFINITY;
			if (j < S && !(causal && j > r)) {
				double acc = 0;
				for (int d = 0; d < D; d++)
					acc += sq[rl * D + d] * sk[lane * (D + 1) + d];
				sc = acc * scale;
			}
			double mx = sc;
			for (int off = 16; off; off >>= 1)
				mx = fmax(mx, __shfl_xor_sync(0xffffffffu, mx, off));
			double mn = fmax(m[a], mx);
			if (mn == -INFINITY)
				continue; /* whole chunk masked and nothing before */
			double pj = sc == -INFINITY ? 0.0 : exp(sc - mn);
			double alpha = m[a] == -INFINITY ? 0.0 : exp(m[a] - mn);
			double ps = pj;
			for (int off = 16; off; off >>= 1)
				ps += __shfl_xor_sync(0xffffffffu, ps, off);
			l[a] = l[a] * alpha + ps;
			m[a] = mn;
			for (int c = 0; c < D / 32; c++)
				o[a][c] *= alpha;
			for (int jj = 0; jj < REF_KEYS; jj++) {
				double pb = __shfl_sync(0xffffffffu, pj, jj);
				if (pb == 0.0)
					continue;
				for (int c = 0; c < D / 32; c++)
					o[a][c] += pb * sv[jj * D + lane + 32 * c];
			}
		}
	}
	for (int a = 0; a < 4; a++) {
		int r = r0 + warp * 4 + a;
		if (r >= S)
			continue;
		for (int c = 0; c < D / 32; c++)
			O[bh * S * D + (size_t)r * D + lane + 32 * c] = (float)(o[a][c] / l[a]);
	}
}

static void attn_reference(void *vs, int set, cudaStream_t s)
{
	struct attn_state *st = (struct attn_state *)vs;
	const struct attn_problem *p = &st->p;
	size_t smem = sizeof(double) * ((size_t)REF_ROWS * p->D + REF_KEYS * (p->D + 1) + (size_t)REF_KEYS * p->D);
	HX_CK(cudaFuncSetAttribute(attn_ref_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
	dim3 grid((p->S + REF_ROWS - 1) / REF_ROWS, p->B * p->H);
	attn_ref_kernel<<<grid, 128, smem, s>>>(st->q[set], st->k[set], st->v[set], st->ref, p->S, p->D, p->causal,
						 (double)p->scale);
	HX_CK_LAUNCH();
}

static struct hx_output attn_output(void *vs)
{
	struct attn_state *st = (struct attn_state *)vs;
	struct hx_output o = {st->o, st->n, HX_F16, st->ref};
	return o;
}

/* FP64 CPU spot check: 6 query rows at seeded positions (first and last row included). */
static int attn_cpu_check(void *vs, int set, uint64_t seed, double *max_abs, double *ref_max_abs, double *scale)
{
	struct attn_state *st = (struct attn_state *)vs;
	const struct attn_problem *p = &st->p;
	size_t sd = (size_t)p->S * p->D;
	uint16_t *hk = (uint16_t *)malloc(sd * 2), *hv = (uint16_t *)malloc(sd * 2), *hq = (uint16_t *)malloc(p->D * 2);
	uint16_t *ho = (uint16_t *)malloc(p->D * 2);
	float *hr = (float *)malloc(p->D * 4);
	double *sc = (double *)malloc(sizeof(double) * p->S), *o = (double *)malloc(sizeof(double) * p->D);
	*max_abs = *ref_max_abs = *scale = 0;
	int pts = 0;
	for (int t = 0; t < 6; t++) {
		uint64_t h = hx_splitmix(seed * 131 + t);
		size_t bh = t == 0 ? 0 : (t == 1 ? (size_t)p->B * p->H - 1 : h % ((size_t)p->B * p->H));
		int r = t == 0 ? 0 : (t == 1 ? p->S - 1 : (int)((h >> 20) % p->S));
		size_t base = bh * sd;
		HX_CK(cudaMemcpy(hk, st->k[set] + base, sd * 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(hv, st->v[set] + base, sd * 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(hq, st->q[set] + base + (size_t)r * p->D, p->D * 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(ho, st->o + base + (size_t)r * p->D, p->D * 2, cudaMemcpyDeviceToHost));
		HX_CK(cudaMemcpy(hr, st->ref + base + (size_t)r * p->D, p->D * 4, cudaMemcpyDeviceToHost));
		int kend = p->causal ? r + 1 : p->S;
		double mx = -INFINITY;
		for (int j = 0; j < kend; j++) {
			double a = 0;
			for (int d = 0; d < p->D; d++)
				a += (double)hx_half_to_float(hq[d]) * hx_half_to_float(hk[(size_t)j * p->D + d]);
			sc[j] = a * (1.0 / sqrt((double)p->D));
			mx = fmax(mx, sc[j]);
		}
		double l = 0;
		for (int d = 0; d < p->D; d++)
			o[d] = 0;
		for (int j = 0; j < kend; j++) {
			double e = exp(sc[j] - mx);
			l += e;
			for (int d = 0; d < p->D; d++)
				o[d] += e * hx_half_to_float(hv[(size_t)j * p->D + d]);
		}
		for (int d = 0; d < p->D; d++) {
			double want = o[d] / l;
			double got = hx_half_to_float(ho[d]);
			double e = fabs(got - want);
			if (!(e <= *max_abs))
				*max_abs = isnan(e) ? INFINITY : fmax(*max_abs, e);
			*ref_max_abs = fmax(*ref_max_abs, fabs((double)hr[d] - want));
			*scale = fmax(*scale, fabs(want));
			pts++;
		}
	}
	free(hk);
	free(hv);
	free(hq);
	free(ho);
	free(hr);
	free(sc);
	free(o);
	return pts;
}

int main(int argc, char **argv)
{
	static const struct hx_program prog = {
		attn_kernel_name, attn_params, (int)(sizeof attn_params / sizeof attn_params[0]),
		/* tolerances: FP16 output of values |o| < 1 */
		2e-2, -1, 1e-2,
		attn_validate, attn_edges, attn_flops, attn_bytes, attn_input_bytes,
		attn_create, attn_destroy, attn_fill, attn_run, attn_reference, attn_output, attn_cpu_check,
	};
	return hx_main(argc, argv, &prog);
}
