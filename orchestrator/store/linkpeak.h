/* linkpeak.h -- the peak of a GPU's interconnect, the bound of a collective's bus bandwidth.
 *
 * A multi-GPU program (kernels/nccl/allreduce_nccl) reports the topology
 * NVML gives it, per GPU (result.link.gpus[]: nvlinks_active, pcie_gen,
 * pcie_width; docs/result-contract.md); the physics is here: NVLink's
 * bandwidth per link and direction by architecture, PCIe's per lane by
 * generation. A GPU's link peak is its active NVLink links x the rate per
 * link (PCIe when it has none active); the box's is the least over its
 * GPUs. Bus bandwidth as nccl-tests define it (algbw x 2(n-1)/n) is what
 * each GPU's link carries per direction under a ring or tree all-reduce,
 * so a busbw above that peak is IMPOSSIBLE (store/peaks.h). */
#ifndef GPUORCH_LINKPEAK_H
#define GPUORCH_LINKPEAK_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* NVLink GB/s per link and direction on capability major.minor; 0 when not known. */
double linkpeak_nvlink_gbps(int major, int minor);
/* PCIe GB/s per lane and direction of generation gen (after line coding); 0 when not known. */
double linkpeak_pcie_lane_gbps(int gen);
/* The link peak of link (a result's "link" object) for GPUs of capability
 * major.minor, in GB/s per direction, and how it was computed in src; 0
 * when there is none, with why in src ("none: ...") when link names GPUs:
 * a GPU with no NVLink count and no PCIe generation and width, NVLink at
 * a rate not known for major.minor (PCIe's would bound its traffic too
 * low), or more than 2 GPUs on NVLink without "nvls": "off" (NVLink
 * SHARP's bus bandwidth passes the per-GPU rate). */
double linkpeak_of(const cJSON *link, int major, int minor, char *src, size_t srclen);

#endif
