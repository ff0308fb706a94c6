// oob.cu -- a planted out-of-bounds global write (one element past the end),
// for compute-sanitizer memcheck. PLANT=0 builds the clean version.
#include <cstdio>
#include <cuda_runtime.h>
#ifndef PLANT
#define PLANT 1
#endif

__global__ void fill_kernel(float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n + PLANT)          // PLANT=1: thread n writes out[n]
		out[i] = 1.0f + i;
}

int main()
{
	const int n = 1000;
	float *d;
	if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess)
		return 2;
	fill_kernel<<<(n + 255) / 256, 256>>>(d, n);
	cudaError_t e = cudaDeviceSynchronize();
	printf("{\"schema\":\"gpuorch.result/1\",\"status\":\"%s\",\"reason\":\"%s\"}\n",
	       e == cudaSuccess ? "pass" : "fail", cudaGetErrorString(e));
	cudaFree(d);
	return e == cudaSuccess ? 0 : 1;
}
