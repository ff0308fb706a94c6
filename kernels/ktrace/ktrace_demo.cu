// ktrace_demo.cu -- a program that knows nothing of gpuorch, used to make the
// kernel-trace fixtures (tests/fixtures/ktrace/) on a GPU: two kernels, each
// launched --reps times on one stream, timed with CUDA events around the
// whole loop so the trace's per-kernel times can be checked against them.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

__global__ void scale_sq(int n, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = y[i] * y[i] * 0.5f;
}

int main(int argc, char **argv)
{
	int n = 1 << 24, reps = 50;
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--n=", 4)) n = atoi(argv[i] + 4);
		else if (!strncmp(argv[i], "--reps=", 7)) reps = atoi(argv[i] + 7);
	}
	float *x, *y;
	if (cudaMalloc(&x, n * sizeof(float)) || cudaMalloc(&y, n * sizeof(float))) {
		fprintf(stderr, "cudaMalloc failed\n");
		return 1;
	}
	cudaMemset(x, 0, n * sizeof(float));
	cudaMemset(y, 0, n * sizeof(float));
	cudaEvent_t e0, e1;
	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	int threads = 256, blocks = (n + threads - 1) / threads;
	saxpy<<<blocks, threads>>>(n, 2.0f, x, y);   // warm-up
	cudaEventRecord(e0);
	for (int r = 0; r < reps; r++)
		saxpy<<<blocks, threads>>>(n, 2.0f, x, y);
	cudaEventRecord(e1);
	cudaEventSynchronize(e1);
	float ms_saxpy = 0;
	cudaEventElapsedTime(&ms_saxpy, e0, e1);
	cudaEventRecord(e0);
	for (int r = 0; r < reps; r++)
		scale_sq<<<blocks, threads>>>(n, y);
	cudaEventRecord(e1);
	cudaEventSynchronize(e1);
	float ms_sq = 0;
	cudaEventElapsedTime(&ms_sq, e0, e1);
	cudaError_t err = cudaGetLastError();
	printf("saxpy_us_per_launch: %.3f\n", 1000.0 * ms_saxpy / reps);
	printf("scale_sq_us_per_launch: %.3f\n", 1000.0 * ms_sq / reps);
	printf("status: %s\n", err == cudaSuccess ? "ok" : cudaGetErrorString(err));
	return err == cudaSuccess ? 0 : 1;
}
