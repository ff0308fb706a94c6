/* hosts.h -- the hosts inventory (JSON) and ~/.ssh/config aliases.
 *
 * A hosts file is {"hosts": [ {...}, ... ]}; see docs/hosts.md. A host with
 * "ssh_alias" (or with no "address") is resolved with `ssh -G ALIAS`, i.e.
 * exactly the way ssh resolves it: HostName, User, Port, IdentityFile,
 * UserKnownHostsFile. Explicit fields win over the alias. */
#ifndef GPUORCH_HOSTS_H
#define GPUORCH_HOSTS_H

#include "core/error.h"
#include "transport/ssh.h"
#include "core/shellenv.h"

/* A Slurm cluster entry's "slurm" object (docs/slurm.md); the entry's
 * "login" object fills the SSH fields of struct host (the login node). */
struct host_slurm {
	char *url;            /* http(s)://host:port or unix:/path of slurmrestd */
	char *partition;      /* required */
	char *gpus;           /* "gpus" per job, e.g. "h100:1" (optional) */
	char *gres;           /* "gres" per node, e.g. "gpu:h100:1" (optional) */
	char *account, *qos, *constraint;
	char *user;           /* X-SLURM-USER-NAME; default: the login user */
	char *token_file;     /* a file holding a JWT (local path) */
	int time_limit_min;   /* default 30 */
	int max_jobs;         /* jobs in flight at once, default 16 */
	int cpus_per_job;     /* default 1 */
	int token_lifespan_s; /* for `scontrol token lifespan=N` on the login node, default 3600 */
	int queue_timeout_s;  /* a job pending longer (not for its dependency) is cancelled; 0: no bound */
};

#define HOST_MAX_GPUS 64

struct host {
	char *name;           /* label in reports; unique in the file */
	char *address;        /* IP or DNS name */
	int port;             /* default 22 */
	char *user;           /* default: $USER */
	char *identity;       /* private key file, or NULL with use_agent */
	int use_agent;        /* "identity": "agent" or no identity given */
	char *known_hosts;    /* default ~/.ssh/known_hosts */
	char *cuda_home;      /* optional, e.g. /usr/local/cuda */
	struct env_var *env;  /* "env": set, in this order, before each build and step
			       * command on the host (docs/hosts.md); nenv of them */
	int nenv;
	char *python;         /* optional python3 for script programs (else python3 on PATH) */
	char *workdir;        /* remote work directory, default ".gpuorch" (relative to $HOME) */
	char *gpu;            /* optional GPU name override (else nvidia-smi) */
	char *arch;           /* optional arch override, e.g. "sm_90a" */
	int connect_timeout_s;/* default 10 */
	int gpu_index;        /* the GPU the probe describes: the first of gpus, default 0 */
	int gpus[HOST_MAX_GPUS]; /* "gpus": [0, 2]: the GPUs (nvidia-smi indices) the host's
			       * steps run on, ascending; "gpu_index": N is [N] */
	int ngpus;            /* 0: every GPU the probe lists */
	struct host_slurm *slurm; /* a Slurm cluster (NULL: a plain SSH host) */
	int max_builds;       /* builds at once on the host; 0: one per core (probed) */
	int execd_idle_s;     /* the host's execd (docs/runner.md) leaves after this long
			       * unused; 0: no execd, every command through the login shell */
	int persist_s;        /* keep the SSH session open between runs in a session keeper
			       * that leaves after this long unused; 0: off (docs/hosts.md) */
	struct cJSON *instance; /* "instance": the cloud instance behind it (cloud/instance.h), or NULL */
	char *instance_path;  /* its JSON path for messages, "hosts[1].instance" */
};

struct hosts {
	char *path;
	struct host *v;
	int n;
};

enum go_status hosts_load(const char *path, struct hosts **out, struct strbuf *err);
void hosts_free(struct hosts *h);
/* Keep only the named hosts (--host NAME ...); error names an unknown one. */
enum go_status hosts_select(struct hosts *h, char **names, int nnames, struct strbuf *err);

/* The SSH options that reach host h. */
void host_ssh_opts(const struct host *h, int accept_new_hostkey, struct ssh_opts *o);
/* Host h's remote work directory made absolute against the remote $HOME. */
char *host_workdir(const struct host *h, const char *home);

#endif
