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
