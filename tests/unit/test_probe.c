/* test_probe.c -- unit tests of probe.c's pure parts and remote.c's remote_describe. */
#include "remote/probe.h"
#include "remote/remote.h"
#include "core/jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"


static void check_arch(const char *cc, const char *want)
{
	char *got = probe_cc_to_arch(cc);
	char what[128];

	snprintf(what, sizeof(what), "probe_cc_to_arch(%s%s%s) is %s", cc ? "\"" : "",
		 cc ? cc : "NULL", cc ? "\"" : "", want ? want : "NULL");
	if (want)
		CHECK(got && !strcmp(got, want), what, "got %s", got ? got : "NULL");
	else
		CHECK(!got, what, "got %s", got);
	free(got);
}

static void check_model(const char *model, const char *want)
{
	const char *got = probe_model_cc(model);
	char what[160];

	snprintf(what, sizeof(what), "probe_model_cc(\"%s\") is %s", model ? model : "NULL", want ? want : "NULL");
	if (want)
		CHECK(got && !strcmp(got, want), what, "got %s", got ? got : "NULL");
	else
		CHECK(!got, what, "got %s", got);
}

static void test_model_cc(void)
{
	/* names as the driver and nvidia-smi write them */
	check_model("NVIDIA H100 80GB HBM3", "9.0");
	check_model("NVIDIA H100 PCIe", "9.0");
	check_model("NVIDIA H200", "9.0");
	check_model("NVIDIA GH200 480GB", "9.0");
	check_model("NVIDIA H20", "9.0");
	check_model("NVIDIA A100-SXM4-80GB", "8.0");
	check_model("NVIDIA A100 80GB PCIe", "8.0");
	check_model("NVIDIA A10", "8.6");         /* not A100's 8.0: whole words */
	check_model("NVIDIA A10G", "8.6");
	check_model("NVIDIA L4", "8.9");
	check_model("NVIDIA L40S", "8.9");
	check_model("Tesla T4", "7.5");
	check_model("Tesla V100-SXM2-16GB", "7.0");
	check_model("NVIDIA B200", "10.0");
	check_model("  NVIDIA_L4 ", "8.9");      /* blanks and '_' split words too */
	/* not a whole word, another case, or not in the table */
	check_model("NVIDIA H1000", NULL);
	check_model("NVIDIA XH100", NULL);
	check_model("NVIDIA h100", NULL);
	check_model("NVIDIA GeForce RTX 4090", NULL);
	check_model("Quadro RTX 6000", NULL);
	check_model("", NULL);
	check_model("-", NULL);
	check_model(NULL, NULL);
}

static void check_describe(enum remote_end end, int code, int sig, const char *want)
{
	struct remote_status st = { end, code, sig };
	struct strbuf sb = STRBUF_INIT;
	char what[128];

	remote_describe(&st, &sb);
	snprintf(what, sizeof(what), "remote_describe gives \"%s\"", want);
	CHECK(!strcmp(sb.buf, want), what, "got \"%s\"", sb.buf);
	strbuf_release(&sb);
}

static void test_json_gpu(void)
{
	struct host_info hi;
	cJSON *j;

	memset(&hi, 0, sizeof(hi));
	hi.hostname = "gpu1";
	hi.kernel = "Linux 6.8.0";
	hi.has_gpu = 1;
	hi.gpu_name = "NVIDIA H100 80GB HBM3";
	hi.gpu_uuid = "GPU-1234";
	hi.compute_cap = "9.0";
	hi.driver = "580.159.04";
	hi.sm_clock_mhz = 1980;
	hi.max_sm_clock_mhz = 1980;
	hi.mem_clock_mhz = 2619;
	hi.gpu_mem_mib = 81559;
	hi.nvcc.path = "/usr/local/cuda/bin/nvcc";
	hi.nvcc.version = "13.0.88";
	hi.torch_version = "2.11.0";
	hi.disk_free_kib = 123;
	j = probe_to_json(&hi);
	CHECK(j != NULL, "probe_to_json returns an object", "NULL");
	if (!j)
		return;
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(j, "has_gpu")), "has_gpu is true", "not true");
	CHECK(json_str(j, "arch") && !strcmp(json_str(j, "arch"), "sm_90"), "arch derived from 9.0",
	      "%s", json_str(j, "arch") ? json_str(j, "arch") : "NULL");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "gpu_reason")), "gpu_reason null with a GPU", "not null");
	CHECK(json_num(j, "gpu_mem_mib", 0) == 81559, "gpu_mem_mib", "%g", json_num(j, "gpu_mem_mib", 0));
	CHECK(json_num(j, "sm_clock_mhz", 0) == 1980, "sm_clock_mhz", "%g", json_num(j, "sm_clock_mhz", 0));
	CHECK(json_path(j, "nvcc.version") && !strcmp(json_path(j, "nvcc.version")->valuestring, "13.0.88"),
	      "nvcc.version", "wrong");
	CHECK(cJSON_IsNull(json_path(j, "ncu.path")), "ncu.path null when not found", "not null");
	CHECK(json_str(j, "torch") && !strcmp(json_str(j, "torch"), "2.11.0"), "torch version", "wrong");
	CHECK(json_num(j, "disk_free_kib", 0) == 123, "disk_free_kib", "wrong");
	cJSON_Delete(j);
}

static void test_json_nogpu(void)
{
	struct host_info hi;
	cJSON *j;

	memset(&hi, 0, sizeof(hi));
	hi.hostname = "ci";
	hi.has_gpu = 0;
	hi.gpu_reason = "nvidia-smi: not found";
	hi.compute_cap = "9.0";   /* ignored without a GPU */
	hi.disk_free_kib = -1;
	j = probe_to_json(&hi);
	CHECK(j && cJSON_IsFalse(cJSON_GetObjectItem(j, "has_gpu")), "has_gpu is false", "not false");
	if (!j)
		return;
	CHECK(json_str(j, "gpu_reason") && strstr(json_str(j, "gpu_reason"), "not found"),
	      "gpu_reason kept", "missing");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "arch")), "no arch without a GPU", "not null");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "compute_cap")), "no compute_cap without a GPU", "not null");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "sm_clock_mhz")), "clocks null without a GPU", "not null");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "disk_free_kib")), "unknown disk space is null", "not null");
	cJSON_Delete(j);
}

/* A probe that answered first: its output names where the rest will be
 * (later=); the rest, merged, fills the tools and clears later. */
static void test_merge_later(void)
{
	const char *now =
		"hostname=gpu1\nkernel=Linux 6.8\nhome=/home/u\nsig=probe-v1|b|0|||\n"
		"has_gpu=1\ngpu=NVIDIA H100 80GB HBM3, GPU-1, 9.0, 580.1, 1980, 1980, 2619, 81559\n"
		"nvcc_path=/usr/local/cuda/bin/nvcc\n"
		"nvcc_version=Cuda compilation tools, release 13.0, V13.0.88 Build cuda_13.0\n"
		"ncu_path=/usr/local/cuda/bin/ncu\npython_path=/usr/bin/python3\n"
		"later=/home/u/.cache/gpuorch/probe-0.4242\nprobe_cached=0\ncores=16\ndone=1\n";
	const char *rest = "ncu_version=Version 2025.3.1.0 (build 1) (public-release)\n"
			   "python_version=Python 3.12.3\ntorch=2.11.0\n";
	struct host_info hi;

	CHECK(probe_parse_text(now, &hi) == 0, "a first answer with later= is a whole probe", "refused");
	CHECK(hi.later && !strcmp(hi.later, "/home/u/.cache/gpuorch/probe-0.4242"),
	      "later names the file prefix", "%s", hi.later ? hi.later : "NULL");
	CHECK(hi.ncu.path && !hi.ncu.version && hi.python.path && !hi.torch_version,
	      "paths are in the first answer, versions not yet", "ncu %s", hi.ncu.version ? hi.ncu.version : "-");
	probe_merge_later(&hi, rest);
	CHECK(!hi.later, "merging clears later", "%s", hi.later ? hi.later : "");
	CHECK(hi.ncu.version && !strcmp(hi.ncu.version, "2025.3.1.0") && hi.python.version &&
	      !strcmp(hi.python.version, "3.12.3") && hi.torch_version && !strcmp(hi.torch_version, "2.11.0"),
	      "the rest fills ncu, python and torch", "ncu %s", hi.ncu.version ? hi.ncu.version : "NULL");
	CHECK(hi.gpu_name && !strcmp(hi.gpu_name, "NVIDIA H100 80GB HBM3") && hi.nvcc.version &&
	      !strcmp(hi.nvcc.version, "13.0.88") && hi.ncores == 16,
	      "what the first answer gave stays", "gpu %s", hi.gpu_name ? hi.gpu_name : "NULL");
	probe_release(&hi);
}

/* A first answer that named the GPU from the driver's /proc files: a GPU,
 * its model (blanks trimmed), UUID and driver; no compute capability until
 * nvidia-smi's answer is merged, which then has the last word. */
static void check_proc_driver(const char *line, const char *want)
{
	struct strbuf t = STRBUF_INIT;
	struct host_info hi;
	char what[160];

	strbuf_addf(&t, "hostname=g\ngpu_proc_name= \t NVIDIA L4\ngpu_proc_driver=%s\ndone=1\n", line);
	snprintf(what, sizeof(what), "the driver of '%.60s' is %s", line, want ? want : "unknown");
	if (probe_parse_text(t.buf, &hi) == 0) {
		if (want)
			CHECK(hi.driver && !strcmp(hi.driver, want), what, "got %s", hi.driver ? hi.driver : "NULL");
		else
			CHECK(!hi.driver, what, "got %s", hi.driver);
		probe_release(&hi);
	} else {
		CHECK(0, what, "the answer was refused");
	}
	strbuf_release(&t);
}

static void test_proc_gpu(void)
{
	const char *now = "hostname=gpu1\nsig=s\ngpu_proc_name=\t\t NVIDIA H100 80GB HBM3\n"
			  "gpu_proc_uuid= \tGPU-1\n"
			  "gpu_proc_driver=NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  "
			  "Release Build  (dvs-builder@U16-I3)  Thu Jul 10 21:06:00 UTC 2025\n"
			  "later=/h/.cache/gpuorch/probe-0.1\ndone=1\n";
	struct host_info hi;

	CHECK(probe_parse_text(now, &hi) == 0, "a first answer naming the GPU from /proc is whole", "refused");
	CHECK(hi.has_gpu && !hi.smi_answered && hi.gpu_name && !strcmp(hi.gpu_name, "NVIDIA H100 80GB HBM3") &&
	      hi.gpu_uuid && !strcmp(hi.gpu_uuid, "GPU-1") && hi.driver && !strcmp(hi.driver, "580.159.04") &&
	      !hi.compute_cap,
	      "the GPU as /proc names it: model and UUID trimmed, the driver's version, no compute capability yet",
	      "gpu '%s' uuid '%s' driver '%s'", hi.gpu_name ? hi.gpu_name : "NULL",
	      hi.gpu_uuid ? hi.gpu_uuid : "NULL", hi.driver ? hi.driver : "NULL");
	probe_merge_later(&hi, "has_gpu=1\ngpu=NVIDIA H100 80GB HBM3, GPU-1, 9.0, 580.159.04, 1980, 1980, 2619, 81559\n");
	CHECK(hi.has_gpu && hi.smi_answered && hi.compute_cap && !strcmp(hi.compute_cap, "9.0") &&
	      hi.sm_clock_mhz == 1980 && hi.gpu_mem_mib == 81559,
	      "nvidia-smi's answer, merged, fills the compute capability, clocks and memory", "cc %s",
	      hi.compute_cap ? hi.compute_cap : "NULL");
	probe_release(&hi);

	CHECK(probe_parse_text(now, &hi) == 0, "the same first answer again", "refused");
	probe_merge_later(&hi, "has_gpu=0\ngpu_reason=/usr/bin/nvidia-smi failed (exit 9): no devices\n");
	CHECK(!hi.has_gpu && hi.gpu_reason && strstr(hi.gpu_reason, "exit 9"),
	      "nvidia-smi failing afterwards has the last word", "has_gpu %d", hi.has_gpu);
	probe_release(&hi);

	CHECK(probe_parse_text("hostname=g\ngpu_proc_name=NVIDIA L4\nhas_gpu=0\n"
			       "gpu_reason=nvidia-smi: not found\ndone=1\n", &hi) == 0 && !hi.has_gpu,
	      "a cached probe with nvidia-smi's 'no GPU' is not overruled by /proc", "has_gpu %d", hi.has_gpu);
	probe_release(&hi);

	check_proc_driver("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release Build", "535.104.05");
	check_proc_driver("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Release Build", "580.159.04");
	check_proc_driver("NVRM version: something else", NULL);
	check_proc_driver("", NULL);
}

/* Every GPU of the host: nvidia-smi's list (gpu_slot), the /proc view
 * (gpu_proc_slot) until it, a line that is no slot ignored. */
static void test_slots(void)
{
	const char *text =
		"hostname=gpu4\nkernel=Linux 6.8\nhome=/home/u\n"
		"gpu_proc_name=NVIDIA H100 80GB HBM3\ngpu_proc_uuid=GPU-0\n"
		"gpu_proc_slot=0, GPU-0, , , NVIDIA H100 80GB HBM3\n"
		"gpu_proc_slot=1, GPU-1, , , NVIDIA H100 80GB HBM3\n"
		"has_gpu=1\ngpu=NVIDIA H100 80GB HBM3, GPU-0, 9.0, 580.1, 1980, 1980, 2619, 81559\n"
		"gpu_slot=NVIDIA H100 80GB HBM3, GPU-0, 9.0, 580.1, 1980, 1980, 2619, 81559\n"
		"gpu_slot=0, GPU-0, 81559, 1980, NVIDIA H100 80GB HBM3\n"
		"gpu_slot=1, GPU-1, 81559, 1980, NVIDIA H100, with a comma\n"
		"gpu_slot=x1, GPU-9, 1, 1, bad index\n"
		"gpu_slot=3, GPU-3, 40000, 1410, NVIDIA A100-SXM4-40GB\n"
		"done=1\n";
	struct host_info hi;
	cJSON *j, *g;

	CHECK(probe_parse_text(text, &hi) == 0, "a probe with slots parses", "refused");
	CHECK(hi.nslots == 3 && !hi.slots_from_proc, "nvidia-smi's 3 slots replace the 2 from /proc; "
	      "lines with no whole index are none", "%d slots, from proc %d", hi.nslots, hi.slots_from_proc);
	if (hi.nslots == 3) {
		CHECK(hi.slots[0].index == 0 && !strcmp(hi.slots[0].uuid, "GPU-0") &&
		      hi.slots[0].mem_mib == 81559 && hi.slots[0].max_sm_clock_mhz == 1980,
		      "slot 0's fields", "index %d", hi.slots[0].index);
		CHECK(!strcmp(hi.slots[1].name, "NVIDIA H100, with a comma"),
		      "the name is the last field, commas and all", "%s", hi.slots[1].name);
		CHECK(hi.slots[2].index == 3 && !strcmp(hi.slots[2].uuid, "GPU-3"),
		      "a gap in the indices is kept", "index %d", hi.slots[2].index);
	}
	j = probe_to_json(&hi);
	g = j ? cJSON_GetObjectItem(j, "gpus") : NULL;
	CHECK(cJSON_GetArraySize(g) == 3 && json_str(cJSON_GetArrayItem(g, 2), "uuid") &&
	      !strcmp(json_str(cJSON_GetArrayItem(g, 2), "uuid"), "GPU-3"),
	      "info.gpus lists the slots", "%d", cJSON_GetArraySize(g));
	cJSON_Delete(j);
	probe_release(&hi);
	CHECK(!hi.slots && !hi.nslots, "probe_release frees the slots", "not cleared");

	CHECK(probe_parse_text("hostname=h\ngpu_proc_name=NVIDIA H100\n"
			       "gpu_proc_slot=0, GPU-a, , , NVIDIA H100\n"
			       "gpu_proc_slot=1, GPU-b, , , NVIDIA H100\ndone=1\n", &hi) == 0,
	      "a /proc-only probe parses", "refused");
	CHECK(hi.nslots == 2 && hi.slots_from_proc && hi.slots[1].mem_mib == 0 &&
	      !strcmp(hi.slots[1].uuid, "GPU-b"), "the /proc slots stand until nvidia-smi answers",
	      "%d", hi.nslots);
	probe_merge_later(&hi, "has_gpu=1\ngpu_slot=0, GPU-a, 81559, 1980, NVIDIA H100\n");
	CHECK(hi.nslots == 1 && !hi.slots_from_proc && hi.slots[0].mem_mib == 81559,
	      "nvidia-smi's later list replaces them", "%d", hi.nslots);
	probe_release(&hi);
}

int main(void)
{
	check_arch("9.0", "sm_90");
	check_arch("8.9", "sm_89");
	check_arch("8.0", "sm_80");
	check_arch("10.0", "sm_100");
	check_arch("12.0", "sm_120");
	check_arch("7.5", "sm_75");
	check_arch(NULL, NULL);
	check_arch("", NULL);
	check_arch("9", NULL);
	check_arch("9.", NULL);
	check_arch(".9", NULL);
	check_arch("[N/A]", NULL);
	check_arch("9.0a", NULL);

	check_describe(REMOTE_EXITED, 0, 0, "exit 0");
	check_describe(REMOTE_EXITED, 3, 0, "exit 3");
	check_describe(REMOTE_SIGNALED, 137, 9, "signal 9 (KILL)");
	check_describe(REMOTE_SIGNALED, 139, 11, "signal 11 (SEGV)");
	check_describe(REMOTE_SIGNALED, 0, 64, "signal 64");
	check_describe(REMOTE_TIMED_OUT, 124, 0, "timeout");
	check_describe(REMOTE_LOCK_TIMEOUT, 75, 0, "lock timeout");
	check_describe(REMOTE_VANISHED, 0, 0, "vanished");
	check_describe(REMOTE_RUNNING, 0, 0, "running");

	test_json_gpu();
	test_json_nogpu();
	test_merge_later();
	test_proc_gpu();
	test_model_cc();
	test_slots();

	/* probe_release on a zeroed struct and twice in a row is safe */
	{
		struct host_info hi;
		memset(&hi, 0, sizeof(hi));
		hi.hostname = xstrdup("x");
		hi.nvcc.path = xstrdup("/p");
		probe_release(&hi);
		probe_release(&hi);
		CHECK(hi.hostname == NULL && hi.nvcc.path == NULL, "probe_release frees and clears", "not cleared");
	}
	return check_summary();
}
