/* instance.h -- a cloud instance behind a host, and the one provider interface.
 *
 * A host of the inventory may name an "instance" (docs/cloud.md): the
 * machine is started before a run, waited for, and stopped after it. Every
 * provider ("command" with its presets gcloud, aws-cli, az; "aws" natively)
 * fills one struct provider_ops; the rest of gpuorch sees only that table.
 * An operation that a provider cannot do is NULL (launch/terminate are only
 * for instances gpuorch creates; a GCP REST provider with a service-account
 * JWT would be one more table). */
#ifndef GPUORCH_CLOUD_INSTANCE_H
#define GPUORCH_CLOUD_INSTANCE_H

#include <stdio.h>
#include "core/error.h"
#include "transport/hosts.h"

enum inst_state {
	INST_UNKNOWN = 0,
	INST_PENDING,      /* starting: PROVISIONING, STAGING, pending */
	INST_RUNNING,
	INST_STOPPING,     /* STOPPING, SUSPENDING, stopping, shutting-down */
	INST_STOPPED,      /* not billed for compute: gcloud TERMINATED, aws stopped, az deallocated */
	INST_TERMINATED,   /* gone for good: aws terminated */
	INST_STATE_COUNT
};
const char *inst_state_name(enum inst_state s);

/* max_lifetime_min of an instance gpuorch launches when the hosts file gives none */
#define LAUNCH_LIFETIME_DEFAULT_MIN 1440

enum after_run { AFTER_DEFAULT = 0, AFTER_STOP, AFTER_KEEP, AFTER_TERMINATE };
const char *after_run_name(enum after_run a);

struct instance;

/* An instance carrying gpuorch's tags, as the provider lists them. */
struct tagged_inst {
	char *id;
	enum inst_state state;
	char *host, *run, *token;   /* the tags gpuorch:host, gpuorch:run, gpuorch:launch (or NULL) */
};
void tagged_free(struct tagged_inst *v, int n);

struct provider_ops {
	const char *name;
	/* Credentials usable now? GO_ERR_AUTH with the command that fixes it. */
	enum go_status (*check)(struct instance *in, struct strbuf *err);
	/* GO_ERR_NOT_FOUND only when the provider says, authoritatively, that
	 * the instance does not exist; any other error means "cannot tell". */
	enum go_status (*status)(struct instance *in, enum inst_state *out, struct strbuf *err);
	enum go_status (*start)(struct instance *in, struct strbuf *err);
	enum go_status (*stop)(struct instance *in, struct strbuf *err);
	/* The address to reach it at (*out: new string); NULL op: the host's own. */
	enum go_status (*address)(struct instance *in, char **out, struct strbuf *err);
	/* Instances gpuorch creates itself (in->launch); NULL when not supported.
	 * launch creates one and takes its id: idempotent for in->launch_token
	 * (a reply lost on the way is never a second instance), tagged with
	 * in->run_id and the host, with a provider-side stop after
	 * in->max_lifetime_min; adopt takes up one launched before (the
	 * ledger's); id says which it is now (NULL: none yet). */
	enum go_status (*launch)(struct instance *in, struct strbuf *err);
	/* The instance that the launch with this token created, if any: GO_OK
	 * and adopted, GO_ERR_NOT_FOUND (none that is not terminated), or an
	 * error (cannot tell). */
	enum go_status (*find_launched)(struct instance *in, const char *token, struct strbuf *err);
	/* Every instance in the account/region carrying gpuorch's tags (*out, *n). */
	enum go_status (*list_tagged)(struct instance *in, struct tagged_inst **out, int *n,
				      struct strbuf *err);
	enum go_status (*terminate)(struct instance *in, struct strbuf *err);
	void (*adopt)(struct instance *in, const char *id);
	const char *(*id)(const struct instance *in);
	/* --dry-run: what each operation runs. */
	void (*describe)(const struct instance *in, FILE *f);
	void (*release)(struct instance *in);
};

struct instance {
	const struct provider_ops *ops;
	char *host;               /* the host's name */
	char *label;              /* "hosts.json: 'hosts[0].instance'" for messages */
	double price_per_hour;    /* 0: unknown */
	double idle_stop_min;     /* the guard's idle limit; 0: no guard */
	double max_lifetime_min;  /* the guard's hard cap from start; 0: none */
	enum after_run after_run; /* AFTER_DEFAULT: stop if gpuorch started it, else keep */
	int timeout_s;            /* each provider call (default 120) */
	int retries;              /* a failed call is tried again this often (default 2) */
	int start_timeout_s;      /* start requested -> running (default 600) */
	int ssh_timeout_s;        /* running -> SSH answers with the right host key (default 300) */
	double poll_s;            /* status poll interval (default 5) */
	char *guard_action;       /* shell line the guard runs when it fires */
	int launch;               /* gpuorch launches the instance (no fixed one): after_run
				   * "terminate" by default, and allowed */
	const char *run_id;       /* the run it is launched for (a tag), or NULL; not owned */
	char *launch_token;       /* the idempotency token of the launch under way, or NULL */
	void *priv;               /* the provider's own configuration */
};

/* Check and load host h's "instance" (NULL *out when it has none). Errors
 * name the hosts file and JSON path; GO_ERR_HOSTS (exit 2). */
enum go_status instance_load(const struct host *h, const char *hosts_path,
			     struct instance **out, struct strbuf *err);
void instance_free(struct instance *in);

#endif
