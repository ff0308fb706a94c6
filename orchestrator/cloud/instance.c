/* instance.c -- load a host's "instance" object (docs/cloud.md): the keys
 * every provider shares, then the provider's own (provider-*.c). Runs before
 * anything connects or starts, so a bad instance is exit 2 with nothing
 * started. */
#include "cloud/cloud-int.h"

#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/banned.h"

#define DEFAULT_GUARD_ACTION \
	"sudo -n shutdown -h now || sudo -n poweroff || shutdown -h now || poweroff"

void instance_free(struct instance *in)
{
	if (!in)
		return;
	if (in->ops && in->ops->release)
		in->ops->release(in);
	free(in->host);
	free(in->label);
	free(in->guard_action);
	free(in->launch_token);
	free(in);
}

enum go_status instance_load(const struct host *h, const char *hosts_path,
			     struct instance **out, struct strbuf *err)
{
	static const char *const providers[] = { "command", "gcloud", "aws-cli", "az", "aws", NULL };
	struct cfg c;
	struct instance *in;
	char *provider = NULL, *after = NULL;
	enum go_status st;

	*out = NULL;
	if (!h->instance)
		return GO_OK;
	c.label = hosts_path;
	c.path = h->instance_path;
	c.obj = h->instance;
	c.err = err;
	if (!cJSON_IsObject(h->instance))
		return cfg_bad(&c, NULL, "expected an object {\"provider\": ...}, found %s",
			       json_type_name(h->instance));
	in = xcalloc(1, sizeof(*in));
	in->host = xstrdup(h->name);
	in->label = xstrfmt("%s: '%s'", hosts_path, h->instance_path);
	in->timeout_s = 120;
	in->retries = 2;
	in->start_timeout_s = 600;
	in->ssh_timeout_s = 300;
	in->poll_s = 5;
	if ((st = cfg_require(&c, "provider")) || (st = cfg_str(&c, "provider", &provider)))
		goto out;
	{
		const char *const *p;
		for (p = providers; *p && strcmp(*p, provider); p++)
			;
		if (!*p) {
			const char *best = str_suggest(provider, providers);
			st = cfg_bad(&c, "provider", "unknown provider '%s'%s%s%s (one of: command, gcloud, aws-cli, az, aws)",
				     provider, best ? " (did you mean '" : "", best ? best : "",
				     best ? "'?)" : "");
			goto out;
		}
	}
	if ((st = cfg_num(&c, "price_per_hour", 0, 10000, &in->price_per_hour)) ||
	    (st = cfg_num(&c, "idle_stop_min", 0, 7 * 24 * 60, &in->idle_stop_min)) ||
	    (st = cfg_num(&c, "max_lifetime_min", 0, 31 * 24 * 60, &in->max_lifetime_min)) ||
	    (st = cfg_int(&c, "timeout_s", 1, 3600, &in->timeout_s)) ||
	    (st = cfg_int(&c, "retries", 0, 10, &in->retries)) ||
	    (st = cfg_int(&c, "start_timeout_s", 1, 24 * 3600, &in->start_timeout_s)) ||
	    (st = cfg_int(&c, "ssh_timeout_s", 1, 24 * 3600, &in->ssh_timeout_s)) ||
	    (st = cfg_num(&c, "poll_s", 0.1, 600, &in->poll_s)) ||
	    (st = cfg_str(&c, "guard_action", &in->guard_action)) ||
	    (st = cfg_str(&c, "after_run", &after)))
		goto out;
	if (after) {
		if (!strcmp(after, "stop"))
			in->after_run = AFTER_STOP;
		else if (!strcmp(after, "keep"))
			in->after_run = AFTER_KEEP;
		else if (!strcmp(after, "terminate"))
			in->after_run = AFTER_TERMINATE;
		else {
			st = cfg_bad(&c, "after_run", "'%s' is not one of \"stop\", \"keep\", \"terminate\"",
				     after);
			goto out;
		}
	}
	if (!in->guard_action)
		in->guard_action = xstrdup(DEFAULT_GUARD_ACTION);
	if (!strcmp(provider, "aws"))
		st = provider_aws_load(in, &c);
	else
		st = provider_command_load(in, &c, strcmp(provider, "command") ? provider : NULL);
	/* a launched instance always has a lifetime cap, from its launch */
	if (st == GO_OK && in->launch && in->max_lifetime_min <= 0)
		in->max_lifetime_min = LAUNCH_LIFETIME_DEFAULT_MIN;
	if (st == GO_OK && in->after_run == AFTER_TERMINATE && !in->launch)
		st = cfg_bad(&c, "after_run", "\"terminate\" is only for instances gpuorch launches "
			     "itself (\"launch\": {...} instead of a fixed instance); this one can only "
			     "\"stop\" or \"keep\"");
out:
	free(provider);
	free(after);
	if (st != GO_OK) {
		instance_free(in);
		return st;
	}
	*out = in;
	return GO_OK;
}
