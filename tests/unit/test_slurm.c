/* test_slurm.c -- unit tests of the Slurm client's pure parts: the JWT "exp"
 * claim, the v0.0.38 job and node shapes (raw wait status, GPU counts from
 * gres strings), the submit body, final states. The REST side is tested
 * against a real slurmrestd in tests/t4000-t4011. */
#include "sched/slurm-int.h"
#include "core/jsonutil.h"

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
	r.gpu = 0;
	b = slurm_v0038_submit_body(&s, &r);
	CHECK(!json_str(json_path(b, "job"), "gpus"), "no GPU asked for a CPU job", "%s", "");
	cJSON_Delete(b);
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

int main(void)
{
	test_jwt_exp();
	test_job();
	test_node();
	test_submit_body();
	test_states();
	return check_summary();
}
