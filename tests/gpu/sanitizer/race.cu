// race.cu -- a planted shared-memory race (a missing __syncthreads between a
// write and a neighbour's read), for compute-sanitizer racecheck. PLANT=0
// builds the clean version.
#include <cstdio>
#include <cuda_runtime.h>
#ifndef PLANT
#define PLANT 1
#endif

__global__ void shift_kernel(const float *in, float *out, int n)
{
	__shared__ float tile[256];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	tile[threadIdx.x] = i < n ? in[i] : 0.f;
#if !PLANT
	__syncthreads();
#endif
	float v = tile[(threadIdx.x + 1) % blockDim.x];   // reads a neighbour's write
	if (i < n)
		out[i] = v;
}

int main()
{
	const int n = 1 << 16;
	float *a, *b;
	if (cudaMalloc(&a, n * 4) != cudaSuccess || cudaMalloc(&b, n * 4) != cudaSuccess)
		return 2;
	cudaMemset(a, 0x3f, n * 4);
	shift_kernel<<<n / 256, 256>>>(a, b, n);
	cudaError_t e = cudaDeviceSynchronize();
	printf("{\"schema\":\"gpuorch.result/1\",\"status\":\"%s\"}\n", e == cudaSuccess ? "pass" : "fail");
	return e == cudaSuccess ? 0 : 1;
}
