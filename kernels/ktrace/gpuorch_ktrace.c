/* gpuorch_ktrace.c -- a CUPTI injection library that times every kernel a
 * program launches, with no change to the program (docs/byo.md).
 *
 * The CUDA driver loads it when CUDA_INJECTION64_PATH names it (the way
 * Nsight Systems attaches) and calls InitializeInjection(), which enables
 * CUPTI's activity API for kernels (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
 * GPU start and end timestamps, kernels are not serialized). At exit it
 * flushes the records and writes one JSON object a line to the file named by
 * GPUORCH_KTRACE_OUT (default gpuorch-ktrace.jsonl):
 *   {"schema": "gpuorch.ktrace/1", "cupti_api": N, "pid": P, "t0_ns": "T"}
 *   {"name": MANGLED, "start_ns": T0, "end_ns": T1, "device": D, "stream": S,
 *    "grid": [x, y, z], "block": [x, y, z], "registers": R,
 *    "smem_static": B, "smem_dynamic": B, "correlation": C}    one per launch
 *   {"end": true, "kernels": N, "dropped": N}
 * start_ns and end_ns count from t0_ns (CUPTI's clock when the library was
 * loaded; a string, since 19 digits do not fit a JSON reader's double), so
 * they stay exact as doubles. A file without the last line was cut short (the
 * program crashed or was killed). Built on the host:
 *   cc -O2 -shared -fPIC -I$CUDA/include gpuorch_ktrace.c -o libgpuorch_ktrace.so \
 *      -L$CUDA/lib64 -lcupti -Wl,-rpath,$CUDA/lib64                              */
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 ktrace_kernel;
#else
typedef CUpti_ActivityKernel9 ktrace_kernel;
#endif

#define BUF_SIZE (8u << 20)
#define BUF_ALIGN 8

static FILE *out;
static uint64_t t0;
static unsigned long long nkernels, ndropped;
static int done;

static void put_name(const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = NULL;
	if (posix_memalign((void **)&b, BUF_ALIGN, BUF_SIZE) != 0)
		b = NULL;
	*buffer = b;
	*size = b ? BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;
	(void)ctx;
	(void)size;
	while (out && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
		const ktrace_kernel *k;
		if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
		    rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
			continue;
		k = (const ktrace_kernel *)rec;
		fputs("{\"name\": ", out);
		put_name(k->name);
		fprintf(out, ", \"start_ns\": %llu, \"end_ns\": %llu, \"device\": %u, \"stream\": %u, "
			"\"grid\": [%d, %d, %d], \"block\": [%d, %d, %d], \"registers\": %u, "
			"\"smem_static\": %d, \"smem_dynamic\": %d, \"correlation\": %u}\n",
			(unsigned long long)(k->start - t0), (unsigned long long)(k->end - t0), k->deviceId,
			k->streamId, k->gridX, k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ,
			(unsigned)k->registersPerThread, k->staticSharedMemory,
			k->dynamicSharedMemory, k->correlationId);
		nkernels++;
	}
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		ndropped += dropped;
	free(buffer);
}

static void at_exit(void)
{
	if (done || !out)
		return;
	done = 1;
	cuptiActivityFlushAll(1);
	fprintf(out, "{\"end\": true, \"kernels\": %llu, \"dropped\": %llu}\n", nkernels, ndropped);
	fclose(out);
	out = NULL;
}

int InitializeInjection(void)
{
	const char *path = getenv("GPUORCH_KTRACE_OUT");
	if (out)
		return 1;
	out = fopen(path && *path ? path : "gpuorch-ktrace.jsonl", "w");
	if (!out) {
		fprintf(stderr, "gpuorch_ktrace: cannot write '%s'\n",
			path && *path ? path : "gpuorch-ktrace.jsonl");
		return 0;
	}
	if (cuptiGetTimestamp(&t0) != CUPTI_SUCCESS)
		t0 = 0;
	fprintf(out, "{\"schema\": \"gpuorch.ktrace/1\", \"cupti_api\": %d, \"pid\": %d, \"t0_ns\": \"%llu\"}\n",
		CUPTI_API_VERSION, (int)getpid(), (unsigned long long)t0);
	if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
	    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
		fprintf(stderr, "gpuorch_ktrace: CUPTI refused the kernel activity\n");
		fprintf(out, "{\"error\": \"CUPTI refused the kernel activity\"}\n");
		fclose(out);
		out = NULL;
		return 0;
	}
	atexit(at_exit);
	return 1;
}
