/* test_runwrite.c -- unit tests of store/runwrite*.c, the run record's one writer: the keys it writes, in their order, and its lock. */
#include "store/runwrite.h"
#include "store/runkeys.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"

static char tmp[] = "/tmp/test_runwrite.XXXXXX";

/* The keys of object o, in order, joined by commas (to free). */
static char *keys(const cJSON *o)
{
	struct strbuf sb = STRBUF_INIT;
	const cJSON *k;
	cJSON_ArrayForEach(k, o)
		strbuf_addf(&sb, "%s%s", sb.len ? "," : "", k->string);
	return strbuf_detach(&sb, NULL);
}

/* 1 when keys(o) is want; prints what it was otherwise. */
static int keys_are(const cJSON *o, const char *want)
{
	char *got = keys(o);
	int ok = !strcmp(got, want);
	if (!ok)
		printf("# keys: %s\n#  want: %s\n", got, want);
	free(got);
	return ok;
}

/* The lock is free again (every call takes and leaves it). */
static int unlocked(struct record *r)
{
	if (pthread_mutex_trylock(&r->lock))
		return 0;
	pthread_mutex_unlock(&r->lock);
	return 1;
}

static const cJSON *host(struct record *r, int i)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItem(r->root, RK_HOSTS), i);
}

static void open_run(struct record *r, const char *dir, const cJSON *old)
{
	cJSON *spec = cJSON_Parse("{\"name\": \"e\"}");
	struct git_info gi;
	struct runw_head h = { .run_id = "R1", .command_line = "gpuorch run e.json", .started = 0,
			       .old = old, .name = "e", .slug = "e", .phase = "p",
			       .description = NULL, .spec_path = "e.json", .spec_sha256 = "ab",
			       .spec = spec };
	struct runw_provenance p = { .gi = &gi, .commit = NULL, .wrote_diff = 0,
				     .content_id = "cid", .archive_bytes = 10, .files = NULL };
	struct runw_host_id a = { "a", "127.0.0.1", "u", 22 }, b = { "b", "127.0.0.2", "u", 2222 };

	memset(&gi, 0, sizeof(gi));
	runw_open(r, dir, &h);
	runw_provenance(r, &p);
	runw_hosts_begin(r);
	runw_host_add(r, &a);
	runw_host_add(r, &b);
	runw_spec_lists(r, NULL, NULL, NULL);
	cJSON_Delete(spec);
}

static void head_tests(const char *dir)
{
	struct record r;
	cJSON *old = cJSON_Parse("{\"started_at\": \"2026-01-01T00:00:00Z\", \"resumed_at\": [\"x\"]}");

	open_run(&r, dir, NULL);
	CHECK(keys_are(r.root, "schema,run_id,status,outcome,exit_code,command_line,dry_run,"
			       "started_at,ended_at,duration_s,experiment,provenance,hosts,"
			       "baselines,references,expected"),
	      "the head's keys, in run-open's order", "see above");
	CHECK(!strcmp(json_str(r.root, RK_STATUS), "running") &&
	      !strcmp(json_str(r.root, RK_STARTED_AT), "1970-01-01T00:00:00Z") &&
	      cJSON_IsNull(cJSON_GetObjectItem(r.root, RK_OUTCOME)),
	      "running, started at the given time, no outcome yet", "%s", json_str(r.root, RK_STATUS));
	CHECK(keys_are(json_path(r.root, "provenance"), "gpuorch_version,source,git,content_id,"
			       "archive_bytes,files,controller") &&
	      keys_are(json_path(r.root, "provenance.git"), "commit,dirty,diff_sha256,diff_file,note,branch"),
	      "provenance: not a git repository, with its note", "see above");
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.root, RK_HOSTS)) == 2 &&
	      keys_are(host(&r, 1), "name,address,port,user,status,started_at,ended_at,error,info,"
			       "archs,phases,ship,runner,builds,steps") &&
	      json_num(host(&r, 1), "port", 0) == 2222 &&
	      !strcmp(json_str(host(&r, 1), RK_STATUS), "pending"),
	      "two hosts pending, in order, every key there", "see above");
	CHECK(unlocked(&r), "the lock is free after the head", "held");
	record_release(&r);

	open_run(&r, dir, old);
	CHECK(!strcmp(json_str(r.root, RK_STARTED_AT), "2026-01-01T00:00:00Z") &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(r.root, RK_RESUMED_AT)) == 2 &&
	      !strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(r.root, RK_RESUMED_AT), 0)->valuestring, "x"),
	      "--resume keeps the first start and adds this controller to resumed_at", "see above");
	record_release(&r);
	cJSON_Delete(old);
}

static void host_tests(const char *dir)
{
	struct record r;
	struct runw_ship sh = { 100, 0, "/w/content/c", 0, 3, 7, 9.5 };
	char *archs[] = { "sm_90a", "sm_89" };
	struct runw_info in = { cJSON_Parse("{\"arch\": \"sm_90\", \"gpu_name\": \"H100\"}"),
				"sm_90a", "/w", NULL, archs, 2 };
	const cJSON *h, *ph;

	open_run(&r, dir, NULL);
	runw_host_stamp(&r, 0, RUNW_STARTED, 86400);
	runw_host_status(&r, 0, HOST_FAILED);
	runw_host_error(&r, 0, "lost");
	runw_host_phase(&r, 0, "ship", ST_PASS, 1.5, "sent");
	runw_host_phase(&r, 0, "build", ST_FAIL, 0, NULL);
	runw_host_ship(&r, 0, &sh);
	runw_host_info(&r, 0, &in);
	runw_host_runner(&r, 0, "agent");
	runw_host_address(&r, 0, "10.0.0.1");
	runw_host_instance(&r, 0, cJSON_CreateObject());
	h = host(&r, 0);
	CHECK(!strcmp(json_str(h, RK_STARTED_AT), "1970-01-02T00:00:00Z") &&
	      !strcmp(json_str(h, RK_STATUS), "failed") && !strcmp(json_str(h, RK_ERROR), "lost"),
	      "stamp, status and error set in place", "%s", json_str(h, RK_STATUS));
	ph = cJSON_GetArrayItem(cJSON_GetObjectItem(h, RK_PHASES), 1);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(h, RK_PHASES)) == 2 &&
	      keys_are(ph, "name,status,duration_s,detail") && !strcmp(json_str(ph, "status"), "FAIL") &&
	      cJSON_IsNull(cJSON_GetObjectItem(ph, "detail")),
	      "phases appended in order, a NULL detail is null", "see above");
	CHECK(keys_are(cJSON_GetObjectItem(h, RK_SHIP), "bytes_sent,reused,remote_dir,files_sent,"
			       "files,agent_source_bytes"),
	      "ship: no upload_s when no file was sent", "see above");
	sh.files_sent = 2;
	runw_host_ship(&r, 0, &sh);
	CHECK(json_num(cJSON_GetObjectItem(h, RK_SHIP), "upload_s", 0) == 9.5,
	      "ship: upload_s when files were sent", "see above");
	CHECK(!strcmp(json_str(cJSON_GetObjectItem(h, RK_INFO), "arch"), "sm_90a") &&
	      keys_are(cJSON_GetObjectItem(h, RK_INFO), "gpu_name,arch,workdir") &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(h, RK_ARCHS)) == 2,
	      "info: the arch the steps run on, the work directory; no role when none", "see above");
	CHECK(keys_are(h, "name,address,port,user,status,started_at,ended_at,error,info,archs,"
			  "phases,ship,runner,builds,steps,instance") &&
	      !strcmp(json_str(h, RK_ADDRESS), "10.0.0.1") && !strcmp(json_str(h, RK_RUNNER), "agent"),
	      "address replaced in place, instance added last", "see above");
	runw_host_error(&r, 0, NULL);
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(h, RK_ERROR)), "a NULL error is null", "not null");
	CHECK(!strcmp(json_str(host(&r, 1), RK_STATUS), "pending") &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(host(&r, 1), RK_PHASES)) == 0,
	      "the other host's entry is untouched", "see above");
	runw_host_scheduler(&r, 1, &(struct runw_scheduler){ "http://x", "v0.0.41", "24.05", "gpu",
							      NULL, "env", 4, 10, 0 });
	runw_sched_job(&r, 1, "build-k", 41, 1, 0);
	runw_sched_job(&r, 1, "step-k", 42, 2, 1);
	runw_sched_job_pending(&r, 1, 42, "Resources");
	runw_sched_counts(&r, 1, 17, 1);
	h = host(&r, 1);
	CHECK(keys_are(cJSON_GetArrayItem(json_path(h, "scheduler.jobs"), 0), "name,job_id") &&
	      keys_are(cJSON_GetArrayItem(json_path(h, "scheduler.jobs"), 1),
		       "name,job_id,attempt,resumed,pending_reason") &&
	      json_num(json_path(h, "scheduler"), "rest_requests", 0) == 17 &&
	      !strcmp(json_str(cJSON_GetArrayItem(json_path(h, "scheduler.jobs"), 1), "pending_reason"),
		      "Resources"),
	      "scheduler: jobs (attempt only past the first, resumed when adopted), pending, counts",
	      "see above");
	CHECK(unlocked(&r), "the lock is free after every host call", "held");
	record_release(&r);
}

static void step_tests(const char *dir)
{
	struct record r;
	struct runw_define d[] = { { "TILE", "64" } };
	struct runw_step s = { .id = "benchmark.k.P[TILE=64]", .kind = STEP_BENCHMARK,
			       .program = "k", .problem = "P", .mode = "bench", .variant = "TILE=64",
			       .defines = d, .ndefines = 1, .arch = "sm_90a", .status = ST_TIMEOUT,
			       .reason = "killed", .signaled = 1, .signal = 9, .t_start = 100,
			       .t_end = 102.5, .timeout_s = 2, .command = "./k",
			       .stdout_log = "logs/a/o", .stderr_log = NULL,
			       .files = cJSON_Parse("{\"ncu_report\": \"x.ncu-rep\"}"),
			       .slurm = cJSON_CreateObject() };
	struct runw_step s0 = { .id = "correctness.k.P", .kind = STEP_CORRECTNESS, .program = "k",
				.problem = "P", .mode = "check", .tool = NULL, .arch = "sm_90a",
				.baseline = 1, .status = ST_SKIPPED, .reason = "" };
	const cJSON *steps, *e;

	open_run(&r, dir, NULL);
	runw_step_end(&r, 0, &s);
	runw_step_end_at(&r, 0, 0, &s0);
	steps = cJSON_GetObjectItem(host(&r, 0), RK_STEPS);
	e = cJSON_GetArrayItem(steps, 1);
	CHECK(cJSON_GetArraySize(steps) == 2 && !strcmp(json_str(cJSON_GetArrayItem(steps, 0), "id"),
							"correctness.k.P"),
	      "end_at puts a step at its plan position", "%d", cJSON_GetArraySize(steps));
	CHECK(keys_are(e, "id,kind,program,problem,mode,variant,defines,arch,role,status,reason,"
			  "exit_code,signal,duration_s,ended_unix_s,started_unix_s,timeout_s,command,"
			  "stdout_log,stderr_log,result,ncu_report,slurm"),
	      "a step's keys in hostrun's order: tool files, then its Slurm job, last", "see above");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(e, RK_EXIT_CODE)) && json_num(e, "signal", 0) == 9 &&
	      json_num(e, RK_DURATION_S, 0) == 2.5 && !strcmp(json_str(e, "status"), "TIMEOUT") &&
	      !strcmp(json_str(json_path(e, "defines"), "TILE"), "64"),
	      "signal, no exit code; duration from its span; the variant's defines", "see above");
	e = cJSON_GetArrayItem(steps, 0);
	CHECK(keys_are(e, "id,kind,program,problem,mode,arch,role,status,reason,exit_code,signal,"
			  "duration_s,timeout_s,command,stdout_log,stderr_log,result") &&
	      !strcmp(json_str(e, "role"), "baseline") && cJSON_IsNull(cJSON_GetObjectItem(e, "reason")),
	      "a step that did not run: no span, an empty reason is null, a baseline's role",
	      "see above");
	CHECK(!s.files && !s.slurm && !s.result, "the step's parts are taken over", "left");
	CHECK(unlocked(&r), "the lock is free after the steps", "held");
	record_release(&r);
}

static void build_tests(const char *dir)
{
	struct record r;
	struct runw_define d[] = { { "TILE", "64" }, { "STAGES", "2" } };
	struct runw_build b = { .program = "k", .variant = "TILE=64,STAGES=2", .defines = d,
				.ndefines = 2, .arch = "sm_90a", .status = ST_PASS, .reused = 0,
				.build_key = "abc", .same_build_as = "k[TILE=32]", .duration_s = 3,
				.command = "nvcc ...", .exit_code = 0, .log = "logs/a/b.log",
				.resources = cJSON_CreateArray(), .with_objects = 1,
				.objects_reused = 1, .objects_compiled = 2 };
	struct runw_build skipped = { .program = "k", .arch = "sm_89", .status = ST_SKIPPED,
				      .reason = "not built", .build_key = "def", .exit_code = -1 };
	cJSON *e1 = runw_build_entry(&b), *e0 = runw_build_entry(&skipped);
	const cJSON *builds;

	CHECK(keys_are(e1, "program,variant,defines,arch,status,reason,reused,build_key,"
			   "same_build_as,duration_s,command,exit_code,log,resources,"
			   "objects_reused,objects_compiled") &&
	      !strcmp(runw_build_status(e1), "PASS") && !runw_build_reused(e1) &&
	      !runw_build_reason(e1) && !b.resources,
	      "a build that ran: hostrun's keys in order, its objects last; resources taken over",
	      "see above");
	CHECK(keys_are(e0, "program,arch,status,reason,reused,build_key,duration_s,command,"
			   "exit_code,log,resources") &&
	      cJSON_IsNull(cJSON_GetObjectItem(e0, RK_EXIT_CODE)) &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(e0, "resources")) == 0 &&
	      !strcmp(runw_build_reason(e0), "not built"),
	      "a build skipped: no exit code (null), no resources ([]), its reason", "see above");
	open_run(&r, dir, NULL);
	runw_host_build(&r, 0, e1);
	runw_host_build_at(&r, 0, 0, e0, cJSON_CreateObject());
	builds = cJSON_GetObjectItem(host(&r, 0), RK_BUILDS);
	CHECK(cJSON_GetArraySize(builds) == 2 &&
	      !strcmp(json_str(cJSON_GetArrayItem(builds, 0), "arch"), "sm_89") &&
	      cJSON_GetObjectItem(cJSON_GetArrayItem(builds, 0), "slurm") &&
	      !strcmp(cJSON_GetArrayItem(builds, 0)->child->prev->string, "slurm"),
	      "builds appended, or at a position with their Slurm job last", "see above");
	CHECK(unlocked(&r), "the lock is free after the builds", "held");
	record_release(&r);
}

static void slurm_tests(void)
{
	struct runw_slurm_job j = { .last = { 42, "COMPLETED", NULL, "n1", 100, 103, 110, "/w/s" },
				    .runner = "gpuorch-agent", .is_build = 1 };
	cJSON *o = runw_slurm_job(&j), *a;

	CHECK(keys_are(o, "job_id,state,reason,node,queue_wait_s,run_s,submit_unix_s,start_unix_s,"
			  "end_unix_s,dependency_requested,dependency,pending_reason,rundir,requeued,"
			  "runner") &&
	      json_num(o, "queue_wait_s", 0) == 3 && json_num(o, "run_s", 0) == 7 &&
	      cJSON_IsNull(cJSON_GetObjectItem(o, "reason")),
	      "a build job's facts: its waits from its times, no GPUs, no attempts", "see above");
	cJSON_Delete(o);
	j.last.start_unix_s = 0;
	j.is_build = 0;
	j.requeued = 1;
	o = runw_slurm_job(&j);
	a = cJSON_GetObjectItem(o, "attempts");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "queue_wait_s")) &&
	      cJSON_IsNull(cJSON_GetObjectItem(o, "run_s")) &&
	      cJSON_GetObjectItem(o, "cuda_visible_devices") && cJSON_GetArraySize(a) == 2 &&
	      keys_are(cJSON_GetArrayItem(a, 0), "job_id") &&
	      cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "job_id")) &&
	      keys_are(cJSON_GetArrayItem(a, 1), "job_id,state,reason,node"),
	      "a requeued step job never started: null waits, its GPUs, the first attempt unknown",
	      "see above");
	cJSON_Delete(o);
	j.first_known = 1;
	j.first = (struct runw_job_try){ 41, "NODE_FAIL", "NodeDown", "n0", 90, 91, 95, "/w/s.1" };
	o = runw_slurm_job(&j);
	a = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "attempts"), 0);
	CHECK(keys_are(a, "job_id,state,reason,node,submit_unix_s,start_unix_s,end_unix_s,rundir") &&
	      json_num(a, "job_id", 0) == 41 && !strcmp(json_str(a, "rundir"), "/w/s.1"),
	      "the first attempt known: all of it, first", "see above");
	cJSON_Delete(o);
}

static void end_tests(const char *dir)
{
	struct record r;
	struct runw_end e = { RUN_INCOMPLETE, 0, OUTCOME_PASSED, 130, 60, 1.25 };
	double total = 1.5;

	open_run(&r, dir, NULL);
	runw_end(&r, &e);
	CHECK(!strcmp(json_str(r.root, RK_STATUS), "incomplete") &&
	      cJSON_IsNull(cJSON_GetObjectItem(r.root, RK_OUTCOME)) &&
	      json_num(r.root, RK_EXIT_CODE, 0) == 130 &&
	      !strcmp(json_str(r.root, RK_ENDED_AT), "1970-01-01T00:01:00Z") &&
	      json_num(r.root, RK_DURATION_S, 0) == 1.25,
	      "an interrupted run: incomplete, no outcome, its exit code and times", "see above");
	e.status = RUN_COMPLETE;
	e.with_outcome = 1;
	e.outcome = OUTCOME_FAILED;
	runw_end(&r, &e);
	CHECK(!strcmp(json_str(r.root, RK_OUTCOME), "failed"), "a finished run's outcome", "%s",
	      json_str(r.root, RK_OUTCOME));
	CHECK(runw_pool_sweeps(&r) == NULL && !cJSON_GetObjectItem(r.root, RK_POOL_SWEEPS),
	      "no pool sweep: no pool_sweeps key", "present");
	runw_instances(&r, cJSON_CreateObject(), NULL);
	CHECK(cJSON_GetObjectItem(json_path(r.root, "provenance"), RK_INSTANCES) &&
	      !cJSON_GetObjectItem(json_path(r.root, "provenance"), RK_INSTANCES_COST_TOTAL),
	      "no instance: instances, no total", "see above");
	runw_notify(&r, cJSON_CreateObject());
	runw_notify(&r, cJSON_CreateString("second"));
	CHECK(!strcmp(json_str(r.root, RK_NOTIFY), "second") &&
	      !strcmp(cJSON_GetArrayItem(r.root, cJSON_GetArraySize(r.root) - 1)->string, RK_NOTIFY),
	      "notify replaced, once, last", "see above");
	record_release(&r);
	open_run(&r, dir, NULL);
	runw_instances(&r, cJSON_CreateObject(), &total);
	CHECK(json_num(json_path(r.root, "provenance"), RK_INSTANCES_COST_TOTAL, 0) == 1.5,
	      "instances with their total", "see above");
	CHECK(unlocked(&r), "the lock is free after the end", "held");
	record_release(&r);
}

struct writer {
	struct record *r;
	int host;
};

static void *write_phases(void *arg)
{
	struct writer *w = arg;
	int i;
	for (i = 0; i < 300; i++) {
		runw_host_phase(w->r, w->host, "p", ST_PASS, i, NULL);
		runw_host_status(w->r, w->host, i % 2 ? HOST_OK : HOST_FAILED);
	}
	return NULL;
}

/* Two host threads at once, each on its own entry (the lock is the writer's). */
static void thread_tests(const char *dir)
{
	struct record r;
	struct writer w[2];
	pthread_t t[2];
	int i;

	open_run(&r, dir, NULL);
	for (i = 0; i < 2; i++) {
		w[i].r = &r;
		w[i].host = i;
		pthread_create(&t[i], NULL, write_phases, &w[i]);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(host(&r, 0), RK_PHASES)) == 300 &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(host(&r, 1), RK_PHASES)) == 300 &&
	      !strcmp(json_str(host(&r, 1), RK_STATUS), "ok"),
	      "two threads, 300 phases each, none lost", "%d %d",
	      cJSON_GetArraySize(cJSON_GetObjectItem(host(&r, 0), RK_PHASES)),
	      cJSON_GetArraySize(cJSON_GetObjectItem(host(&r, 1), RK_PHASES)));
	record_release(&r);
}

int main(void)
{
	struct strbuf err = STRBUF_INIT;
	char *dir;

	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	dir = xstrfmt("%s/run", tmp);
	fs_mkdir_p(dir, 0755, &err);
	head_tests(dir);
	host_tests(dir);
	step_tests(dir);
	build_tests(dir);
	slurm_tests();
	end_tests(dir);
	thread_tests(dir);
	fs_remove_tree(tmp);
	free(dir);
	strbuf_release(&err);
	return check_summary();
}
