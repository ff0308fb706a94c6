/* linkpeak.c -- a GPU interconnect's peak from the topology a program reports (linkpeak.h). */
#include "store/linkpeak.h"
#include "store/runread.h"

#include <stdio.h>
#include "core/banned.h"

/* NVIDIA's figures per link and direction: NVLink 2 (V100, 6 links: 150
 * GB/s), NVLink 3 (A100, 12: 300), NVLink 4 (H100/H200 SXM, 18: 450) are 25
 * GB/s; NVLink 5 (B100/B200, 18: 900) 50; GA10x's NVLink 3 bridge (A40,
 * RTX A6000, 4 links: 56.25) 14.0625. */
double linkpeak_nvlink_gbps(int major, int minor)
{
	if (major == 7 && minor == 0)
		return 25;
	if (major == 8 && minor == 0)
		return 25;
	if (major == 8 && minor == 6)
		return 14.0625;
	if (major == 9)
		return 25;
	if (major == 10)
		return 50;
	return 0;
}

/* transfer rate per lane x line coding / 8: 2.5 GT/s 8b/10b, 5 GT/s
 * 8b/10b, 8, 16 and 32 GT/s 128b/130b, 64 GT/s FLIT (242 of 256 bytes) */
double linkpeak_pcie_lane_gbps(int gen)
{
	static const double lane[] = { 0, 0.25, 0.5, 0.984615, 1.969231, 3.938462, 7.5625 };
	return gen >= 1 && gen <= 6 ? lane[gen] : 0;
}

/* one GPU's peak, and how */
static double gpu_peak(const cJSON *g, double per_link, char *how, size_t len, int *nvlink)
{
	double links = 0, gen = 0, width = 0;
	*nvlink = 0;
	if (rr_num(g, "nvlinks_active", &links) && links > 0) {
		/* the traffic goes over NVLink: PCIe's figure would bound it too low */
		if (per_link <= 0)
			return 0;   /* NVLink of a rate not known here: no bound */
		*nvlink = 1;
		snprintf(how, len, "%.0f NVLink links x %.6g GB/s", links, per_link);
		return links * per_link;
	}
	if (rr_num(g, "pcie_gen", &gen) && rr_num(g, "pcie_width", &width) && width > 0 &&
	    linkpeak_pcie_lane_gbps((int)gen) > 0) {
		snprintf(how, len, "PCIe gen %.0f x%.0f (%.6g GB/s a lane)", gen, width,
			 linkpeak_pcie_lane_gbps((int)gen));
		return width * linkpeak_pcie_lane_gbps((int)gen);
	}
	return 0;
}

double linkpeak_of(const cJSON *link, int major, int minor, char *src, size_t srclen)
{
	double per_link = linkpeak_nvlink_gbps(major, minor), best = 0;
	const cJSON *g;
	char how[160], least[160] = "";
	int i = 0, least_i = -1, nvlink, any_nvlink = 0;
	if (srclen)
		src[0] = 0;
	cJSON_ArrayForEach(g, rr_arr(link, "gpus")) {
		double p = gpu_peak(g, per_link, how, sizeof how, &nvlink);
		if (p <= 0) {
			/* a GPU whose link is not known bounds nothing */
			snprintf(src, srclen, "none: GPU %d's link is not known here (no NVLink count and no "
				 "PCIe generation and width, or NVLink at a rate not known for cc %d.%d)",
				 i, major, minor);
			return 0;
		}
		any_nvlink |= nvlink;
		if (least_i < 0 || p < best) {
			best = p;
			least_i = i;
			snprintf(least, sizeof least, "%s", how);
		}
		i++;
	}
	if (least_i < 0)
		return 0;
	/* more than 2 GPUs on NVLink: NVLink SHARP (NVLS) reduces in the switch
	 * and busbw passes the per-GPU rate (~480 GB/s on 8 H100s) unless the
	 * program says it ran with NVLS off (NCCL_NVLS_ENABLE=0) */
	if (i > 2 && any_nvlink && !rr_streq(rr_str(link, "nvls"), "off")) {
		snprintf(src, srclen, "none: %d GPUs on NVLink and NVLS not said off (NCCL_NVLS_ENABLE=0): "
			 "NVLink SHARP's bus bandwidth can pass the per-GPU link rate", i);
		return 0;
	}
	snprintf(src, srclen, "link: %s = %.6g GB/s per direction (the least of %d GPU%s: GPU %d; "
		 "topology: %s)", least, best, i, i == 1 ? "" : "s", least_i,
		 rr_str(link, "source") ? rr_str(link, "source") : "the program's");
	return best;
}
