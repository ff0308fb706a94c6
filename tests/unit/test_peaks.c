/* test_peaks.c -- unit tests of the physical peaks and the impossible-figure judge (store/peaks.c). */
#include "store/peaks.h"
#include "store/linkpeak.h"
#include "store/runread.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fabs(b);
}

static cJSON *parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);
	if (!j)
		fprintf(stderr, "bad JSON in test: %s\n", s);
	return j;
}

/* the peaks of a device object (a harness result's) and/or a probe's info */
static void peaks_of(const char *device, const char *info, struct gpu_peaks *pk)
{
	cJSON *d = device ? parse(device) : NULL, *i = info ? parse(info) : NULL;
	struct gpu_props p;
	peaks_props(d, i, &p);
	peaks_compute(&p, pk);
	cJSON_Delete(d);
	cJSON_Delete(i);
}

#define H100_DEV "{\"name\":\"NVIDIA H100 80GB HBM3\",\"sm_count\":132,\"cc\":\"9.0\",\"sm_clock_mhz\":1980,\"mem_clock_mhz\":2619}"

static void test_peaks_by_device(void)
{
	struct gpu_peaks pk;
	peaks_of(H100_DEV, NULL, &pk);
	CHECK(near(pk.tflops[PEAK_FP16], 132.0 * 4096 * 1980e6 / 1e12), "H100 SXM FP16/BF16 dense: 132 x 4096 x 1980 MHz",
	      "%g", pk.tflops[PEAK_FP16]);
	CHECK(near(pk.tflops[PEAK_FP32], 132.0 * 256 * 1980e6 / 1e12), "H100 FP32: 256 FLOP/SM/clk", "%g", pk.tflops[PEAK_FP32]);
	CHECK(near(pk.tflops[PEAK_TF32], 132.0 * 2048 * 1980e6 / 1e12), "H100 TF32: 2048", "%g", pk.tflops[PEAK_TF32]);
	CHECK(near(pk.tflops[PEAK_FP8], 132.0 * 8192 * 1980e6 / 1e12), "H100 FP8: 8192", "%g", pk.tflops[PEAK_FP8]);
	CHECK(near(pk.gbps, 2 * 2619e6 * 640 / 1e9), "H100 SXM DRAM: 5120-bit x 2 x 2619 MHz (the bus from the exact name)",
	      "%g", pk.gbps);
	CHECK(strstr(pk.source, "bus (table)") && strstr(pk.source, "SMs (device)"), "the source says where each property came from",
	      "%s", pk.source);

	/* an H100 PCIe is not an H100 SXM: its own SMs, clocks and bus */
	peaks_of(NULL, "{\"gpu_name\":\"NVIDIA H100 PCIe\",\"compute_cap\":\"9.0\",\"max_sm_clock_mhz\":1755}", &pk);
	CHECK(pk.gbps > 2038 && pk.gbps < 2040, "H100 PCIe DRAM is its physical 2,039 GB/s, not the SXM's", "%g", pk.gbps);
	CHECK(near(pk.tflops[PEAK_FP16], 114.0 * 4096 * 1755e6 / 1e12), "H100 PCIe FP16: 114 SMs (table) x 1755 MHz (probe)",
	      "%g", pk.tflops[PEAK_FP16]);

	/* H200: every GPU gets peaks, from the probe's clocks */
	peaks_of(NULL, "{\"gpu_name\":\"NVIDIA H200\",\"compute_cap\":\"9.0\",\"max_sm_clock_mhz\":1980,\"max_mem_clock_mhz\":3201}", &pk);
	CHECK(near(pk.gbps, 2 * 3201e6 * 768 / 1e9), "H200 DRAM: 6144-bit x 2 x 3201 MHz (probe's max memory clock)", "%g", pk.gbps);
	CHECK(pk.tflops[PEAK_FP16] > 1000, "H200 FP16 peak derived", "%g", pk.tflops[PEAK_FP16]);

	/* a name only containing H100 gets nothing from the table */
	peaks_of(NULL, "{\"gpu_name\":\"NVIDIA H100 Something\",\"compute_cap\":\"9.0\",\"max_sm_clock_mhz\":1980}", &pk);
	CHECK(pk.gbps == 0 && pk.tflops[PEAK_FP16] == 0, "an unknown name is not matched by substring (no SM count: no peak)",
	      "%g %g", pk.gbps, pk.tflops[PEAK_FP16]);

	/* A100 has no FP8; the probe's current memory clock is never the peak's */
	peaks_of(NULL, "{\"gpu_name\":\"NVIDIA L4\",\"compute_cap\":\"8.9\",\"max_sm_clock_mhz\":2040,\"mem_clock_mhz\":405}", &pk);
	CHECK(pk.gbps > 299 && pk.gbps < 301, "L4 idling at 405 MHz: the peak is the highest memory clock's 300 GB/s", "%g", pk.gbps);
	CHECK(peaks_flops_per_sm_clk(8, 0, PEAK_FP8) == 0 && peaks_flops_per_sm_clk(8, 0, PEAK_FP16) == 2048,
	      "A100: no FP8, 2048 FP16", "%d", peaks_flops_per_sm_clk(8, 0, PEAK_FP8));
}

static int judge(cJSON *res, const struct gpu_peaks *pk, const char *dt, char *why, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	int r = peaks_judge(res, pk, dt, &sb);
	snprintf(why, n, "%s", sb.buf);
	strbuf_release(&sb);
	return r;
}

static void test_judge_model(void)
{
	struct gpu_peaks pk;
	char why[1024], buf[512];
	double gbps;
	cJSON *r;

	peaks_of(H100_DEV, NULL, &pk);
	gbps = pk.gbps;
	/* memory bound: bytes / median exactly at the DRAM peak: possible */
	snprintf(buf, sizeof(buf), "{\"timing\":{\"median_us\":100},\"model\":{\"flops\":1,\"bytes\":%.17g}}", gbps * 1e3 * 100);
	r = parse(buf);
	CHECK(!judge(r, &pk, "fp16", why, sizeof why), "a median exactly at the physical bound is possible", "%s", why);
	CHECK(!rr_true(r, "model.impossible") && !rr_true(r, "roofline.impossible"), "not flagged at the bound", "flagged");
	CHECK(near(rr_num_or_nan(r, "roofline.pct_of_dram"), 100), "100 % of DRAM at the bound", "%g",
	      rr_num_or_nan(r, "roofline.pct_of_dram"));
	cJSON_Delete(r);
	/* a millionth faster: impossible */
	snprintf(buf, sizeof(buf), "{\"timing\":{\"median_us\":99.9999},\"model\":{\"flops\":1,\"bytes\":%.17g}}", gbps * 1e3 * 100);
	r = parse(buf);
	CHECK(judge(r, &pk, "fp16", why, sizeof why), "a median just under the physical bound is impossible", "no");
	CHECK(rr_true(r, "model.impossible") && rr_true(r, "roofline.impossible"), "model.impossible set (the rule every reader uses)",
	      "not set");
	CHECK(strstr(why, "IMPOSSIBLE") && strstr(why, "DRAM peak"), "the reason names the bound that binds", "%s", why);
	cJSON_Delete(r);

	/* a Python baseline's result: a model, no bound of its own (the sdpa_flash case: 33,164 TFLOPS) */
	r = parse("{\"timing\":{\"median_us\":1},\"model\":{\"flops\":33164e6,\"bytes\":1,\"peak_source\":\"none\","
		  "\"impossible\":false}}");
	CHECK(judge(r, &pk, NULL, why, sizeof why), "33,164 TFLOPS on an H100 is impossible, no datatype declared", "%s", why);
	CHECK(rr_true(r, "model.impossible"), "the script's own impossible=false is overruled", "false");
	CHECK(!rr_obj(rr_result(NULL), "x") && isnan(rr_num_or_nan(r, "roofline.pct_of_peak")),
	      "no compute % of peak without a declared datatype", "%g", rr_num_or_nan(r, "roofline.pct_of_peak"));
	cJSON_Delete(r);

	/* a program's own impossible=true from the measured floor (cuBLAS at 1505 us against a 1529-us
	 * floor on a cool H100): within the physical peaks, so overruled; peaks given as arguments stand */
	r = parse("{\"timing\":{\"median_us\":1505},\"model\":{\"flops\":1099511627776,\"bytes\":402653184,"
		  "\"floor_us\":1529,\"impossible\":true}}");
	CHECK(!judge(r, &pk, NULL, why, sizeof why) && !rr_true(r, "model.impossible"),
	      "the measured floor's impossible is overruled by the physical peaks", "%s", why);
	cJSON_Delete(r);
	r = parse("{\"timing\":{\"median_us\":1505},\"model\":{\"flops\":1099511627776,\"bytes\":402653184,"
		  "\"bound_source\":\"args\",\"impossible\":true}}");
	judge(r, &pk, NULL, why, sizeof why);
	CHECK(rr_true(r, "model.impossible"), "an impossible judged against the user's --peak-tflops stands", "cleared");
	cJSON_Delete(r);

	/* the declared datatype: 600 TFLOPS is fine for FP16, impossible for FP32 and TF32 */
	r = parse("{\"timing\":{\"median_us\":1},\"model\":{\"flops\":600e6,\"bytes\":1}}");
	CHECK(!judge(r, &pk, "fp16", why, sizeof why), "600 TFLOPS FP16 on an H100 is possible", "%s", why);
	CHECK(near(rr_num_or_nan(r, "roofline.pct_of_peak"), 100 * 600 / pk.tflops[PEAK_FP16]),
	      "% of the FP16/BF16 peak", "%g", rr_num_or_nan(r, "roofline.pct_of_peak"));
	CHECK(judge(r, &pk, "fp32", why, sizeof why), "600 TFLOPS declared FP32 is impossible", "%s", why);
	CHECK(rr_streq(rr_str(rr_obj(r, "roofline"), "datatype"), "fp32"), "the datatype held to is recorded", "%s",
	      rr_str(rr_obj(r, "roofline"), "datatype"));
	cJSON_Delete(r);
}

static void test_judge_figures(void)
{
	struct gpu_peaks pk;
	char why[1024], buf[512];
	cJSON *r;
	peaks_of(NULL, "{\"gpu_name\":\"NVIDIA H100 80GB HBM3\",\"compute_cap\":\"9.0\",\"max_sm_clock_mhz\":1980}", &pk);

	/* sgemm-cuda's cuBLAS FP32 at 50,884 GFLOP/s: 76 % of FP32 */
	r = parse("{\"figures\":{\"gflops_4096\":{\"value\":50884,\"unit\":\"GFLOP/s\",\"better\":\"higher\"},"
		  "\"seconds\":{\"value\":1e-9,\"unit\":\"s\"}}}");
	CHECK(!judge(r, &pk, "fp32", why, sizeof why), "50,884 GFLOP/s FP32 on an H100 is possible", "%s", why);
	CHECK(fabs(rr_num_or_nan(r, "figures.gflops_4096.pct_of_peak") - 100 * 50.884 / pk.tflops[PEAK_FP32]) < 1e-6,
	      "a BYO figure's % of its declared datatype's peak", "%g", rr_num_or_nan(r, "figures.gflops_4096.pct_of_peak"));
	CHECK(!rr_obj(rr_obj(r, "figures"), "seconds") || isnan(rr_num_or_nan(r, "figures.seconds.pct_of_peak")),
	      "a figure that is no rate is not judged", "judged");
	cJSON_Delete(r);

	/* exactly at the FP32 peak, then just over it */
	snprintf(buf, sizeof(buf), "{\"figures\":{\"g\":{\"value\":%.17g,\"unit\":\"GFLOP/s\"}}}", pk.tflops[PEAK_FP32] * 1e3);
	r = parse(buf);
	CHECK(!judge(r, &pk, "fp32", why, sizeof why), "a GFLOP/s figure exactly at the peak is possible", "%s", why);
	cJSON_Delete(r);
	snprintf(buf, sizeof(buf), "{\"figures\":{\"g\":{\"value\":%.17g,\"unit\":\"GFLOP/s\"}}}", pk.tflops[PEAK_FP32] * 1e3 * 1.000001);
	r = parse(buf);
	CHECK(judge(r, &pk, "fp32", why, sizeof why), "a GFLOP/s figure just over the peak is impossible", "%s", why);
	CHECK(rr_true(r, "figures.g.impossible") && strstr(why, "'g'"), "the figure is flagged and named", "%s", why);
	cJSON_Delete(r);

	/* a bandwidth figure over the H100 PCIe's 2,039 GB/s */
	peaks_of(NULL, "{\"gpu_name\":\"NVIDIA H100 PCIe\",\"compute_cap\":\"9.0\"}", &pk);
	r = parse("{\"figures\":{\"bw\":{\"value\":2.9,\"unit\":\"TB/s\"}}}");
	CHECK(judge(r, &pk, NULL, why, sizeof why), "2.9 TB/s on an H100 PCIe is impossible", "%s", why);
	cJSON_Delete(r);
}

/* A kernel_timing step's kernels with declared work (result["kernel:KEY"]
 * with flops/bytes): every launch did that work, so the fastest launch
 * (min_us) is held to the bound; at it is possible, a hair under is not. */
static void test_judge_kernels(void)
{
	struct gpu_peaks pk;
	char why[1024], buf[768];
	cJSON *r;

	peaks_of(H100_DEV, NULL, &pk);
	/* bytes: the fastest launch exactly at the DRAM bound of 50 us */
	snprintf(buf, sizeof(buf), "{\"kernel:saxpy\":{\"median_us\":60,\"min_us\":50,\"max_us\":70,"
		 "\"bytes\":%.17g},\"kernel:other\":{\"median_us\":1,\"min_us\":0.5}}", pk.gbps * 1e3 * 50);
	r = parse(buf);
	CHECK(!judge(r, &pk, NULL, why, sizeof why), "a kernel's fastest launch exactly at its bound is possible", "%s", why);
	CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(rr_obj(r, "kernel:saxpy"), "impossible")),
	      "impossible: false recorded", "missing or true");
	CHECK(near(rr_num_or_nan(rr_obj(r, "kernel:saxpy"), "bound_us"), 50), "bound_us 50", "%g",
	      rr_num_or_nan(rr_obj(r, "kernel:saxpy"), "bound_us"));
	CHECK(near(rr_num_or_nan(rr_obj(r, "kernel:saxpy"), "gbps"), pk.gbps * 50 / 60), "the rate is the median launch's",
	      "%g", rr_num_or_nan(rr_obj(r, "kernel:saxpy"), "gbps"));
	CHECK(near(rr_num_or_nan(rr_obj(r, "kernel:saxpy"), "pct_of_dram"), 100.0 * 50 / 60), "% of DRAM at the median",
	      "%g", rr_num_or_nan(rr_obj(r, "kernel:saxpy"), "pct_of_dram"));
	CHECK(!cJSON_GetObjectItemCaseSensitive(rr_obj(r, "kernel:other"), "bound_us") &&
	      !cJSON_GetObjectItemCaseSensitive(rr_obj(r, "kernel:other"), "impossible"),
	      "a kernel without declared work is not judged", "judged");
	cJSON_Delete(r);
	/* the same with the fastest launch a hair faster: impossible, even though the median is not */
	snprintf(buf, sizeof(buf), "{\"kernel:saxpy\":{\"median_us\":60,\"min_us\":49.9999,\"max_us\":70,"
		 "\"bytes\":%.17g}}", pk.gbps * 1e3 * 50);
	r = parse(buf);
	CHECK(judge(r, &pk, NULL, why, sizeof why), "a launch a hair under the bound is impossible (the median is not)", "%s", why);
	CHECK(rr_true(rr_obj(r, "kernel:saxpy"), "impossible") && rr_true(r, "roofline.impossible"),
	      "the kernel and the roofline are flagged", "not flagged");
	CHECK(strstr(why, "kernel saxpy's fastest launch 50 us beats the physical bound 50 us") &&
	      strstr(why, "DRAM peak"), "the reason names the kernel, its fastest launch and the DRAM bound", "%s", why);
	cJSON_Delete(r);
	/* flops: declared FP32, a launch faster than the FP32 peak allows (possible at FP16) */
	snprintf(buf, sizeof(buf), "{\"kernel:sgemm\":{\"median_us\":100,\"min_us\":100,\"flops\":%.17g}}",
		 pk.tflops[PEAK_FP32] * 1e6 * 100 * 2);
	r = parse(buf);
	CHECK(judge(r, &pk, "fp32", why, sizeof why) && strstr(why, "FP32 peak"), "twice the FP32 peak, declared fp32: impossible",
	      "%s", why);
	CHECK(near(rr_num_or_nan(rr_obj(r, "kernel:sgemm"), "pct_of_peak"), 200), "200 % of the FP32 peak recorded", "%g",
	      rr_num_or_nan(rr_obj(r, "kernel:sgemm"), "pct_of_peak"));
	cJSON_Delete(r);
	r = parse(buf);
	CHECK(!judge(r, &pk, NULL, why, sizeof why) && isnan(rr_num_or_nan(rr_obj(r, "kernel:sgemm"), "pct_of_peak")),
	      "no datatype declared: held to the fastest unit (FP8), possible, no % of peak", "%s", why);
	cJSON_Delete(r);
}

static void test_roofline_of_old_record(void)
{
	/* a record from before: no roofline recorded, judged from the device and the spec's datatype */
	cJSON *run = parse("{\"experiment\":{\"spec\":{\"programs\":{\"k\":{\"datatype\":\"bf16\"}}}},"
			   "\"hosts\":[{\"info\":{\"gpu_name\":\"NVIDIA H200\",\"compute_cap\":\"9.0\","
			   "\"max_sm_clock_mhz\":1980,\"mem_clock_mhz\":3201},"
			   "\"steps\":[{\"program\":\"k\",\"result\":{\"device\":{\"name\":\"NVIDIA H200\",\"sm_count\":132,"
			   "\"cc\":\"9.0\",\"sm_clock_mhz\":1980,\"mem_clock_mhz\":3201},"
			   "\"timing\":{\"median_us\":1000},\"model\":{\"flops\":535e9,\"bytes\":1e6}}}]}]}");
	const cJSON *h = cJSON_GetArrayItem(rr_arr(run, "hosts"), 0);
	const cJSON *s = cJSON_GetArrayItem(rr_arr(h, "steps"), 0);
	cJSON *roof = peaks_roofline_of(run, h, s);
	CHECK(roof && near(rr_num_or_nan(roof, "pct_of_peak"), 100 * 535 / (132.0 * 4096 * 1980e6 / 1e12)), "an H200 record gets its % of peak (535 of 1070.5)",
	      "%g", roof ? rr_num_or_nan(roof, "pct_of_peak") : -1);
	CHECK(roof && rr_streq(rr_str(roof, "datatype"), "bf16"), "the spec's datatype", "%s", roof ? rr_str(roof, "datatype") : "");
	cJSON_Delete(roof);
	cJSON_Delete(run);
	CHECK(peaks_dtype_parse("bf16") == PEAK_FP16 && peaks_dtype_parse("int4") == -1, "datatype names", "%d",
	      peaks_dtype_parse("bf16"));
}

/* a result with a link (allreduce_nccl's) and a busbw figure held to it */
static cJSON *link_result(const char *cc, const char *gpus, double busbw)
{
	char buf[1024];
	snprintf(buf, sizeof(buf),
		 "{\"device\":{\"name\":\"NVIDIA H100 80GB HBM3\"%s%s%s},\"link\":{\"source\":\"t\",\"gpus\":%s},"
		 "\"figures\":{\"busbw_gbps\":{\"value\":%.17g,\"unit\":\"GB/s\",\"bound\":\"link\"},"
		 "\"algbw_gbps\":{\"value\":%.17g,\"unit\":\"GB/s\"}}}",
		 cc ? ",\"cc\":\"" : "", cc ? cc : "", cc ? "\"" : "", gpus, busbw, busbw);
	return parse(buf);
}

static void test_link_peak(void)
{
	struct gpu_peaks pk;
	struct strbuf why = STRBUF_INIT;
	char src[400];
	cJSON *r, *link;
	const char *nv18 = "[{\"nvlinks_active\":18,\"pcie_gen\":5,\"pcie_width\":16},"
			   "{\"nvlinks_active\":18,\"pcie_gen\":5,\"pcie_width\":16}]";

	CHECK(linkpeak_nvlink_gbps(9, 0) == 25 && linkpeak_nvlink_gbps(10, 0) == 50 &&
	      linkpeak_nvlink_gbps(8, 9) == 0, "NVLink GB/s a link by architecture", "%g", linkpeak_nvlink_gbps(9, 0));
	CHECK(near(linkpeak_pcie_lane_gbps(4) * 16, 31.507696) && linkpeak_pcie_lane_gbps(0) == 0 &&
	      linkpeak_pcie_lane_gbps(7) == 0, "PCIe GB/s a lane by generation", "%g", linkpeak_pcie_lane_gbps(4));
	/* the least of the GPUs: one with 12 active links bounds the pair */
	link = parse("{\"gpus\":[{\"nvlinks_active\":18},{\"nvlinks_active\":12}]}");
	CHECK(linkpeak_of(link, 9, 0, src, sizeof(src)) == 300 && strstr(src, "12 NVLink links x 25 GB/s = 300 GB/s") &&
	      strstr(src, "GPU 1"), "the least GPU's links", "%s", src);
	cJSON_Delete(link);
	/* a GPU whose link is unknown bounds nothing; none at all neither */
	link = parse("{\"gpus\":[{\"nvlinks_active\":18},{\"nvlinks_active\":null,\"pcie_gen\":0,\"pcie_width\":0}]}");
	CHECK(linkpeak_of(link, 9, 0, src, sizeof(src)) == 0, "an unknown GPU: no peak", "%s", src);
	cJSON_Delete(link);
	link = parse("{\"gpus\":[]}");
	CHECK(linkpeak_of(link, 9, 0, src, sizeof(src)) == 0, "no GPU: no peak", "%s", src);
	cJSON_Delete(link);
	/* NVLink of a rate not known here (cc 7.5 bridges, a future GPU): no bound,
	 * not PCIe's (the traffic goes over NVLink) */
	link = parse("{\"gpus\":[{\"nvlinks_active\":2,\"pcie_gen\":3,\"pcie_width\":16},"
		     "{\"nvlinks_active\":2,\"pcie_gen\":3,\"pcie_width\":16}]}");
	CHECK(linkpeak_of(link, 7, 5, src, sizeof(src)) == 0 && linkpeak_of(link, 12, 0, src, sizeof(src)) == 0,
	      "NVLink at a rate not known: no peak (not PCIe gen 3's 15.8 GB/s)", "%s", src);
	cJSON_Delete(link);
	/* more than 2 GPUs on NVLink: NVLS may pass the per-GPU rate, so a bound
	 * only with NVLS off; 2 GPUs, or PCIe, are bound either way */
	link = parse("{\"gpus\":[{\"nvlinks_active\":18},{\"nvlinks_active\":18},{\"nvlinks_active\":18}]}");
	CHECK(linkpeak_of(link, 9, 0, src, sizeof(src)) == 0, "3 GPUs on NVLink, NVLS not said off: no peak", "%s", src);
	cJSON_AddStringToObject(link, "nvls", "off");
	CHECK(linkpeak_of(link, 9, 0, src, sizeof(src)) == 450, "3 GPUs on NVLink with NVLS off: 450", "%s", src);
	cJSON_Delete(link);
	link = parse("{\"nvls\":\"default\",\"gpus\":[{\"nvlinks_active\":18},{\"nvlinks_active\":18}]}");
	CHECK(linkpeak_of(link, 9, 0, src, sizeof(src)) == 450, "2 GPUs on NVLink: 450 whatever NVLS", "%s", src);
	cJSON_Delete(link);
	link = parse("{\"gpus\":[{\"nvlinks_active\":0,\"pcie_gen\":5,\"pcie_width\":16},"
		     "{\"nvlinks_active\":0,\"pcie_gen\":5,\"pcie_width\":16},{\"nvlinks_active\":0,\"pcie_gen\":5,\"pcie_width\":16}]}");
	CHECK(linkpeak_of(link, 9, 0, src, sizeof(src)) > 63 && linkpeak_of(link, 9, 0, src, sizeof(src)) < 63.1,
	      "3 GPUs on PCIe gen 5 x16: 63.0 (no switch reduces over PCIe)", "%s", src);
	cJSON_Delete(link);

	peaks_of(H100_DEV, NULL, &pk);
	/* exactly at 450 GB/s: possible, 100 %; a hair over: IMPOSSIBLE; algbw is held to DRAM */
	r = link_result("9.0", nv18, 450);
	CHECK(peaks_judge(r, &pk, NULL, &why) == 0 && near(rr_num_or_nan(r, "figures.busbw_gbps.pct_of_peak"), 100) &&
	      near(rr_num_or_nan(r, "figures.busbw_gbps.peak"), 450) && near(rr_num_or_nan(r, "roofline.peaks.link_gbps"), 450),
	      "busbw at the link peak is possible", "%s", why.buf);
	CHECK(near(rr_num_or_nan(r, "figures.algbw_gbps.pct_of_peak"), 100 * 450 / pk.gbps) &&
	      !cJSON_GetObjectItem(rr_obj(rr_obj(r, "figures"), "algbw_gbps"), "peak"),
	      "algbw (no bound) is held to DRAM, with no link peak", "%g", rr_num_or_nan(r, "figures.algbw_gbps.pct_of_peak"));
	cJSON_Delete(r);
	strbuf_reset(&why);
	r = link_result("9.0", nv18, 450.000001);
	CHECK(peaks_judge(r, &pk, NULL, &why) == 1 && rr_true(r, "figures.busbw_gbps.impossible") &&
	      strstr(why.buf, "IMPOSSIBLE: figure 'busbw_gbps' 450.000001 GB/s is over the physical peak 450 GB/s (the GPUs' link; link: 18 NVLink"),
	      "busbw over the link peak is IMPOSSIBLE", "%s", why.buf);
	cJSON_Delete(r);
	strbuf_reset(&why);
	/* no NVLink active: PCIe gen 5 x16; no cc in the device: the table's */
	r = link_result(NULL, "[{\"nvlinks_active\":0,\"pcie_gen\":5,\"pcie_width\":16}]", 64);
	CHECK(peaks_judge(r, &pk, NULL, &why) == 1 && strstr(why.buf, "PCIe gen 5 x16"),
	      "over PCIe gen 5 x16 (63.0 GB/s) is IMPOSSIBLE", "%s", why.buf);
	cJSON_Delete(r);
	strbuf_reset(&why);
	/* a link the result cannot bound: the figure is not judged, the roofline says why */
	r = link_result("9.0", "[{\"nvlinks_active\":null}]", 500);
	CHECK(peaks_judge(r, &pk, NULL, &why) == 0 &&
	      !cJSON_GetObjectItem(rr_obj(rr_obj(r, "figures"), "busbw_gbps"), "pct_of_peak") &&
	      strstr(rr_str(rr_obj(r, "roofline"), "link_source"), "none:"), "an unknown link judges nothing", "%s", why.buf);
	cJSON_Delete(r);
	strbuf_release(&why);
}

int main(void)
{
	test_peaks_by_device();
	test_judge_model();
	test_judge_figures();
	test_judge_kernels();
	test_roofline_of_old_record();
	test_link_peak();
	return check_summary();
}
