/* peaks.c -- a GPU's physical peaks by its exact properties, and the one
 * impossible-figure judge (peaks.h). */
#include "store/peaks.h"
#include "store/runread.h"
#include "store/linkpeak.h"
#include "core/jsonutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "core/banned.h"

/* Dense FLOPs per SM per clock (an FMA is 2), per architecture: NVIDIA's
 * datasheet figures are SMs x these x the boost clock (V100 125 FP16; A100
 * 19.5 FP32, 156 TF32, 312 FP16; A10 125 FP16; L4 121 FP16, 242 FP8; H100
 * SXM5 67 FP32, 495 TF32, 989 FP16, 1979 FP8). Consumer parts run FP16 with
 * FP32 accumulation at half these: the bound is the fastest rate. */
int peaks_flops_per_sm_clk(int major, int minor, enum peak_dtype dt)
{
	static const struct {
		int major, minor;    /* minor -1: any */
		int rate[PEAK_NDTYPES];
	} t[] = {
		{ 7, -1, { 128, 0, 1024, 0 } },        /* Volta, Turing */
		{ 8, 0, { 128, 1024, 2048, 0 } },      /* A100 */
		{ 8, 9, { 256, 512, 1024, 2048 } },    /* Ada */
		{ 8, -1, { 256, 512, 1024, 0 } },      /* GA10x */
		{ 9, -1, { 256, 2048, 4096, 8192 } },  /* Hopper */
		{ 10, -1, { 256, 4096, 8192, 16384 } },/* B100/B200 */
		{ 12, -1, { 256, 512, 1024, 2048 } },  /* consumer Blackwell */
	};
	size_t i;
	if (dt < 0 || dt >= PEAK_NDTYPES)
		return 0;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].major == major && (t[i].minor < 0 || t[i].minor == minor))
			return t[i].rate[dt];
	return 0;
}

/* What neither the device object nor the probe may say (a program off the
 * harness: no SM count; the bus width is in no probe), by exact name as
 * cudaGetDeviceProperties and nvidia-smi print it. */
static const struct known_gpu {
	const char *name;
	int major, minor, sms, bus_bits;
	double sm_mhz, mem_mhz;
} known[] = {
	{ "NVIDIA H100 80GB HBM3", 9, 0, 132, 5120, 1980, 2619 },
	{ "NVIDIA H100 PCIe", 9, 0, 114, 5120, 1755, 1593 },
	{ "NVIDIA H100 NVL", 9, 0, 132, 6144, 1785, 2619 },
	{ "NVIDIA H200", 9, 0, 132, 6144, 1980, 3201 },
	{ "NVIDIA A100-SXM4-80GB", 8, 0, 108, 5120, 1410, 1593 },
	{ "NVIDIA A100-SXM4-40GB", 8, 0, 108, 5120, 1410, 1215 },
	{ "NVIDIA A100-PCIE-40GB", 8, 0, 108, 5120, 1410, 1215 },
	{ "NVIDIA A100 80GB PCIe", 8, 0, 108, 5120, 1410, 1512 },
	{ "NVIDIA L4", 8, 9, 58, 192, 2040, 6251 },
	{ "NVIDIA L40S", 8, 9, 142, 384, 2520, 9001 },
	{ "NVIDIA A10G", 8, 6, 80, 384, 1710, 6251 },
	{ "NVIDIA A10", 8, 6, 72, 384, 1695, 6251 },
	{ "Tesla T4", 7, 5, 40, 256, 1590, 5001 },
	{ "Tesla V100-SXM2-16GB", 7, 0, 80, 4096, 1530, 877 },
	{ "Tesla V100-SXM2-32GB", 7, 0, 80, 4096, 1530, 877 },
	{ NULL, 0, 0, 0, 0, 0, 0 },
};

static const struct known_gpu *known_by_name(const char *name)
{
	int i;
	for (i = 0; name && known[i].name; i++)
		if (!strcmp(known[i].name, name))
			return &known[i];
	return NULL;
}

static void how_add(struct gpu_props *p, const char *what, const char *from)
{
	size_t n = strlen(p->how);
	snprintf(p->how + n, sizeof(p->how) - n, "%s%s %s", n ? ", " : "", what, from);
}

static int parse_cc(const char *s, int *major, int *minor)
{
	return s && sscanf(s, "%d.%d", major, minor) == 2;
}

int peaks_props(const cJSON *device, const cJSON *info, struct gpu_props *p)
{
	const struct known_gpu *k;
	const char *name;
	double v;

	memset(p, 0, sizeof(*p));
	p->cc_major = p->cc_minor = -1;
	name = rr_str(device, "name") ? rr_str(device, "name") : rr_str(info, "gpu_name");
	if (name)
		snprintf(p->name, sizeof(p->name), "%s", name);
	if (!parse_cc(rr_str(device, "cc"), &p->cc_major, &p->cc_minor) &&
	    !parse_cc(rr_str(info, "compute_cap"), &p->cc_major, &p->cc_minor))
		p->cc_major = p->cc_minor = -1;
	if (rr_num(device, "sm_count", &v) && v > 0) {
		p->sm_count = (int)v;
		how_add(p, "SMs", "(device)");
	}
	if (rr_num(device, "sm_clock_mhz", &v) && v > 0) {
		p->sm_mhz = v;
		how_add(p, "SM clock", "(device)");
	} else if (rr_num(info, "max_sm_clock_mhz", &v) && v > 0) {
		p->sm_mhz = v;
		how_add(p, "SM clock", "(probe: max)");
	}
	/* the highest memory clock: the device attribute is; the probe's
	 * current one is not on GDDR parts idling at 405 MHz */
	if (rr_num(device, "mem_clock_mhz", &v) && v > 0) {
		p->mem_mhz = v;
		how_add(p, "memory clock", "(device)");
	} else if (rr_num(info, "max_mem_clock_mhz", &v) && v > 0) {
		p->mem_mhz = v;
		how_add(p, "memory clock", "(probe: max)");
	}
	if (rr_num(device, "mem_bus_width_bits", &v) && v > 0) {
		p->bus_bits = (int)v;
		how_add(p, "bus", "(device)");
	}
	k = known_by_name(p->name);
	if (k) {
		if (p->cc_major < 0) {
			p->cc_major = k->major;
			p->cc_minor = k->minor;
		}
		if (!p->sm_count) {
			p->sm_count = k->sms;
			how_add(p, "SMs", "(table)");
		}
		if (!(p->sm_mhz > 0)) {
			p->sm_mhz = k->sm_mhz;
			how_add(p, "SM clock", "(table)");
		}
		if (!(p->mem_mhz > 0)) {
			p->mem_mhz = k->mem_mhz;
			how_add(p, "memory clock", "(table)");
		}
		if (!p->bus_bits) {
			p->bus_bits = k->bus_bits;
			how_add(p, "bus", "(table)");
		}
	}
	return p->name[0] || p->cc_major >= 0;
}

void peaks_compute(const struct gpu_props *p, struct gpu_peaks *out)
{
	int dt, any = 0;
	size_t n;
	memset(out, 0, sizeof(*out));
	for (dt = 0; dt < PEAK_NDTYPES; dt++) {
		int r = peaks_flops_per_sm_clk(p->cc_major, p->cc_minor, (enum peak_dtype)dt);
		if (r > 0 && p->sm_count > 0 && p->sm_mhz > 0) {
			out->tflops[dt] = (double)p->sm_count * r * p->sm_mhz * 1e6 / 1e12;
			any = 1;
		}
	}
	if (p->mem_mhz > 0 && p->bus_bits > 0)
		out->gbps = 2.0 * p->mem_mhz * 1e6 * (p->bus_bits / 8.0) / 1e9;
	if (any)
		snprintf(out->source, sizeof(out->source),
			 "%s (cc %d.%d): %d SMs x %.0f MHz x dense FLOP/SM/clk FP32 %d, TF32 %d, FP16/BF16 %d, FP8 %d",
			 p->name[0] ? p->name : "GPU", p->cc_major, p->cc_minor, p->sm_count, p->sm_mhz,
			 peaks_flops_per_sm_clk(p->cc_major, p->cc_minor, PEAK_FP32),
			 peaks_flops_per_sm_clk(p->cc_major, p->cc_minor, PEAK_TF32),
			 peaks_flops_per_sm_clk(p->cc_major, p->cc_minor, PEAK_FP16),
			 peaks_flops_per_sm_clk(p->cc_major, p->cc_minor, PEAK_FP8));
	n = strlen(out->source);
	if (out->gbps > 0)
		snprintf(out->source + n, sizeof(out->source) - n, "%s%d-bit bus x 2 x %.0f MHz",
			 n ? "; " : "", p->bus_bits, p->mem_mhz);
	n = strlen(out->source);
	if (n && p->how[0])
		snprintf(out->source + n, sizeof(out->source) - n, " [%s]", p->how);
}

int peaks_dtype_parse(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "fp32"))
		return PEAK_FP32;
	if (!strcmp(s, "tf32"))
		return PEAK_TF32;
	if (!strcmp(s, "fp16") || !strcmp(s, "bf16"))
		return PEAK_FP16;
	if (!strcmp(s, "fp8"))
		return PEAK_FP8;
	return -1;
}

const char *peaks_dtype_label(enum peak_dtype dt)
{
	static const char *const l[] = { "FP32", "TF32", "FP16/BF16", "FP8" };
	return dt >= 0 && dt < PEAK_NDTYPES ? l[dt] : "?";
}

/* A figure's unit as a rate: its scale to TFLOPS (*flops = 1) or to GB/s
 * (*flops = 0); 0 when the unit is not a rate of either. */
static double rate_scale(const char *unit, int *flops)
{
	static const struct {
		const char *unit;
		int flops;
		double scale;
	} u[] = {
		{ "TFLOP/s", 1, 1 },     { "TFLOPS", 1, 1 },   { "GFLOP/s", 1, 1e-3 },
		{ "GFLOPS", 1, 1e-3 },   { "MFLOP/s", 1, 1e-6 }, { "MFLOPS", 1, 1e-6 },
		{ "PFLOP/s", 1, 1e3 },   { "PFLOPS", 1, 1e3 },  { "TB/s", 0, 1e3 },
		{ "GB/s", 0, 1 },        { "MB/s", 0, 1e-3 },   { "TiB/s", 0, 1099.511627776 },
		{ "GiB/s", 0, 1.073741824 }, { "MiB/s", 0, 1.048576e-3 },
	};
	size_t i;
	for (i = 0; unit && i < sizeof(u) / sizeof(u[0]); i++)
		if (!strcasecmp(unit, u[i].unit)) {
			*flops = u[i].flops;
			return u[i].scale;
		}
	return 0;
}

/* rate over peak, judged on paper: within a relative 1e-9 of the peak is
 * at it (a median computed back from a figure exactly at the peak lands an
 * ulp either side), and at the peak is possible */
static int over_peak(double rate, double peak)
{
	return rate > peak * (1 + 1e-9);
}

static void add_num_or_null(cJSON *o, const char *k, double v)
{
	if (v > 0 && isfinite(v))
		json_add_num(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* The least time fl FLOPs (at bound_tf TFLOPS) and by bytes (at the DRAM
 * peak) take, in us; 0 when neither is known. *mem_binds: the bytes bind. */
static double work_bound(double fl, double by, double bound_tf, const struct gpu_peaks *pk,
			 int *mem_binds)
{
	double bound = bound_tf > 0 && fl > 0 ? fl / (bound_tf * 1e6) : 0;
	*mem_binds = 0;
	if (pk->gbps > 0 && by > 0 && by / (pk->gbps * 1e3) > bound) {
		bound = by / (pk->gbps * 1e3);
		*mem_binds = 1;
	}
	return bound;
}

/* The kernels of a kernel_timing step whose work per launch was declared
 * (result["kernel:KEY"] with flops and/or bytes, from the step's "work"):
 * the rate of the median launch, its % of peak, and the bound that work
 * implies. Every launch did that work, so the fastest one (min_us) under
 * the bound is IMPOSSIBLE; exactly at it is possible. Returns 1 when one
 * is impossible. */
static int judge_kernels(cJSON *result, const struct gpu_peaks *pk, int dt, double bound_tf,
			 const char *bound_dt, int bad, struct strbuf *why)
{
	cJSON *k;
	int any = 0;
	cJSON_ArrayForEach(k, result) {
		double fl, by, med, min, bound;
		int mem_binds;
		if (strncmp(k->string ? k->string : "", "kernel:", 7) || !cJSON_IsObject(k))
			continue;
		fl = rr_num_or_nan(k, "flops");
		by = rr_num_or_nan(k, "bytes");
		if (!(fl > 0) && !(by > 0))
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(k, "impossible");
		if (!rr_num(k, "median_us", &med) || !(med > 0) || !rr_num(k, "min_us", &min))
			continue;
		if (fl > 0) {
			json_add_num(k, "tflops", fl / med / 1e6);
			if (dt >= 0 && pk->tflops[dt] > 0)
				json_add_num(k, "pct_of_peak", 100.0 * (fl / med / 1e6) / pk->tflops[dt]);
		}
		if (by > 0) {
			json_add_num(k, "gbps", by / med / 1e3);
			if (pk->gbps > 0)
				json_add_num(k, "pct_of_dram", 100.0 * (by / med / 1e3) / pk->gbps);
		}
		bound = work_bound(fl, by, bound_tf, pk, &mem_binds);
		add_num_or_null(k, "bound_us", bound);
		json_add_bool(k, "impossible", bound > 0 && over_peak(bound, min));
		if (!(bound > 0 && over_peak(bound, min)))
			continue;
		strbuf_addf(why, "%sIMPOSSIBLE: kernel %s's fastest launch %.4g us beats the physical "
				 "bound %.4g us of its declared work (", bad || any ? "; " : "",
			    k->string + 7, min, bound);
		if (mem_binds)
			strbuf_addf(why, "%.10g bytes at the DRAM peak %.4g GB/s", by, pk->gbps);
		else
			strbuf_addf(why, "%.10g FLOPs at the %s peak %.4g TFLOPS", fl, bound_dt, bound_tf);
		strbuf_addf(why, "; %s)", pk->source);
		any = 1;
	}
	return any;
}

/* The link peak of a result that reports its GPUs' interconnect (a
 * multi-GPU program's "link", store/linkpeak.h), recorded in the roofline:
 * 0 when it reports none, or too little to bound anything. */
static double link_peak(const cJSON *result, cJSON *roof, cJSON *pks, char *src, size_t srclen)
{
	const cJSON *link = rr_obj(result, "link"), *dev = rr_obj(result, "device");
	const struct known_gpu *k = known_by_name(rr_str(dev, "name"));
	int major = -1, minor = -1;
	double g;
	src[0] = 0;
	if (!link)
		return 0;
	if (!parse_cc(rr_str(dev, "cc"), &major, &minor) && k) {
		major = k->major;
		minor = k->minor;
	}
	g = linkpeak_of(link, major, minor, src, srclen);
	add_num_or_null(pks, "link_gbps", g);
	json_add_str(roof, "link_source", g > 0 || src[0] ? src : "none: the result's link names no GPU");
	return g;
}

/* A figure over its peak (IMPOSSIBLE), and its % of it: a rate figure
 * against the compute or the DRAM peak, or the link peak when it says
 * "bound": "link" (a collective's bus bandwidth). Returns 1 when over. */
static int judge_figure(cJSON *f, const struct gpu_peaks *pk, int dt, double bound_tf, const char *bound_dt,
			double link_gbps, const char *link_src, int bad, struct strbuf *why)
{
	int isfl = 0, link = rr_streq(rr_str(f, "bound"), "link");
	double scale = rate_scale(rr_str(f, "unit"), &isfl), v, peak;
	if (!(scale > 0) || !rr_num(f, "value", &v) || (link && isfl))
		return 0;
	peak = link ? link_gbps : isfl ? bound_tf : pk->gbps;
	if (!(peak > 0))
		return 0;
	cJSON_DeleteItemFromObjectCaseSensitive(f, "pct_of_peak");
	cJSON_DeleteItemFromObjectCaseSensitive(f, "impossible");
	cJSON_DeleteItemFromObjectCaseSensitive(f, "peak");
	if (!isfl || dt >= 0)
		json_add_num(f, "pct_of_peak", 100.0 * v * scale / peak);
	if (link)
		json_add_num(f, "peak", peak / scale);
	if (!over_peak(v * scale, peak))
		return 0;
	json_add_bool(f, "impossible", 1);
	strbuf_addf(why, "%sIMPOSSIBLE: figure '%s' %.10g %s is over the physical peak %.10g %s (%s; %s)",
		    bad ? "; " : "", f->string, v, rr_str(f, "unit"), peak / scale, rr_str(f, "unit"),
		    link ? "the GPUs' link" : isfl ? bound_dt : "DRAM", link ? link_src : pk->source);
	return 1;
}

int peaks_judge(cJSON *result, const struct gpu_peaks *pk, const char *datatype, struct strbuf *why)
{
	int dt = peaks_dtype_parse(datatype), d, bad = 0;
	double bound_tf = 0, fl, by, med, bound_us = 0, link_gbps;
	const char *bound_dt = NULL;
	char link_src[400];
	cJSON *roof, *pks, *model, *f;

	if (!cJSON_IsObject(result))
		return 0;
	/* the compute rate a figure cannot pass: the declared datatype's, else
	 * the fastest the architecture has */
	if (dt >= 0 && pk->tflops[dt] > 0) {
		bound_tf = pk->tflops[dt];
		bound_dt = peaks_dtype_label((enum peak_dtype)dt);
	} else {
		for (d = 0; d < PEAK_NDTYPES; d++)
			if (pk->tflops[d] > bound_tf) {
				bound_tf = pk->tflops[d];
				bound_dt = peaks_dtype_label((enum peak_dtype)d);
			}
	}
	cJSON_DeleteItemFromObjectCaseSensitive(result, "roofline");
	roof = json_add_obj(result, "roofline");
	if (dt >= 0)
		json_add_str(roof, "datatype", datatype);
	else
		cJSON_AddNullToObject(roof, "datatype");
	pks = json_add_obj(roof, "peaks");
	add_num_or_null(pks, "fp32_tflops", pk->tflops[PEAK_FP32]);
	add_num_or_null(pks, "tf32_tflops", pk->tflops[PEAK_TF32]);
	add_num_or_null(pks, "fp16_tflops", pk->tflops[PEAK_FP16]);
	add_num_or_null(pks, "fp8_tflops", pk->tflops[PEAK_FP8]);
	add_num_or_null(pks, "dram_gbps", pk->gbps);
	json_add_str(roof, "source", pk->source[0] ? pk->source : "none: the device's properties are not known");
	add_num_or_null(roof, "bound_tflops", bound_tf);
	if (bound_dt)
		json_add_str(roof, "bound_datatype", dt >= 0 ? bound_dt : "fastest of the architecture (no datatype declared)");

	/* a result with a model: the median against the bound it implies */
	model = cJSON_GetObjectItemCaseSensitive(result, "model");
	if (cJSON_IsObject(model) && rr_num(result, "timing.median_us", &med) && med > 0) {
		int mem_binds = 0;
		fl = rr_num_or_nan(model, "flops");
		by = rr_num_or_nan(model, "bytes");
		bound_us = work_bound(fl, by, bound_tf, pk, &mem_binds);
		add_num_or_null(roof, "bound_us", bound_us);
		if (dt >= 0 && pk->tflops[dt] > 0 && fl > 0)
			json_add_num(roof, "pct_of_peak", 100.0 * (fl / med / 1e6) / pk->tflops[dt]);
		if (pk->gbps > 0 && by > 0)
			json_add_num(roof, "pct_of_dram", 100.0 * (by / med / 1e3) / pk->gbps);
		if (bound_us > 0 && over_peak(bound_us, med)) {
			bad = 1;
			if (mem_binds)
				strbuf_addf(why, "IMPOSSIBLE: the median %.4g us beats the physical bound %.4g us "
						 "(%.4g GB/s over the DRAM peak %.4g GB/s; %s)",
					    med, bound_us, by / med / 1e3, pk->gbps, pk->source);
			else
				strbuf_addf(why, "IMPOSSIBLE: the median %.4g us beats the physical bound %.4g us "
						 "(%.4g TFLOPS over the %s peak %.4g TFLOPS; %s)",
					    med, bound_us, fl / med / 1e6, bound_dt, bound_tf, pk->source);
			cJSON_DeleteItemFromObjectCaseSensitive(model, "impossible");
			json_add_bool(model, "impossible", 1);
		} else if (rr_true(model, "impossible") && bound_tf > 0 && pk->gbps > 0 &&
			   !rr_streq(rr_str(model, "bound_source"), "args")) {
			/* one judge: the program's own verdict came from no physical
			 * limit the controller knows (a record from before 2026-11-27,
			 * judged against the measured peaks that cuBLAS beat on a cool
			 * H100); peaks the user passed as arguments stand */
			cJSON_DeleteItemFromObjectCaseSensitive(model, "impossible");
			json_add_bool(model, "impossible", 0);
			json_add_str(roof, "overruled", "the program's impossible=true: the median is within the physical peaks");
		}
	}
	/* figures from a program's own output: a rate over its peak */
	link_gbps = link_peak(result, roof, pks, link_src, sizeof link_src);
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(result, "figures"))
		bad |= judge_figure(f, pk, dt, bound_tf, bound_dt, link_gbps, link_src, bad, why);
	bad |= judge_kernels(result, pk, dt, bound_tf, bound_dt, bad, why);
	json_add_bool(roof, "impossible", bad);
	return bad;
}

const char *peaks_declared_dtype(const cJSON *spec, const char *program)
{
	const cJSON *progs = rr_obj(spec, "programs");
	return program ? rr_str(rr_obj(progs, program), "datatype") : NULL;
}

cJSON *peaks_roofline_of(const cJSON *run, const cJSON *h, const cJSON *step)
{
	const cJSON *res = rr_result(step);
	struct gpu_props p;
	struct gpu_peaks pk;
	struct strbuf why = STRBUF_INIT;
	cJSON *tmp, *roof;

	if (!res)
		return NULL;
	if (rr_obj(res, "roofline"))
		return cJSON_Duplicate(rr_obj(res, "roofline"), 1);
	if (!rr_obj(res, "model") && !rr_obj(res, "figures"))
		return NULL;
	if (!peaks_props(rr_obj(res, "device"), rr_obj(h, "info"), &p))
		return NULL;
	peaks_compute(&p, &pk);
	tmp = cJSON_Duplicate(res, 1);
	peaks_judge(tmp, &pk, peaks_declared_dtype(rr_obj(rr_obj(run, "experiment"), "spec"),
						   rr_str(step, "program")), &why);
	roof = cJSON_DetachItemFromObjectCaseSensitive(tmp, "roofline");
	cJSON_Delete(tmp);
	strbuf_release(&why);
	return roof;
}

static int needs_judging(const cJSON *step)
{
	const cJSON *res = rr_result(step);
	return res && !rr_obj(res, "roofline") && (rr_obj(res, "model") || rr_obj(res, "figures"));
}

/* A reference to item under key in o (array: no key): the copy shares it,
 * cJSON_Delete of the copy leaves it alone. */
static void add_ref(cJSON *o, const cJSON *item)
{
	if (cJSON_IsArray(o))
		cJSON_AddItemReferenceToArray(o, (cJSON *)item);
	else
		cJSON_AddItemReferenceToObject(o, item->string, (cJSON *)item);
}

/* The members of o (a step, or its result) copied into a new object: those
 * a judgement changes (peaks_judge: the result, and in it the model, the
 * figures, the kernels, the roofline) deep, the rest (the timing and its
 * samples, the config, the logs) as references. */
static cJSON *copy_for_judging(const cJSON *o, int is_result)
{
	cJSON *c = cJSON_CreateObject();
	const cJSON *m;
	cJSON_ArrayForEach(m, o) {
		const char *k = m->string ? m->string : "";
		if (!is_result && !strcmp(k, "result") && cJSON_IsObject(m))
			cJSON_AddItemToObject(c, k, copy_for_judging(m, 1));
		else if (is_result && (!strcmp(k, "model") || !strcmp(k, "figures") ||
				       !strcmp(k, "roofline") || !strncmp(k, "kernel:", 7)))
			cJSON_AddItemToObject(c, k, cJSON_Duplicate(m, 1));
		else
			add_ref(c, m);
	}
	return c;
}

/* Step s judged against its host's peaks: a copy of it (copy_for_judging),
 * judged, or (nothing to judge) a reference to it. */
static void add_judged_step(cJSON *steps, const cJSON *spec, const cJSON *h, const cJSON *s)
{
	struct gpu_props p;
	struct gpu_peaks pk;
	struct strbuf why = STRBUF_INIT;
	cJSON *sc;
	if (!needs_judging(s) || !peaks_props(rr_obj(rr_result(s), "device"), rr_obj(h, "info"), &p)) {
		add_ref(steps, s);
		return;
	}
	peaks_compute(&p, &pk);
	sc = copy_for_judging(s, 0);
	peaks_judge(cJSON_GetObjectItemCaseSensitive(sc, "result"), &pk,
		    peaks_declared_dtype(spec, rr_str(sc, "program")), &why);
	strbuf_release(&why);
	cJSON_AddItemToArray(steps, sc);
}

cJSON *peaks_judged_copy(const cJSON *run)
{
	const cJSON *h, *s, *m, *x;
	const cJSON *spec = rr_obj(rr_obj(run, "experiment"), "spec");
	cJSON *copy, *hosts;
	int any = 0;

	cJSON_ArrayForEach(h, rr_arr(run, "hosts"))
		cJSON_ArrayForEach(s, rr_arr(h, "steps"))
			any |= needs_judging(s);
	if (!any)
		return NULL;
	/* only the steps judged are copied (a record's samples, logs and
	 * ptxas lines are most of it): everything else is a reference into
	 * run, which must outlive the copy */
	copy = cJSON_CreateObject();
	cJSON_ArrayForEach(m, run) {
		if (!m->string || strcmp(m->string, "hosts") || !cJSON_IsArray(m)) {
			add_ref(copy, m);
			continue;
		}
		hosts = cJSON_AddArrayToObject(copy, "hosts");
		cJSON_ArrayForEach(h, m) {
			cJSON *hc, *steps;
			if (!cJSON_IsObject(h)) {
				add_ref(hosts, h);
				continue;
			}
			hc = cJSON_CreateObject();
			cJSON_AddItemToArray(hosts, hc);
			cJSON_ArrayForEach(x, h) {
				if (!x->string || strcmp(x->string, "steps") || !cJSON_IsArray(x)) {
					add_ref(hc, x);
					continue;
				}
				steps = cJSON_AddArrayToObject(hc, "steps");
				cJSON_ArrayForEach(s, x)
					add_judged_step(steps, spec, h, s);
			}
		}
	}
	return copy;
}
