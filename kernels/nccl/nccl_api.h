/* nccl_api.h -- the few NCCL and NVML calls the multi-GPU programs make, loaded at run time.
 *
 * DESIGN
 *   NCCL is not in Debian's main and CI has no NCCL, yet every kernel must
 *   build there with nvcc (compile-only), so nothing here includes nccl.h or
 *   links -lnccl: nccl_load() dlopens libnccl.so.2 and looks up a small
 *   declared subset of NCCL's stable C API (names, enum values and
 *   signatures as in NCCL's documentation, "NCCL API" in the NCCL user
 *   guide). Where it looks, in order:
 *     1. LD_LIBRARY_PATH's directories (what the dynamic loader would do;
 *        a host entry's "env" can set it, docs/hosts.md)
 *     2. the path the spec names (allreduce_nccl's --nccl_lib, a problem
 *        parameter), then GPUORCH_NCCL_LIB (a program run by hand: a host's
 *        "env" cannot set GPUORCH_* names): a file, or a directory holding
 *        libnccl.so.2
 *     3. the nvidia-nccl wheel that pip's torch brings:
 *        <site-packages>/nvidia/nccl/lib/libnccl.so.2, site-packages found by
 *        globbing the usual prefixes (/usr, /usr/local, /opt/conda, /opt/ *,
 *        /opt/ * /.venv, ~/.local, the VIRTUAL_ENV and CONDA_PREFIX of the
 *        environment, the parent of each bin/ on PATH) for
 *        lib/python3.* /{site,dist}-packages
 *     4. the loader's own search (ldconfig's cache, /usr/lib/...)
 *   Every place tried is kept, so "no NCCL" says where it looked.
 *
 *   link_read() reads the GPUs' interconnect with NVML (also dlopened): the
 *   active NVLink links of each GPU (nvmlDeviceGetNvLinkState over links
 *   0..17) and its PCIe link's highest generation and width; the controller
 *   turns them into the link's peak (orchestrator/store/peaks.c). */
#ifndef GPUORCH_NCCL_API_H
#define GPUORCH_NCCL_API_H

#include <cuda_runtime.h>
#include <stddef.h>

/* ---- NCCL's C API, the subset used (nccl.h's names and values) ---- */
typedef struct ncclComm *ncclComm_t;
typedef enum { ncclSuccess = 0 } ncclResult_t;   /* other values: errors, see ncclGetErrorString */
typedef enum { ncclFloat32 = 7 } ncclDataType_t; /* ncclInt8 0 ... ncclFloat16 6, ncclFloat32 7 */
typedef enum { ncclSum = 0 } ncclRedOp_t;

struct nccl_api {
	ncclResult_t (*GetVersion)(int *version);
	ncclResult_t (*CommInitAll)(ncclComm_t *comms, int ndev, const int *devlist);
	ncclResult_t (*CommDestroy)(ncclComm_t comm);
	ncclResult_t (*GroupStart)(void);
	ncclResult_t (*GroupEnd)(void);
	ncclResult_t (*AllReduce)(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
				  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
	const char *(*GetErrorString)(ncclResult_t result);
	char path[1024];    /* the library loaded */
	int version;        /* ncclGetVersion: 22105 for 2.21.5 */
};

/* Load libnccl.so.2 (the search above; named: the spec's path, or NULL).
 * 0 on success; -1 with why saying every place tried and what failed. */
int nccl_load(struct nccl_api *api, const char *named, char *why, size_t whylen);

/* ---- the interconnect, per GPU, from NVML ---- */
struct link_gpu {
	char bus_id[32];
	int nvlinks_active;   /* -1: NVML could not say */
	int pcie_gen, pcie_width; /* highest the device supports; 0: unknown */
};
/* Read the link of each of n CUDA devices. 0 when NVML answered; -1 with
 * why (no NVML, a call failed): the fields it could not read stay -1/0. */
int link_read(const int *devs, int n, struct link_gpu *out, char *why, size_t whylen);

#endif
