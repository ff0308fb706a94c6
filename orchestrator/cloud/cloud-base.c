/* cloud-base.c -- shared by cloud/'s files: reading an "instance" object of
 * the hosts file strictly (errors name file and JSON path), the states the
 * clouds print, and the credential problems their tools report. */
#include "cloud/cloud-int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/banned.h"

enum go_status cfg_bad(const struct cfg *c, const char *key, const char *fmt, ...)
{
	struct strbuf path = STRBUF_INIT;
	va_list ap;
	strbuf_addstr(&path, c->path);
	if (key)
		strbuf_addf(&path, ".%s", key);
	va_start(ap, fmt);
	json_verror(c->err, c->label, path.buf, fmt, ap);
	va_end(ap);
	strbuf_release(&path);
	return GO_ERR_HOSTS;
}

enum go_status cfg_keys(const struct cfg *c, const char *const *allowed)
{
	const cJSON *it;
	for (it = c->obj->child; it; it = it->next) {
		const char *const *a;
		const char *best;
		for (a = allowed; *a && strcmp(*a, it->string); a++)
			;
		if (*a)
			continue;
		best = str_suggest(it->string, allowed);
		if (best)
			return cfg_bad(c, NULL, "unknown key '%s' (did you mean '%s'?)", it->string,
				       best);
		return cfg_bad(c, NULL, "unknown key '%s' for this provider (see docs/cloud.md)",
			       it->string);
	}
	return GO_OK;
}

enum go_status cfg_require(const struct cfg *c, const char *key)
{
	if (cJSON_GetObjectItemCaseSensitive(c->obj, key))
		return GO_OK;
	return cfg_bad(c, NULL, "missing required key '%s' for provider '%s'", key,
		       json_str(c->obj, "provider") ? json_str(c->obj, "provider") : "?");
}

static int has_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 1;
	return 0;
}

enum go_status cfg_str(const struct cfg *c, const char *key, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->obj, key);
	if (!v)
		return GO_OK;
	if (!cJSON_IsString(v))
		return cfg_bad(c, key, "expected a string, found %s", json_type_name(v));
	if (!*v->valuestring)
		return cfg_bad(c, key, "must not be empty");
	if (has_ctl(v->valuestring))
		return cfg_bad(c, key, "must not contain control characters");
	free(*out);
	*out = xstrdup(v->valuestring);
	return GO_OK;
}

enum go_status cfg_num(const struct cfg *c, const char *key, double lo, double hi, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->obj, key);
	if (!v)
		return GO_OK;
	if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
		return cfg_bad(c, key, "expected a number from %g to %g, found %s", lo, hi,
			       cJSON_IsNumber(v) ? "a number out of range" : json_type_name(v));
	*out = v->valuedouble;
	return GO_OK;
}

enum go_status cfg_int(const struct cfg *c, const char *key, int lo, int hi, int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->obj, key);
	if (!v)
		return GO_OK;
	if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int)v->valuedouble ||
	    v->valuedouble < lo || v->valuedouble > hi)
		return cfg_bad(c, key, "expected an integer from %d to %d", lo, hi);
	*out = (int)v->valuedouble;
	return GO_OK;
}

void argv_free(char **argv)
{
	char **p;
	if (!argv)
		return;
	for (p = argv; *p; p++)
		free(*p);
	free(argv);
}

enum go_status cfg_argv(const struct cfg *c, const char *key, char ***out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->obj, key), *it;
	char **argv;
	int n, i = 0;
	if (!v)
		return GO_OK;
	if (!cJSON_IsArray(v) || !(n = cJSON_GetArraySize(v)))
		return cfg_bad(c, key, "expected a non-empty array of strings (an argument vector such as [\"gcloud\", \"compute\", ...], never a shell line), found %s",
			       cJSON_IsArray(v) ? "an empty array" : json_type_name(v));
	argv = xcalloc((size_t)n + 1, sizeof(char *));
	cJSON_ArrayForEach(it, v) {
		if (!cJSON_IsString(it) || has_ctl(it->valuestring) || (i == 0 && !*it->valuestring)) {
			argv_free(argv);
			return cfg_bad(c, key, "element %d: expected a string without control characters%s",
				       i, i == 0 ? ", the program to run" : "");
		}
		argv[i++] = xstrdup(it->valuestring);
	}
	argv_free(*out);
	*out = argv;
	return GO_OK;
}

void argv_describe(struct strbuf *sb, char *const *argv)
{
	int i;
	for (i = 0; argv && argv[i]; i++) {
		if (i)
			strbuf_addch(sb, ' ');
		if (*argv[i] && strspn(argv[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					     "0123456789_-./=:,@%+") == strlen(argv[i]))
			strbuf_addstr(sb, argv[i]);
		else
			strbuf_add_shell_quoted(sb, argv[i]);
	}
}

/* ---------------------------------------------------------------- states */

static const char *const state_names[INST_STATE_COUNT] = {
	"unknown", "pending", "running", "stopping", "stopped", "terminated",
};

void tagged_free(struct tagged_inst *v, int n)
{
	int i;
	for (i = 0; v && i < n; i++) {
		free(v[i].id);
		free(v[i].host);
		free(v[i].run);
		free(v[i].token);
	}
	free(v);
}

const char *inst_state_name(enum inst_state s)
{
	return s >= 0 && s < INST_STATE_COUNT ? state_names[s] : "unknown";
}

const char *after_run_name(enum after_run a)
{
	switch (a) {
	case AFTER_STOP: return "stop";
	case AFTER_KEEP: return "keep";
	case AFTER_TERMINATE: return "terminate";
	default: return "default";
	}
}

/* Exact words, case-sensitive where the clouds disagree: gcloud's
 * TERMINATED is a stopped VM (it can start again), EC2's terminated is gone. */
static const struct { const char *word; enum inst_state st; } words[] = {
	/* gcloud compute instances describe --format=value(status) */
	{ "PROVISIONING", INST_PENDING }, { "STAGING", INST_PENDING },
	{ "REPAIRING", INST_PENDING }, { "RUNNING", INST_RUNNING },
	{ "STOPPING", INST_STOPPING }, { "SUSPENDING", INST_STOPPING },
	{ "TERMINATED", INST_STOPPED }, { "STOPPED", INST_STOPPED },
	{ "SUSPENDED", INST_STOPPED },
	/* aws ec2 describe-instances ... State.Name (and the native provider) */
	{ "pending", INST_PENDING }, { "running", INST_RUNNING },
	{ "stopping", INST_STOPPING }, { "shutting-down", INST_STOPPING },
	{ "stopped", INST_STOPPED }, { "terminated", INST_TERMINATED },
	/* az vm get-instance-view ... PowerState/... */
	{ "PowerState/starting", INST_PENDING }, { "PowerState/running", INST_RUNNING },
	{ "PowerState/stopping", INST_STOPPING }, { "PowerState/deallocating", INST_STOPPING },
	{ "PowerState/deallocated", INST_STOPPED },
	/* az "stopped" still bills: it is not a state gpuorch stops at */
	{ "PowerState/stopped", INST_STOPPING },
};

enum inst_state inst_state_parse(const char *text)
{
	size_t i, n;
	while (*text == ' ' || *text == '\t' || *text == '\r' || *text == '\n')
		text++;
	n = strlen(text);
	while (n && strchr(" \t\r\n", text[n - 1]))
		n--;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].word) == n && !strncmp(words[i].word, text, n))
			return words[i].st;
	return INST_UNKNOWN;
}

const char *inst_state_known_words(void)
{
	return "RUNNING, PROVISIONING, STAGING, STOPPING, SUSPENDING, TERMINATED, SUSPENDED "
	       "(gcloud); pending, running, stopping, shutting-down, stopped, terminated "
	       "(aws); PowerState/running, /starting, /stopping, /deallocating, /deallocated (az)";
}

/* ---------------------------------------------------------------- credentials */

static const struct { const char *needle; const char *hint; } creds[] = {
	{ "invalid_rapt",
	  "Google Workspace session control ended the gcloud user credentials (invalid_grant: "
	  "invalid_rapt, reauthentication required): run 'gcloud auth login'; for unattended "
	  "runs use a service account ('gcloud auth activate-service-account --key-file=KEY.json'), "
	  "which session control does not expire" },
	{ "invalid_grant",
	  "the gcloud credentials were refused (invalid_grant): run 'gcloud auth login', or use a "
	  "service account for unattended runs" },
	{ "gcloud auth login", "the gcloud credentials are missing or expired: run 'gcloud auth login'" },
	{ "Reauthentication", "the gcloud credentials need reauthentication: run 'gcloud auth login'" },
	{ "ExpiredToken", "the AWS credentials have expired: run 'aws sso login' (or refresh the "
			  "session token in the environment / ~/.aws/credentials)" },
	{ "RequestExpired", "the AWS request expired: check this machine's clock and the "
			    "credentials ('aws sso login')" },
	{ "Token has expired", "the AWS SSO session has expired: run 'aws sso login'" },
	{ "Unable to locate credentials", "no AWS credentials: run 'aws configure' or 'aws sso login'" },
	{ "AuthFailure", "AWS refused the credentials (AuthFailure): run 'aws sso login' or check "
			 "AWS_ACCESS_KEY_ID / ~/.aws/credentials" },
	{ "InvalidClientTokenId", "AWS does not know this access key: check AWS_ACCESS_KEY_ID or "
				  "~/.aws/credentials ('aws configure')" },
	{ "SignatureDoesNotMatch", "AWS refused the request signature: check AWS_SECRET_ACCESS_KEY "
				   "or ~/.aws/credentials" },
	{ "az login", "the Azure CLI is not logged in or its token expired: run 'az login'" },
	{ "AADSTS", "Azure AD refused the credentials: run 'az login'" },
};

const char *cloud_cred_hint(const char *text)
{
	size_t i;
	if (!text)
		return NULL;
	for (i = 0; i < sizeof(creds) / sizeof(creds[0]); i++)
		if (strstr(text, creds[i].needle))
			return creds[i].hint;
	return NULL;
}
