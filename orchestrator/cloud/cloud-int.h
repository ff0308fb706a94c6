/* cloud-int.h -- what the files of cloud/ share: configuration helpers,
 * state names, credential hints (cloud-base.c) and the providers'
 * constructors. Not for use outside orchestrator/cloud/. */
#ifndef GPUORCH_CLOUD_INT_H
#define GPUORCH_CLOUD_INT_H

#include <cjson/cJSON.h>
#include "cloud/instance.h"

/* A place in the hosts file, for messages: label 'path': problem. */
struct cfg {
	const char *label;        /* the hosts file */
	const char *path;         /* "hosts[0].instance" */
	const cJSON *obj;
	struct strbuf *err;
};

enum go_status cfg_bad(const struct cfg *c, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
enum go_status cfg_keys(const struct cfg *c, const char *const *allowed);
/* Optional members: left alone when absent. */
enum go_status cfg_str(const struct cfg *c, const char *key, char **out);
enum go_status cfg_num(const struct cfg *c, const char *key, double lo, double hi, double *out);
enum go_status cfg_int(const struct cfg *c, const char *key, int lo, int hi, int *out);
/* An argument vector ["prog", "arg", ...], NULL-terminated (*out). */
enum go_status cfg_argv(const struct cfg *c, const char *key, char ***out);
enum go_status cfg_require(const struct cfg *c, const char *key);
void argv_free(char **argv);
/* "a b 'c d'" for messages and --dry-run: quoted only where needed. */
void argv_describe(struct strbuf *sb, char *const *argv);

/* A status line as the clouds print it -> a state; INST_UNKNOWN if unknown. */
enum inst_state inst_state_parse(const char *text);
/* The words inst_state_parse knows, for an error message. */
const char *inst_state_known_words(void);
/* A credential problem in a cloud tool's message: the fix, or NULL. */
const char *cloud_cred_hint(const char *text);

/* AWS credentials (provider-aws.c): AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
 * (/ AWS_SESSION_TOKEN) unless profile is set, else the profile (profile,
 * $AWS_PROFILE or "default") of $AWS_SHARED_CREDENTIALS_FILE or
 * ~/.aws/credentials; who names the user in an error. Also read by the
 * results store's S3 backend (results-s3.c). creds_release wipes them. */
struct creds {
	char *key_id, *secret, *token;
};
enum go_status creds_load(const char *profile, const char *who, struct creds *c,
			  struct strbuf *err);
void creds_release(struct creds *c);

/* Providers: parse their own keys into in->priv and set in->ops. */
enum go_status provider_command_load(struct instance *in, const struct cfg *c,
				     const char *preset);
enum go_status provider_aws_load(struct instance *in, const struct cfg *c);

#endif
