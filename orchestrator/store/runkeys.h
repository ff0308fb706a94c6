/* runkeys.h -- the names of run.json's keys that are both written (store/runwrite.c)
 * and read elsewhere (store/runread.c, report/, run/, cmd/): one place for each
 * name, so a writer and its readers cannot drift apart (docs/run-record.md). */
#ifndef GPUORCH_RUNKEYS_H
#define GPUORCH_RUNKEYS_H

/* the run */
#define RK_SCHEMA        "schema"
#define RK_RUN_ID        "run_id"
#define RK_STATUS        "status"        /* the run's, a host's, a step's */
#define RK_OUTCOME       "outcome"
#define RK_EXIT_CODE     "exit_code"     /* the run's, a step's */
#define RK_STARTED_AT    "started_at"    /* the run's, a host's */
#define RK_ENDED_AT      "ended_at"      /* the run's, a host's */
#define RK_DURATION_S    "duration_s"
#define RK_RESUMED_AT    "resumed_at"
#define RK_EXPERIMENT    "experiment"
#define RK_PROVENANCE    "provenance"
#define RK_HOSTS         "hosts"
#define RK_POOL_SWEEPS   "pool_sweeps"
#define RK_POOL_GATES    "pool_gates"
#define RK_NOTIFY        "notify"
#define RK_INSTANCES     "instances"     /* provenance's */
#define RK_INSTANCES_COST_TOTAL "instances_cost_total"

/* a host's entry in "hosts" */
#define RK_ERROR         "error"
#define RK_INFO          "info"
#define RK_ARCHS         "archs"
#define RK_PHASES        "phases"
#define RK_SHIP          "ship"
#define RK_RUNNER        "runner"
#define RK_BUILDS        "builds"
#define RK_STEPS         "steps"
#define RK_SWEEPS        "sweeps"
#define RK_GATES         "gates"
#define RK_SPREAD        "spread"
#define RK_SCHEDULER     "scheduler"
#define RK_JOBS          "jobs"          /* the scheduler's */
#define RK_INSTANCE      "instance"
#define RK_ADDRESS       "address"

#endif
