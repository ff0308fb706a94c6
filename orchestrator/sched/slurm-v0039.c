/* slurm-v0039.c -- the job replies of slurmrestd's API v0.0.39 (Slurm 23.02 and 23.11, the first
 * data_parser version), which sit between v0.0.38 and v0.0.40:
 *   - "job_state" is one string (PENDING, PREEMPTED ...) and the times plain epoch seconds, as in
 *     v0.0.38;
 *   - "exit_code" is the raw wait status as in v0.0.38, but in a {set, infinite, number} struct.
 * Its submit body (the script in "job", "environment" an array, the time limit a struct, GPUs as
 * TRES), nodes and partitions are v0.0.40's: slurm-v0041.c. Checked against the document Slurm
 * 23.11.1's slurmrestd generated (tests/fixtures/slurm-openapi/v0.0.39.json) by t4002. */
#include "sched/slurm-int.h"

#include "core/jsonutil.h"
#include "core/banned.h"

void slurm_v0039_job(const cJSON *job, struct slurm_job *j)
{
	slurm_job_common(job, j);
	slurm_copy(j->state, sizeof(j->state), json_str(job, "job_state"));
	j->submit_time = (int64_t)slurm_no_val(job, "submit_time", 0);
	j->start_time = (int64_t)slurm_no_val(job, "start_time", 0);
	j->end_time = (int64_t)slurm_no_val(job, "end_time", 0);
	slurm_wait_status((int)slurm_no_val(job, "exit_code", -1), j);
}
