/* test_gpuslots.c -- unit tests of remote/gpuslots.c: a host's GPU slots
 * from its entry and probe, the slots each step takes, their locks, the
 * command's CUDA_VISIBLE_DEVICES and the spec check against an inventory. */
#include "remote/gpuslots.h"
#include "core/jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

static void probe4(struct host_info *hi)
{
	CHECK(probe_parse_text("hostname=h\nhas_gpu=1\n"
			       "gpu=NVIDIA H100, GPU-0, 9.0, 580.1, 1980, 1980, 2619, 81559\n"
			       "gpu_slot=0, GPU-0, 81559, 1980, NVIDIA H100\n"
			       "gpu_slot=1, GPU-1, 81559, 1980, NVIDIA H100\n"
			       "gpu_slot=2, GPU-2, 81559, 1980, NVIDIA H100\n"
			       "gpu_slot=3, GPU-3, 81559, 1980, NVIDIA H100\ndone=1\n", hi) == 0,
	      "a 4-GPU probe parses", "refused");
}

static void test_every_gpu(void)
{
	struct host h = { .name = (char *)"g" };
	struct host_info hi;
	struct gpuslots g;
	struct strbuf err = STRBUF_INIT;
	char *s;
	int firsts[6], i;

	probe4(&hi);
	CHECK(gpuslots_init(&g, &h, &hi, &err) == GO_OK && g.n == 4, "no \"gpus\": every GPU", "%d", g.n);
	for (i = 0; i < 6; i++)
		firsts[i] = gpuslots_take(&g, 1);
	CHECK(firsts[0] == 0 && firsts[1] == 1 && firsts[2] == 2 && firsts[3] == 3 && firsts[4] == 0 &&
	      firsts[5] == 1, "one-GPU steps go round the slots in plan order", "%d %d %d %d %d %d",
	      firsts[0], firsts[1], firsts[2], firsts[3], firsts[4], firsts[5]);
	/* next is 2: a 2-GPU step takes 2 and 3; a 3-GPU one then wraps to 0 */
	CHECK(gpuslots_take(&g, 2) == 2, "a 2-GPU step takes two neighbours", "other");
	CHECK(gpuslots_take(&g, 3) == 0, "a step that would run past the last slot starts at 0", "other");
	CHECK(gpuslots_take(&g, 5) == -1, "5 GPUs of 4: none", "taken");
	CHECK(gpuslots_take(&g, 0) == -1, "0 GPUs: none", "taken");
	s = gpuslots_locks(&g, 1, 2);
	CHECK(!strcmp(s, "/tmp/gpuorch-gpu-GPU-1.lock:/tmp/gpuorch-gpu-GPU-2.lock"),
	      "the locks, by UUID, ':'-joined, ascending", "%s", s);
	free(s);
	free(g.uuid[1]);
	g.uuid[1] = NULL;
	s = gpuslots_locks(&g, 0, 2);
	CHECK(!strcmp(s, "/tmp/gpuorch-gpu-GPU-0.lock:/tmp/gpuorch-gpu1.lock"),
	      "a GPU of no known UUID: its lock by index", "%s", s);
	free(s);
	g.uuid[1] = xstrdup("GPU/1 x");
	s = gpuslots_locks(&g, 1, 1);
	CHECK(!strcmp(s, "/tmp/gpuorch-gpu-GPU_1_x.lock"), "a UUID's odd characters: '_'", "%s", s);
	free(s);
	s = gpuslots_command(&g, 2, 2, "./bench --n=4");
	CHECK(!strcmp(s, "CUDA_VISIBLE_DEVICES='GPU-2,GPU-3'; export CUDA_VISIBLE_DEVICES; ./bench --n=4"),
	      "CUDA_VISIBLE_DEVICES names the GPUs by UUID", "%s", s);
	free(s);
	{
		cJSON *j = gpuslots_json(&g, 3, 1);
		CHECK(cJSON_GetArraySize(j) == 1 && json_num(cJSON_GetArrayItem(j, 0), "index", -1) == 3 &&
		      !strcmp(json_str(cJSON_GetArrayItem(j, 0), "uuid"), "GPU-3"), "the record's gpus", "wrong");
		cJSON_Delete(j);
	}
	gpuslots_release(&g);
	probe_release(&hi);
	strbuf_release(&err);
}

static void test_listed(void)
{
	struct host h = { .name = (char *)"g", .gpus = { 1, 3 }, .ngpus = 2, .gpu_index = 1 };
	struct host_info hi, none;
	struct gpuslots g;
	struct strbuf err = STRBUF_INIT;
	char *s;

	probe4(&hi);
	CHECK(gpuslots_init(&g, &h, &hi, &err) == GO_OK && g.n == 2 && g.index[0] == 1 &&
	      g.index[1] == 3 && !strcmp(g.uuid[1], "GPU-3"), "\"gpus\": [1, 3] is those two", "%d", g.n);
	gpuslots_release(&g);
	h.gpus[1] = 7;
	CHECK(gpuslots_init(&g, &h, &hi, &err) == GO_ERR_HOSTS &&
	      strstr(err.buf, "host 'g': \"gpus\" lists GPU 7, and the host has GPUs 0, 1, 2, 3"),
	      "a listed GPU the host lacks is an error naming those it has", "%s", err.buf);
	probe_release(&hi);
	/* a probe that lists no GPU (a tool that answers only the one query):
	 * the entry's list is taken as it is, else the probed GPU alone */
	CHECK(probe_parse_text("hostname=h\nhas_gpu=1\n"
			       "gpu=NVIDIA H100, GPU-5, 9.0, 580.1, 1980, 1980, 2619, 81559\ndone=1\n", &none) == 0,
	      "a probe without slots parses", "refused");
	strbuf_reset(&err);
	CHECK(gpuslots_init(&g, &h, &none, &err) == GO_OK && g.n == 2 && g.index[1] == 7 &&
	      !strcmp(g.uuid[0], "GPU-5") && !g.uuid[1], "listed GPUs stand when the probe lists none",
	      "%d", g.n);
	s = gpuslots_command(&g, 0, 2, "x");
	CHECK(!strcmp(s, "CUDA_VISIBLE_DEVICES='1,7'; export CUDA_VISIBLE_DEVICES; x"),
	      "by index when a UUID is not known", "%s", s);
	free(s);
	gpuslots_release(&g);
	h.ngpus = 0;
	h.gpu_index = 0;
	CHECK(gpuslots_init(&g, &h, &none, &err) == GO_OK && g.n == 1 && g.index[0] == 0 &&
	      !strcmp(g.uuid[0], "GPU-5"), "nothing listed anywhere: the probed GPU alone", "%d", g.n);
	gpuslots_release(&g);
	probe_release(&none);
	strbuf_release(&err);
}

static void test_check_spec(void)
{
	struct spec_program prog = { .name = (char *)"p" };
	struct spec_step steps[2] = { { .kind = STEP_BENCHMARK, .program = (char *)"p", .prog = &prog },
				      { .kind = STEP_BENCHMARK, .program = (char *)"p", .prog = &prog, .gpus = 3 } };
	struct spec s = { .steps = steps, .nsteps = 2 };
	struct host v[2] = { { .name = (char *)"a", .gpus = { 0, 1 }, .ngpus = 2 },
			     { .name = (char *)"b", .gpus = { 0 }, .ngpus = 1 } };
	struct hosts hs = { .path = (char *)"hosts.json", .v = v, .n = 2 };
	struct host_slurm sl;
	struct strbuf err = STRBUF_INIT;

	CHECK(gpuslots_check_spec(&s, &hs, &err) == GO_ERR_SPEC &&
	      strstr(err.buf, "steps[1] (benchmark of 'p') asks for \"gpus\": 3, more than any host of "
			      "hosts.json runs steps on (at most 2: host 'a')"),
	      "3 GPUs when the largest host lists 2: refused, naming it", "%s", err.buf);
	v[1].ngpus = 0;
	strbuf_reset(&err);
	CHECK(gpuslots_check_spec(&s, &hs, &err) == GO_OK,
	      "a host that lists no GPUs may have any number: asked at the run", "%s", err.buf);
	v[1].gpus[2] = 2, v[1].ngpus = 3;
	CHECK(gpuslots_check_spec(&s, &hs, &err) == GO_OK, "a host of 3 takes it", "%s", err.buf);
	memset(&sl, 0, sizeof(sl));
	v[0].slurm = &sl;
	v[1].ngpus = 1;
	CHECK(gpuslots_check_spec(&s, &hs, &err) == GO_OK,
	      "a Slurm host: its step job asks Slurm for the GPUs (the SSH host's 1 does not bound it)",
	      "%s", err.buf);
	strbuf_release(&err);
}

int main(void)
{
	test_every_gpu();
	test_listed();
	test_check_spec();
	return check_summary();
}
