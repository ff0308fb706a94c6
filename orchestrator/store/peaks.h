/* peaks.h -- a GPU's physical peaks, and the one "impossible figure" judge.
 *
 * One source of peaks for every figure gpuorch records, whatever program
 * printed it (a harness program, a Python baseline, a program's own output
 * figures): the exact device's properties -- SM count x highest SM clock x
 * dense FLOPs per SM per clock of its architecture, per datatype (FP32 on
 * the CUDA cores, TF32, FP16/BF16 and FP8 on the tensor cores), and the DRAM
 * bus width x 2 x its memory clock. The properties come from the device
 * itself (the result's "device" object the harness and the scripts print),
 * then the host's probe (nvidia-smi's name, capability and highest clocks),
 * then a table of exact device names for what neither gives (a program off
 * the harness on a host whose probe has no SM count). Never from a substring
 * of the name: an "H100 PCIe" is not an "H100 80GB HBM3".
 *
 * A figure above its peak (a median under the bound its model implies, a
 * GFLOP/s or GB/s figure over the peak) is IMPOSSIBLE: the step fails, and
 * the report shows it as what it is. Exactly at the peak is possible. */
#ifndef GPUORCH_PEAKS_H
#define GPUORCH_PEAKS_H

#include <cjson/cJSON.h>
#include "core/strbuf.h"

enum peak_dtype { PEAK_FP32, PEAK_TF32, PEAK_FP16, PEAK_FP8, PEAK_NDTYPES };

struct gpu_props {
	char name[128];
	int cc_major, cc_minor;      /* -1 when unknown */
	int sm_count;                /* 0 when unknown */
	double sm_mhz;               /* highest SM clock */
	double mem_mhz;              /* highest memory clock (as CUDA reports it: DDR, x2) */
	int bus_bits;                /* DRAM bus width */
	char how[200];               /* where each property came from */
};

struct gpu_peaks {
	double tflops[PEAK_NDTYPES]; /* dense; 0: the architecture has no such unit, or unknown */
	double gbps;                 /* DRAM; 0: unknown */
	char source[400];            /* "132 SMs x 1980 MHz (device) x FLOP/clk [...]; 5120-bit bus x 2 x 2619 MHz" */
};

/* The properties of the GPU a step ran on: device (a result's "device"
 * object, may be NULL), then info (the host's probe, run.json's
 * hosts[].info, may be NULL), then the table of exact names. 1 when a name
 * or a capability is known. */
int peaks_props(const cJSON *device, const cJSON *info, struct gpu_props *p);
/* Dense FLOPs per SM per clock of a datatype on capability major.minor; 0
 * when the architecture has no unit for it (FP8 before Ada, TF32 before
 * Ampere) or is not known. */
int peaks_flops_per_sm_clk(int major, int minor, enum peak_dtype dt);
void peaks_compute(const struct gpu_props *p, struct gpu_peaks *out);

/* "fp32", "tf32", "fp16", "bf16", "fp8" (a spec's programs.NAME.datatype)
 * -> the peak it is held to; -1 for anything else. */
int peaks_dtype_parse(const char *s);
/* "FP32", "TF32", "FP16/BF16", "FP8" */
const char *peaks_dtype_label(enum peak_dtype dt);

/* Judge one step's result (harness, script or a program's own figures)
 * against the peaks and record the judgement in result.roofline (docs/
 * run-record.md): the peaks, the datatype held to (datatype: the program's
 * declared one, or NULL: then the fastest of the architecture bounds it and
 * no "% of peak" of compute is given), the bound a model implies, the %
 * of peak and of DRAM, each figure over its peak. An impossible figure also
 * sets result.model.impossible (the one rule every reader strikes a timing
 * out by) or result.figures.NAME.impossible. Returns 1 when a figure is
 * impossible, why saying which and by how much. */
int peaks_judge(cJSON *result, const struct gpu_peaks *pk, const char *datatype, struct strbuf *why);

/* The roofline of a step as the report shows it: the recorded
 * result.roofline, else (a record from before it) one judged now from the
 * result's device, the host's probe (h's "info") and the program's declared
 * datatype in the record's spec. Returns a new object (free with
 * cJSON_Delete), or NULL when the step has nothing to judge. */
cJSON *peaks_roofline_of(const cJSON *run, const cJSON *h, const cJSON *step);

/* A record from before the roofline (no result.roofline where a result has a
 * model or figures), judged now: a copy with each such result judged as the
 * controller judges a new one (free with cJSON_Delete); NULL when every
 * result was judged when it was recorded. The report renders from it, so an
 * old record's impossible figures are struck out too. */
cJSON *peaks_judged_copy(const cJSON *run);

/* The datatype the spec (a run.json's experiment.spec, or a spec's JSON)
 * declares for program, or NULL. */
const char *peaks_declared_dtype(const cJSON *spec, const char *program);

#endif
