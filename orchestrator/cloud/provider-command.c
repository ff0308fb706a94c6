/* provider-command.c -- the "command" provider: the user's own commands for
 * start, stop, status, address (and a credential check), run without a
 * shell through proc_run_timed() with gpuorch's timeout and retries; and the
 * presets "gcloud", "aws-cli", "az" that expand to those commands for the
 * common clouds (docs/cloud.md lists what each runs). */
#include "cloud/cloud-int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "core/proc.h"
#include "core/timeutil.h"
#include "core/banned.h"

struct cmdp {
	char *preset;         /* NULL: the user's own commands */
	char **start, **stop, **status, **address, **check;
};

static void release(struct instance *in)
{
	struct cmdp *p = in->priv;
	if (!p)
		return;
	free(p->preset);
	argv_free(p->start);
	argv_free(p->stop);
	argv_free(p->status);
	argv_free(p->address);
	argv_free(p->check);
	free(p);
	in->priv = NULL;
}

/* Run argv (one of the instance's commands) with the timeout and retries;
 * out gets stdout. A credential problem is GO_ERR_AUTH at once, with the fix. */
static enum go_status run(struct instance *in, const char *what, char **argv,
			  struct strbuf *out, struct strbuf *err)
{
	struct strbuf eo = STRBUF_INIT, cmd = STRBUF_INIT, why = STRBUF_INIT;
	enum go_status st = GO_OK;
	int attempt, code = 0;
	int64_t backoff = 1000;

	argv_describe(&cmd, argv);
	for (attempt = 0; attempt <= in->retries; attempt++) {
		const char *hint;
		if (attempt) {
			time_sleep_ms(backoff);
			backoff *= 2;
		}
		strbuf_reset(out);
		strbuf_reset(&eo);
		strbuf_reset(&why);
		st = proc_run_timed(NULL, (const char *const *)argv, out, &eo, &code,
				    in->timeout_s * 1000, &why);
		if (st == GO_ERR_NOT_FOUND) {
			go_fail(err, GO_ERR_NOT_FOUND,
				"%s: cannot %s the instance: '%s' is not installed or not on PATH "
				"(install it, or fix the command in '%s.%s')", in->host, what,
				argv[0], in->label, what);
			goto out;
		}
		if (st == GO_ERR_TIMEOUT) {
			go_fail(err, GO_ERR_TIMEOUT,
				"%s: '%s' (%s) did not finish within %d s and was killed; raise the "
				"instance's \"timeout_s\" if the cloud is slow", in->host, cmd.buf,
				what, in->timeout_s);
			goto out;
		}
		if (st != GO_OK) {
			go_fail(err, st, "%s: %s: %s", in->host, what, why.buf);
			goto out;
		}
		if (code == 0)
			goto out;
		if ((hint = cloud_cred_hint(eo.buf)) || (hint = cloud_cred_hint(out->buf))) {
			st = go_fail(err, GO_ERR_AUTH, "%s: '%s' (%s) failed: %s", in->host,
				     cmd.buf, what, hint);
			goto out;
		}
	}
	strbuf_trim(&eo);
	st = go_fail(err, GO_ERR_REMOTE, "%s: '%s' (%s) failed with exit %d after %d tr%s%s%.*s",
		     in->host, cmd.buf, what, code, in->retries + 1, in->retries ? "ies" : "y",
		     eo.len ? ": " : "", (int)strcspn(eo.buf, "\n"), eo.buf);
out:
	strbuf_release(&eo);
	strbuf_release(&cmd);
	strbuf_release(&why);
	return st;
}

static enum go_status op_check(struct instance *in, struct strbuf *err)
{
	struct cmdp *p = in->priv;
	struct strbuf out = STRBUF_INIT;
	enum go_status st = GO_OK;
	if (p->check)
		st = run(in, "check", p->check, &out, err);
	strbuf_release(&out);
	return st;
}

static enum go_status op_status(struct instance *in, enum inst_state *res, struct strbuf *err)
{
	struct cmdp *p = in->priv;
	struct strbuf out = STRBUF_INIT;
	enum go_status st = run(in, "status", p->status, &out, err);
	if (st == GO_OK) {
		out.buf[strcspn(out.buf, "\n")] = '\0';
		*res = inst_state_parse(out.buf);
		if (*res == INST_UNKNOWN) {
			struct strbuf cmd = STRBUF_INIT;
			argv_describe(&cmd, p->status);
			st = go_fail(err, GO_ERR_REMOTE,
				     "%s: the status command '%s' printed '%.80s', not a state gpuorch "
				     "knows; make it print one of: %s", in->host, cmd.buf, out.buf,
				     inst_state_known_words());
			strbuf_release(&cmd);
		}
	}
	strbuf_release(&out);
	return st;
}

static enum go_status op_start(struct instance *in, struct strbuf *err)
{
	struct strbuf out = STRBUF_INIT;
	enum go_status st = run(in, "start", ((struct cmdp *)in->priv)->start, &out, err);
	strbuf_release(&out);
	return st;
}

static enum go_status op_stop(struct instance *in, struct strbuf *err)
{
	struct strbuf out = STRBUF_INIT;
	enum go_status st = run(in, "stop", ((struct cmdp *)in->priv)->stop, &out, err);
	strbuf_release(&out);
	return st;
}

static enum go_status op_address(struct instance *in, char **res, struct strbuf *err)
{
	struct cmdp *p = in->priv;
	struct strbuf out = STRBUF_INIT;
	enum go_status st = run(in, "address", p->address, &out, err);
	if (st == GO_OK) {
		strbuf_trim(&out);
		out.buf[strcspn(out.buf, "\n")] = '\0';
		if (!out.buf[0] || strspn(out.buf, "0123456789abcdefABCDEF.:-_") != strlen(out.buf) ||
		    out.buf[0] == '-')
			st = go_fail(err, GO_ERR_REMOTE,
				     "%s: the address command printed '%.80s', not an IP address or "
				     "host name (does the instance have a public address?)", in->host,
				     out.buf);
		else
			*res = xstrdup(out.buf);
	}
	strbuf_release(&out);
	return st;
}

static void describe(const struct instance *in, FILE *f)
{
	const struct cmdp *p = in->priv;
	char **const *v[] = { &p->check, &p->status, &p->start, &p->stop, &p->address };
	static const char *const names[] = { "check", "status", "start", "stop", "address" };
	size_t i;
	fprintf(f, "    instance: provider %s%s%s, price %.4g/h, idle guard %s, after_run %s\n",
		p->preset ? p->preset : "command", p->preset ? " (preset)" : "", "",
		in->price_per_hour, in->idle_stop_min > 0 ? "on" : "off",
		after_run_name(in->after_run));
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		if (!*v[i])
			continue;
		argv_describe(&sb, *v[i]);
		fprintf(f, "      %-8s %s\n", names[i], sb.buf);
		strbuf_release(&sb);
	}
}

static const struct provider_ops command_ops = {
	.name = "command",
	.check = op_check,
	.status = op_status,
	.start = op_start,
	.stop = op_stop,
	.address = op_address,
	.describe = describe,
	.release = release,
};
static const struct provider_ops command_ops_noaddr = {
	.name = "command",
	.check = op_check,
	.status = op_status,
	.start = op_start,
	.stop = op_stop,
	.describe = describe,
	.release = release,
};

/* ---------------------------------------------------------------- presets */

static char **vec(const char *first, ...)
{
	char **v = xcalloc(24, sizeof(char *));
	const char *a;
	va_list ap;
	int n = 0;
	v[n++] = xstrdup(first);
	va_start(ap, first);
	while ((a = va_arg(ap, const char *)) && n < 23)
		v[n++] = xstrdup(a);
	va_end(ap);
	return v;
}

static void vec_add(char **v, char *owned)
{
	int n = 0;
	while (v[n])
		n++;
	if (n < 23)
		v[n] = owned;
	else
		free(owned);
}

/* gcloud: Compute Engine, instance + zone (+ project). */
static enum go_status preset_gcloud(struct cmdp *p, const struct cfg *c)
{
	char *name = NULL, *zone = NULL, *project = NULL;
	char **all[5];
	enum go_status st;
	int i;
	if ((st = cfg_require(c, "instance")) || (st = cfg_require(c, "zone")) ||
	    (st = cfg_str(c, "instance", &name)) || (st = cfg_str(c, "zone", &zone)) ||
	    (st = cfg_str(c, "project", &project)))
		goto out;
	p->start = vec("gcloud", "compute", "instances", "start", name, NULL);
	p->stop = vec("gcloud", "compute", "instances", "stop", name, NULL);
	p->status = vec("gcloud", "compute", "instances", "describe", name, NULL);
	p->address = vec("gcloud", "compute", "instances", "describe", name, NULL);
	p->check = vec("gcloud", "auth", "print-access-token", NULL);
	all[0] = p->start; all[1] = p->stop; all[2] = p->status; all[3] = p->address;
	all[4] = p->check;
	for (i = 0; i < 4; i++)
		vec_add(all[i], xstrfmt("--zone=%s", zone));
	for (i = 0; project && i < 4; i++)
		vec_add(all[i], xstrfmt("--project=%s", project));
	vec_add(p->status, xstrdup("--format=value(status)"));
	vec_add(p->address, xstrdup("--format=value(networkInterfaces[0].accessConfigs[0].natIP)"));
	for (i = 0; i < 5; i++)
		vec_add(all[i], xstrdup("--quiet"));
out:
	free(name);
	free(zone);
	free(project);
	return st;
}

/* aws-cli: EC2 through the AWS CLI, instance_id + region (+ profile). */
static enum go_status preset_aws_cli(struct cmdp *p, const struct cfg *c)
{
	char *id = NULL, *region = NULL, *profile = NULL;
	char **all[5];
	enum go_status st;
	int i;
	if ((st = cfg_require(c, "instance_id")) || (st = cfg_require(c, "region")) ||
	    (st = cfg_str(c, "instance_id", &id)) || (st = cfg_str(c, "region", &region)) ||
	    (st = cfg_str(c, "profile", &profile)))
		goto out;
	p->start = vec("aws", "ec2", "start-instances", "--instance-ids", id, NULL);
	p->stop = vec("aws", "ec2", "stop-instances", "--instance-ids", id, NULL);
	p->status = vec("aws", "ec2", "describe-instances", "--instance-ids", id, "--query",
			"Reservations[0].Instances[0].State.Name", NULL);
	p->address = vec("aws", "ec2", "describe-instances", "--instance-ids", id, "--query",
			 "Reservations[0].Instances[0].PublicIpAddress", NULL);
	p->check = vec("aws", "sts", "get-caller-identity", NULL);
	all[0] = p->start; all[1] = p->stop; all[2] = p->status; all[3] = p->address;
	all[4] = p->check;
	for (i = 0; i < 5; i++) {
		vec_add(all[i], xstrfmt("--region=%s", region));
		if (profile)
			vec_add(all[i], xstrfmt("--profile=%s", profile));
		vec_add(all[i], xstrdup("--output=text"));
	}
out:
	free(id);
	free(region);
	free(profile);
	return st;
}

/* az: an Azure VM, resource_group + vm (+ subscription); stop deallocates
 * (a VM that is only "stopped" is still billed). */
static enum go_status preset_az(struct cmdp *p, const struct cfg *c)
{
	char *rg = NULL, *vm = NULL, *sub = NULL;
	char **all[5];
	enum go_status st;
	int i;
	if ((st = cfg_require(c, "resource_group")) || (st = cfg_require(c, "vm")) ||
	    (st = cfg_str(c, "resource_group", &rg)) || (st = cfg_str(c, "vm", &vm)) ||
	    (st = cfg_str(c, "subscription", &sub)))
		goto out;
	p->start = vec("az", "vm", "start", "--resource-group", rg, "--name", vm, NULL);
	p->stop = vec("az", "vm", "deallocate", "--resource-group", rg, "--name", vm, NULL);
	p->status = vec("az", "vm", "get-instance-view", "--resource-group", rg, "--name", vm,
			"--query",
			"instanceView.statuses[?starts_with(code, 'PowerState/')].code | [0]",
			"--output", "tsv", NULL);
	p->address = vec("az", "vm", "list-ip-addresses", "--resource-group", rg, "--name", vm,
			 "--query", "[0].virtualMachine.network.publicIpAddresses[0].ipAddress",
			 "--output", "tsv", NULL);
	p->check = vec("az", "account", "get-access-token", "--output", "none", NULL);
	all[0] = p->start; all[1] = p->stop; all[2] = p->status; all[3] = p->address;
	all[4] = p->check;
	for (i = 0; sub && i < 5; i++)
		vec_add(all[i], xstrfmt("--subscription=%s", sub));
out:
	free(rg);
	free(vm);
	free(sub);
	return st;
}

static const char *const common_keys[] = {
	"provider", "price_per_hour", "idle_stop_min", "max_lifetime_min", "after_run",
	"timeout_s", "retries", "start_timeout_s", "ssh_timeout_s", "poll_s", "guard_action",
};
#define NCOMMON (sizeof(common_keys) / sizeof(common_keys[0]))

static enum go_status keys_with(const struct cfg *c, const char *const *own, size_t nown)
{
	const char *all[NCOMMON + 12];
	size_t i, n = 0;
	for (i = 0; i < NCOMMON; i++)
		all[n++] = common_keys[i];
	for (i = 0; i < nown && n < NCOMMON + 11; i++)
		all[n++] = own[i];
	all[n] = NULL;
	return cfg_keys(c, all);
}

enum go_status provider_command_load(struct instance *in, const struct cfg *c, const char *preset)
{
	static const char *const own_cmd[] = { "start", "stop", "status", "address", "check" };
	static const char *const own_gcloud[] = { "instance", "zone", "project" };
	static const char *const own_aws[] = { "instance_id", "region", "profile" };
	static const char *const own_az[] = { "resource_group", "vm", "subscription" };
	struct cmdp *p = xcalloc(1, sizeof(*p));
	enum go_status st;

	in->priv = p;
	in->ops = &command_ops;
	if (!preset) {
		if ((st = keys_with(c, own_cmd, 5)) || (st = cfg_require(c, "start")) ||
		    (st = cfg_require(c, "stop")) || (st = cfg_require(c, "status")) ||
		    (st = cfg_argv(c, "start", &p->start)) || (st = cfg_argv(c, "stop", &p->stop)) ||
		    (st = cfg_argv(c, "status", &p->status)) ||
		    (st = cfg_argv(c, "address", &p->address)) ||
		    (st = cfg_argv(c, "check", &p->check)))
			return st;
		if (!p->address)
			in->ops = &command_ops_noaddr;
		return GO_OK;
	}
	p->preset = xstrdup(preset);
	if (!strcmp(preset, "gcloud"))
		return (st = keys_with(c, own_gcloud, 3)) ? st : preset_gcloud(p, c);
	if (!strcmp(preset, "aws-cli"))
		return (st = keys_with(c, own_aws, 3)) ? st : preset_aws_cli(p, c);
	if (!strcmp(preset, "az"))
		return (st = keys_with(c, own_az, 3)) ? st : preset_az(p, c);
	return cfg_bad(c, "provider", "internal: no preset '%s'", preset);
}
