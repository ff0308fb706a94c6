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

struct host {
	char *name;           /* label in reports; unique in the file */
	char *address;        /* IP or DNS name */
	int port;             /* default 22 */
	char *user;           /* default: $USER */
	char *identity;       /* private key file, or NULL with use_agent */
	int use_agent;        /* "identity": "agent" or no identity given */
	char *known_hosts;    /* default ~/.ssh/known_hosts */
	char *cuda_home;      /* optional, e.g. /usr/local/cuda */
	char *python;         /* optional python3 for script programs (else python3 on PATH) */
	char *workdir;        /* remote work directory, default ".gpuorch" (relative to $HOME) */
	char *gpu;            /* optional GPU name override (else nvidia-smi) */
	char *arch;           /* optional arch override, e.g. "sm_90a" */
	int connect_timeout_s;/* default 10 */
	int gpu_index;        /* which GPU of the host, default 0 */
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
