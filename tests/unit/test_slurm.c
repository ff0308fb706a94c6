/* test_slurm.c -- unit tests of the Slurm client's pure parts: the JWT "exp"
 * claim, the v0.0.38 and v0.0.41+ job, node and partition shapes (raw wait
 * status, exit_code objects, GPU counts from gres strings), the submit
 * bodies, v0.0.39's jobs, the choice of API version, final states, the
 * requeue decision (PREEMPTED, NODE_FAIL). The REST side is tested
 * against a real slurmrestd (v0.0.38) in tests/t4000-t4011, the v0.0.41+
 * shapes against the published OpenAPI documents in tests/t4002. */
#include "sched/slurm-int.h"
#include "core/jsonutil.h"
#include "core/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

static void test_jwt_exp(void)
{
	/* payloads {"exp":1795414544,"iat":1795410944,"sun":"root"} and
	 * {"exp":42} in base64url, without padding, as scontrol prints them */
	const char *t1 = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
			 "eyJleHAiOjE3OTU0MTQ1NDQsImlhdCI6MTc5NTQxMDk0NCwic3VuIjoicm9vdCJ9."
			 "c2lnbmF0dXJl";
	const char *t2 = "x.eyJleHAiOjQyfQ.y";
	CHECK(slurm_jwt_exp(t1) == 1795414544, "exp of a scontrol-like token",
	      "got %lld", (long long)slurm_jwt_exp(t1));
	CHECK(slurm_jwt_exp(t2) == 42, "exp of a payload that needs two '=' of padding",
	      "got %lld", (long long)slurm_jwt_exp(t2));
	CHECK(slurm_jwt_exp("no-dots-at-all") == 0, "not a JWT: 0", "got %lld",
	      (long long)slurm_jwt_exp("no-dots-at-all"));
	CHECK(slurm_jwt_exp("a.!!!!.b") == 0, "a payload that is not base64: 0", "got %lld",
	      (long long)slurm_jwt_exp("a.!!!!.b"));
	/* {"iat":1} */
	CHECK(slurm_jwt_exp("a.eyJpYXQiOjF9.b") == 0, "no exp claim: 0", "got %lld",
	      (long long)slurm_jwt_exp("a.eyJpYXQiOjF9.b"));
}

static void test_job(void)
{
	struct slurm_job j;
	cJSON *o = cJSON_Parse("{\"job_id\": 12, \"job_state\": \"FAILED\", \"state_reason\": \"NonZeroExitCode\","
			       " \"batch_host\": \"node7\", \"exit_code\": 768, \"submit_time\": 100,"
			       " \"start_time\": 103, \"end_time\": 110, \"dependency\": \"afterok:11(unfulfilled)\"}");
	slurm_v0038_job(o, &j);
	CHECK(j.id == 12 && !strcmp(j.state, "FAILED") && !strcmp(j.node, "node7"),
	      "id, state, node", "%ld %s %s", j.id, j.state, j.node);
	CHECK(j.exit_status == 3 && j.term_signal == 0, "raw wait status 768 is exit 3",
	      "exit %d signal %d", j.exit_status, j.term_signal);
	CHECK(j.submit_time == 100 && j.start_time == 103 && j.end_time == 110, "times", "%lld",
	      (long long)j.start_time);
	CHECK(!strcmp(j.dependency, "afterok:11(unfulfilled)"), "dependency", "%s", j.dependency);
	cJSON_Delete(o);
	o = cJSON_Parse("{\"job_id\": 13, \"job_state\": \"CANCELLED\", \"exit_code\": 9, \"nodes\": \"n1\"}");
	slurm_v0038_job(o, &j);
	CHECK(j.term_signal == 9 && j.exit_status == -1, "raw wait status 9 is signal 9",
	      "exit %d signal %d", j.exit_status, j.term_signal);
	CHECK(!strcmp(j.node, "n1"), "no batch_host: nodes", "%s", j.node);
	cJSON_Delete(o);
}

static void test_node(void)
{
	struct slurm_node n;
	cJSON *o = cJSON_Parse("{\"name\": \"g1\", \"state\": \"mixed\", \"cpus\": 64, \"alloc_cpus\": 8,"
			       " \"gres\": \"gpu:h100:4(S:0-1),shard:8\", \"gres_used\": \"gpu:h100:2(IDX:0-1),shard:0\","
			       " \"partitions\": [\"cpu\", \"gpu\"]}");
	slurm_v0038_node(o, "gpu", &n);
	CHECK(n.gpus_total == 4 && n.gpus_used == 2, "GPUs from gres / gres_used", "%d/%d",
	      n.gpus_used, n.gpus_total);
	CHECK(n.in_partition && n.cpus == 64 && n.alloc_cpus == 8, "partition and CPUs", "%d",
	      n.in_partition);
	free(n.name);
	free(n.state);
	free(n.gres);
	free(n.gres_used);
	free(n.reason);
	cJSON_Delete(o);
}

static void test_submit_body(void)
{
	struct host_slurm s;
	struct slurm_job_req r;
	const char *env[] = { "A=1", "PATH=/x", NULL };
	cJSON *b;
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	s.partition = "gpu";
	s.gpus = "h100:1";
	s.account = "kernels";
	s.time_limit_min = 30;
	s.cpus_per_job = 2;
	r.name = "j";
	r.script = "#!/bin/sh\ntrue\n";
	r.cwd = "/w";
	r.dependency = "afterok:5";
	r.env = env;
	r.gpu = 1;
	b = slurm_v0038_submit_body(&s, &r);
	CHECK(!strcmp(json_str(b, "script"), r.script), "script", "%s", json_str(b, "script"));
	CHECK(!json_path(b, "job.requeue"),
	      "v0.0.38: no \"requeue\" (slurmrestd 22.05 reads any value as true; the cluster's JobRequeue holds)",
	      "%s", "");
	CHECK(!strcmp(json_str(json_path(b, "job"), "partition"), "gpu") &&
	      !strcmp(json_str(json_path(b, "job"), "gpus"), "h100:1") &&
	      !strcmp(json_str(json_path(b, "job"), "account"), "kernels") &&
	      !strcmp(json_str(json_path(b, "job"), "dependency"), "afterok:5"),
	      "partition, gpus, account, dependency", "%s", "");
	CHECK(json_num(json_path(b, "job"), "time_limit", 0) == 30 &&
	      json_num(json_path(b, "job"), "cpus_per_task", 0) == 2, "time limit, cpus", "%s", "");
	CHECK(cJSON_IsObject(json_path(b, "job.environment")) &&
	      !strcmp(json_str(json_path(b, "job.environment"), "PATH"), "/x") &&
	      !strcmp(json_str(json_path(b, "job.environment"), "A"), "1"),
	      "environment is an object (v0.0.38), a given PATH wins", "%s", "");
	cJSON_Delete(b);
	r.ngpus = 2;
	s.gres = "gpu:h100:1";
	b = slurm_v0038_submit_body(&s, &r);
	CHECK(json_str(json_path(b, "job"), "gres") && !strcmp(json_str(json_path(b, "job"), "gres"), "gpu:2") &&
	      !json_path(b, "job.gpus") && json_num(json_path(b, "job"), "minimum_nodes", 0) == 1,
	      "v0.0.38: a step of \"gpus\": 2 asks for gres gpu:2 of its one node, not the entry's",
	      "%s", json_str(json_path(b, "job"), "gres") ? json_str(json_path(b, "job"), "gres") : "(none)");
	cJSON_Delete(b);
	r.ngpus = 1;
	b = slurm_v0038_submit_body(&s, &r);
	CHECK(!strcmp(json_str(json_path(b, "job"), "gpus"), "h100:1") &&
	      !strcmp(json_str(json_path(b, "job"), "gres"), "gpu:h100:1"),
	      "v0.0.38: \"gpus\": 1 is the entry's own request", "%s", "");
	cJSON_Delete(b);
	s.gres = NULL;
	r.ngpus = 0;
	r.gpu = 0;
	b = slurm_v0038_submit_body(&s, &r);
	CHECK(!json_str(json_path(b, "job"), "gpus"), "no GPU asked for a CPU job", "%s", "");
	cJSON_Delete(b);
}

static void test_v0041_job(void)
{
	struct slurm_job j;
	cJSON *o = cJSON_Parse(
		"{\"job_id\": 12, \"job_state\": [\"FAILED\"], \"state_reason\": \"NonZeroExitCode\","
		" \"batch_host\": \"node7\", \"dependency\": \"\","
		" \"exit_code\": {\"status\": [\"ERROR\"], \"return_code\": {\"set\": true, \"infinite\": false, \"number\": 3},"
		"   \"signal\": {\"id\": {\"set\": false, \"infinite\": false, \"number\": 0}, \"name\": \"\"}},"
		" \"submit_time\": {\"set\": true, \"infinite\": false, \"number\": 100},"
		" \"start_time\": {\"set\": true, \"infinite\": false, \"number\": 103},"
		" \"end_time\": {\"set\": true, \"infinite\": false, \"number\": 110}}");
	slurm_v0041_job(o, &j);
	CHECK(j.id == 12 && !strcmp(j.state, "FAILED") && !strcmp(j.node, "node7"), "v0.0.41: id, state from the array, node",
	      "%ld %s %s", j.id, j.state, j.node);
	CHECK(j.exit_status == 3 && j.term_signal == 0, "v0.0.41: return_code 3 with status ERROR is exit 3",
	      "exit %d signal %d", j.exit_status, j.term_signal);
	CHECK(j.submit_time == 100 && j.start_time == 103 && j.end_time == 110, "v0.0.41: times from no_val structs",
	      "%lld %lld %lld", (long long)j.submit_time, (long long)j.start_time, (long long)j.end_time);
	cJSON_Delete(o);
	o = cJSON_Parse("{\"job_id\": 13, \"job_state\": [\"CANCELLED\"], \"nodes\": \"n1\","
			" \"exit_code\": {\"status\": [\"SIGNALED\"], \"return_code\": {\"set\": true, \"infinite\": false, \"number\": 0},"
			"   \"signal\": {\"id\": {\"set\": true, \"infinite\": false, \"number\": 9}, \"name\": \"KILL\"}}}");
	slurm_v0041_job(o, &j);
	CHECK(j.term_signal == 9 && j.exit_status == -1 && !strcmp(j.node, "n1"),
	      "v0.0.41: SIGNALED with signal 9 is signal 9, no exit status; no batch_host: nodes",
	      "exit %d signal %d node %s", j.exit_status, j.term_signal, j.node);
	cJSON_Delete(o);
	o = cJSON_Parse("{\"job_id\": 14, \"job_state\": [\"PENDING\", \"REQUEUED\"], \"state_reason\": \"Resources\","
			" \"exit_code\": {\"status\": [\"PENDING\"], \"return_code\": {\"set\": true, \"infinite\": false, \"number\": 0}},"
			" \"start_time\": {\"set\": false, \"infinite\": false, \"number\": 0}}");
	slurm_v0041_job(o, &j);
	CHECK(!strcmp(j.state, "PENDING") && j.exit_status == -1 && j.start_time == 0 &&
	      !strcmp(j.reason, "Resources"),
	      "v0.0.41: the first job_state flag is the state; a PENDING exit_code is none; an unset time is 0",
	      "%s exit %d start %lld", j.state, j.exit_status, (long long)j.start_time);
	cJSON_Delete(o);
	o = cJSON_Parse("{\"job_id\": 15, \"job_state\": [\"COMPLETED\"],"
			" \"exit_code\": {\"status\": [\"SUCCESS\"], \"return_code\": {\"set\": true, \"infinite\": false, \"number\": 0}}}");
	slurm_v0041_job(o, &j);
	CHECK(!strcmp(j.state, "COMPLETED") && j.exit_status == 0 && j.term_signal == 0,
	      "v0.0.41: SUCCESS is exit 0 (not 'unknown')", "exit %d", j.exit_status);
	cJSON_Delete(o);
}

static void test_v0039_job(void)
{
	struct slurm_job j;
	cJSON *o = cJSON_Parse("{\"job_id\": 12, \"job_state\": \"FAILED\", \"state_reason\": \"NonZeroExitCode\","
			       " \"batch_host\": \"node7\", \"submit_time\": 100, \"start_time\": 103, \"end_time\": 110,"
			       " \"exit_code\": {\"set\": true, \"infinite\": false, \"number\": 768}}");
	slurm_v0039_job(o, &j);
	CHECK(j.id == 12 && !strcmp(j.state, "FAILED") && !strcmp(j.node, "node7") && j.exit_status == 3 &&
	      j.term_signal == 0 && j.submit_time == 100 && j.start_time == 103 && j.end_time == 110,
	      "v0.0.39: a string state, plain times, the raw wait status 768 in a struct is exit 3",
	      "%s exit %d signal %d", j.state, j.exit_status, j.term_signal);
	cJSON_Delete(o);
	o = cJSON_Parse("{\"job_id\": 13, \"job_state\": \"PREEMPTED\", \"nodes\": \"n1\","
			" \"exit_code\": {\"set\": true, \"infinite\": false, \"number\": 15}}");
	slurm_v0039_job(o, &j);
	CHECK(j.term_signal == 15 && j.exit_status == -1 && !strcmp(j.node, "n1"),
	      "v0.0.39: raw status 15 is signal 15; no batch_host: nodes", "exit %d signal %d", j.exit_status,
	      j.term_signal);
	cJSON_Delete(o);
	o = cJSON_Parse("{\"job_id\": 14, \"job_state\": \"PENDING\","
			" \"exit_code\": {\"set\": false, \"infinite\": false, \"number\": 0}}");
	slurm_v0039_job(o, &j);
	CHECK(j.exit_status == -1 && j.term_signal == 0, "v0.0.39: an unset exit_code is none (not exit 0)",
	      "exit %d", j.exit_status);
	cJSON_Delete(o);
}

static void test_v0041_node_partition(void)
{
	struct slurm_node n;
	struct slurm_partition p;
	cJSON *o = cJSON_Parse("{\"name\": \"g1\", \"state\": [\"MIXED\", \"DRAIN\"], \"cpus\": 64, \"alloc_cpus\": 8,"
			       " \"gres\": \"gpu:h100:4(S:0-1)\", \"gres_used\": \"gpu:h100:1(IDX:0)\","
			       " \"partitions\": [\"cpu\", \"gpu\"], \"reason\": \"maint\"}");
	slurm_v0041_node(o, "gpu", &n);
	CHECK(n.gpus_total == 4 && n.gpus_used == 1 && n.in_partition && !strcmp(n.state, "MIXED,DRAIN") &&
	      !strcmp(n.reason, "maint"),
	      "v0.0.41 node: GPUs, partitions array, state array joined", "%d/%d %s", n.gpus_used,
	      n.gpus_total, n.state);
	free(n.name);
	free(n.state);
	free(n.gres);
	free(n.gres_used);
	free(n.reason);
	cJSON_Delete(o);
	o = cJSON_Parse("{\"name\": \"gpu\", \"nodes\": {\"configured\": \"g[1-4]\", \"total\": 4},"
			" \"cpus\": {\"total\": 256}, \"partition\": {\"state\": [\"UP\"]}}");
	slurm_v0041_partition(o, "gpu", &p);
	CHECK(!strcmp(p.name, "gpu") && !strcmp(p.nodes, "g[1-4]") && !strcmp(p.state, "UP") &&
	      p.total_nodes == 4 && p.total_cpus == 256,
	      "v0.0.41 partition: nested nodes, cpus and state", "%s %s %s %d %d", p.name, p.nodes,
	      p.state, p.total_nodes, p.total_cpus);
	slurm_partition_release(&p);
	cJSON_Delete(o);
}

static void test_v0041_submit_body(void)
{
	struct host_slurm s;
	struct slurm_job_req r;
	const char *env[] = { "A=1", "PATH=/x", "junk", NULL };
	cJSON *b;
	const cJSON *e;
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	s.partition = "gpu";
	s.gpus = "h100:1";
	s.gres = "gpu:1,shard:2";
	s.time_limit_min = 30;
	s.cpus_per_job = 2;
	r.name = "j";
	r.script = "#!/bin/sh\ntrue\n";
	r.cwd = "/w";
	r.env = env;
	r.gpu = 1;
	b = slurm_v0041_submit_body(&s, &r);
	CHECK(!json_str(b, "script") && !strcmp(json_str(json_path(b, "job"), "script"), r.script),
	      "v0.0.41: the script inside job", "%s", "");
	CHECK(json_str(json_path(b, "job"), "tres_per_job") && json_str(json_path(b, "job"), "tres_per_node") &&
	      !strcmp(json_str(json_path(b, "job"), "tres_per_job"), "gres/gpu:h100:1") &&
	      !strcmp(json_str(json_path(b, "job"), "tres_per_node"), "gres/gpu:1,gres/shard:2") &&
	      !json_path(b, "job.gpus") && !json_path(b, "job.gres"),
	      "v0.0.41: GPUs as TRES (gpus -> tres_per_job, gres -> tres_per_node)", "%s",
	      json_str(json_path(b, "job"), "tres_per_job") ? json_str(json_path(b, "job"), "tres_per_job") : "(none)");
	cJSON_Delete(b);
	r.ngpus = 4;
	b = slurm_v0041_submit_body(&s, &r);
	CHECK(json_str(json_path(b, "job"), "tres_per_node") &&
	      !strcmp(json_str(json_path(b, "job"), "tres_per_node"), "gres/gpu:4") &&
	      !json_path(b, "job.tres_per_job"),
	      "v0.0.41: a step of \"gpus\": 4 asks for tres_per_node gres/gpu:4 (--gpus-per-node), not the entry's",
	      "%s", json_str(json_path(b, "job"), "tres_per_node") ? json_str(json_path(b, "job"), "tres_per_node") : "(none)");
	cJSON_Delete(b);
	r.ngpus = 0;
	b = slurm_v0041_submit_body(&s, &r);
	CHECK(cJSON_IsTrue(json_path(b, "job.time_limit.set")) &&
	      json_num(json_path(b, "job.time_limit"), "number", 0) == 30,
	      "v0.0.41: time limit as a no_val struct", "%s", "");
	e = json_path(b, "job.environment");
	CHECK(cJSON_IsArray(e) && cJSON_GetArraySize(e) == 3 &&
	      !strcmp(cJSON_GetArrayItem(e, 0)->valuestring, "PATH=/usr/local/bin:/usr/bin:/bin") &&
	      !strcmp(cJSON_GetArrayItem(e, 1)->valuestring, "A=1") &&
	      !strcmp(cJSON_GetArrayItem(e, 2)->valuestring, "PATH=/x"),
	      "v0.0.41: environment an array, the default PATH first so a given one wins, no entry without '='",
	      "%d", cJSON_GetArraySize(e));
	cJSON_Delete(b);
}

static void test_pick_version(void)
{
	struct strbuf off = STRBUF_INIT;
	const struct slurm_adapter *a;
	cJSON *d = cJSON_Parse("{\"paths\": {\"/slurm/v0.0.40/job/submit\": {}, \"/slurm/v0.0.42/job/submit\": {},"
			       " \"/slurm/v0.0.41/job/submit\": {}, \"/slurm/v0.0.42/jobs/\": {},"
			       " \"/slurmdb/v0.0.42/jobs/\": {}}}");
	a = slurm_pick_adapter(d, &off);
	CHECK(a && !strcmp(a->version, "v0.0.42") && !strcmp(off.buf, "v0.0.40, v0.0.42, v0.0.41"),
	      "the newest version served that has an adapter; every offered one listed", "%s / %s",
	      a ? a->version : "none", off.buf);
	cJSON_Delete(d);
	strbuf_reset(&off);
	d = cJSON_Parse("{\"paths\": {\"/slurm/v0.0.36/job/submit\": {}, \"/slurm/v0.0.37/job/submit\": {}}}");
	a = slurm_pick_adapter(d, &off);
	CHECK(!a && !strcmp(off.buf, "v0.0.36, v0.0.37"), "no adapter for what is served: none, offered listed",
	      "%s", off.buf);
	cJSON_Delete(d);
	strbuf_reset(&off);
	d = cJSON_Parse("{\"paths\": {\"/slurm/v0.0.38/job/submit\": {}, \"/slurm/v0.0.39/job/submit\": {},"
			" \"/slurm/v0.0.40/job/submit\": {}}}");
	a = slurm_pick_adapter(d, &off);
	CHECK(a && !strcmp(a->version, "v0.0.40") && a->job == slurm_v0041_job,
	      "Slurm 23.11 (v0.0.38-v0.0.40): v0.0.40, read like v0.0.41", "%s", a ? a->version : "none");
	a = slurm_adapter_for("v0.0.39");
	CHECK(a && a->job == slurm_v0039_job && a->submit_body == slurm_v0041_submit_body &&
	      a->node == slurm_v0041_node && a->partition == slurm_v0041_partition,
	      "v0.0.39: its own jobs, v0.0.40's submit body, nodes and partitions", "%s", "");
	cJSON_Delete(d);
	strbuf_reset(&off);
	d = cJSON_Parse("{\"paths\": {\"/slurm/v0.0.38/job/submit\": {}, \"/slurm/v0.0.44/job/submit\": {}}}");
	a = slurm_pick_adapter(d, &off);
	CHECK(a && !strcmp(a->version, "v0.0.44"), "v0.0.44 over v0.0.38", "%s", a ? a->version : "none");
	cJSON_Delete(d);
	CHECK(slurm_adapter_for("v0.0.38") && slurm_adapter_for("v0.0.41") && slurm_adapter_for("v0.0.40") &&
	      !slurm_adapter_for("v0.0.37") && !slurm_adapter_for(NULL), "adapter_for", "%s", "");
	strbuf_release(&off);
}

static void test_states(void)
{
	CHECK(!slurm_state_final("PENDING") && !slurm_state_final("RUNNING") &&
	      !slurm_state_final("COMPLETING") && !slurm_state_final(""),
	      "live states", "%s", "");
	CHECK(slurm_state_final("COMPLETED") && slurm_state_final("FAILED") &&
	      slurm_state_final("TIMEOUT") && slurm_state_final("CANCELLED") &&
	      slurm_state_final("NODE_FAIL") && slurm_state_final("OUT_OF_MEMORY"),
	      "final states", "%s", "");
}

/* jobs[] of a reply fixture, each through an adapter */
static int load_jobs(const char *path, void (*job)(const cJSON *, struct slurm_job *),
		     struct slurm_job *out, int cap)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	cJSON *d, *it;
	int n = 0;
	if (fs_read_file(path, &text, &err) != GO_OK) {
		printf("# %s\n", err.buf);
		strbuf_release(&err);
		return 0;
	}
	d = cJSON_Parse(text.buf);
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(d, "jobs"))
		if (n < cap)
			job(it, &out[n++]);
	cJSON_Delete(d);
	strbuf_release(&text);
	strbuf_release(&err);
	return n;
}

/* PREEMPTED and NODE_FAIL: requeued once, then given up; any other end kept. The v0.0.38 fixture
 * holds real replies of Slurm 22.05.8 on tests/t4012's cluster: a job preempted by a job of a
 * PriorityTier 10 partition (PreemptMode=CANCEL), and a job whose node was set down under it
 * (JobRequeue=0); both have exit_code 15 (SIGTERM). The v0.0.41+ fixture is checked against the
 * published documents by t4002. */
static void test_retry(void)
{
	struct slurm_job j[8];
	int n, i, seen = 0;
	n = load_jobs("tests/fixtures/slurm-openapi/reply-jobs-v0.0.38.json", slurm_v0038_job, j, 8);
	CHECK(n == 2 && !strcmp(j[0].state, "PREEMPTED") && j[0].term_signal == 15 && !strcmp(j[0].node, "node1") &&
	      !strcmp(j[1].state, "NODE_FAIL") && !strcmp(j[1].reason, "NodeDown") && j[1].term_signal == 15,
	      "v0.0.38 fixture: a PREEMPTED job (signal 15 on node1) and a NODE_FAIL job (NodeDown)", "%d %s", n,
	      n ? j[0].state : "");
	for (i = 0; i < n; i++) {
		CHECK(slurm_retry_decision(&j[i], 1) == SLURM_RETRY_REQUEUE, "v0.0.38: the first end requeued",
		      "%s", j[i].state);
		CHECK(slurm_retry_decision(&j[i], 2) == SLURM_RETRY_GIVE_UP, "v0.0.38: the second end given up",
		      "%s", j[i].state);
	}
	n = load_jobs("tests/fixtures/slurm-openapi/reply-jobs.json", slurm_v0041_job, j, 8);
	CHECK(n == 7, "v0.0.41 fixture: 7 jobs", "%d", n);
	for (i = 0; i < n; i++) {
		int again = !strcmp(j[i].state, "PREEMPTED") || !strcmp(j[i].state, "NODE_FAIL");
		seen += again;
		CHECK(slurm_retry_decision(&j[i], 1) == (again ? SLURM_RETRY_REQUEUE : SLURM_RETRY_NO) &&
		      slurm_retry_decision(&j[i], 2) == (again ? SLURM_RETRY_GIVE_UP : SLURM_RETRY_NO),
		      "v0.0.41: only PREEMPTED and NODE_FAIL are requeued, once", "job %ld %s", j[i].id, j[i].state);
	}
	CHECK(seen == 2, "v0.0.41 fixture: one PREEMPTED and one NODE_FAIL job", "%d", seen);
	memset(&j[0], 0, sizeof(j[0]));
	snprintf(j[0].state, sizeof(j[0].state), "PREEMPTED");
	CHECK(slurm_retry_decision(&j[0], 1) == SLURM_RETRY_NO,
	      "a job Slurm no longer lists (found = 0) is not requeued on a stale state", "%s", "");
}

int main(void)
{
	test_jwt_exp();
	test_job();
	test_v0041_job();
	test_v0039_job();
	test_v0041_node_partition();
	test_v0041_submit_body();
	test_pick_version();
	test_node();
	test_submit_body();
	test_states();
	test_retry();
	return check_summary();
}
