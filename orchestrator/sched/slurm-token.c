/* slurm-token.c -- the JWT a Slurm client sends: where it comes from, when to get a new one.
 *
 * Sources, first that applies: none for a unix:/ socket (slurmrestd's local
 * auth), $SLURM_JWT, the entry's "token_file", else minted on the login node
 * over SSH with `scontrol token lifespan=N`. The token's "exp" claim (the
 * JWT's middle part, base64url JSON; decoded with libcrypto and cJSON) says
 * when it runs out: a minted token is minted again, a file read again,
 * before a fifth of its life (at least a minute) is left, so a long run never sends an expired
 * one. The token is kept in memory only and wiped when replaced. */
#include "sched/slurm-int.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "transport/ssh.h"
#include "core/banned.h"

#define MINT_TIMEOUT_MS 120000

const char *slurm_token_src_name(enum slurm_token_src s)
{
	switch (s) {
	case TOKEN_NONE: return "unix socket (local auth)";
	case TOKEN_ENV: return "SLURM_JWT";
	case TOKEN_FILE: return "token_file";
	case TOKEN_SSH: return "scontrol token over SSH";
	}
	return "?";
}

int64_t slurm_jwt_exp(const char *jwt)
{
	const char *a = strchr(jwt, '.'), *b;
	unsigned char *raw;
	char *b64;
	size_t n, i, padded;
	int len;
	int64_t exp = 0;
	cJSON *j;

	if (!a || !(b = strchr(a + 1, '.')))
		return 0;
	n = (size_t)(b - (a + 1));
	if (!n || n > 4096)
		return 0;
	padded = (n + 3) / 4 * 4;
	b64 = xmalloc(padded + 1);
	for (i = 0; i < n; i++)
		b64[i] = a[1 + i] == '-' ? '+' : a[1 + i] == '_' ? '/' : a[1 + i];
	for (; i < padded; i++)
		b64[i] = '=';
	b64[padded] = '\0';
	raw = xmalloc(padded + 1);
	len = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)padded);
	if (len > 0) {
		/* EVP_DecodeBlock counts the padding as zero bytes: trim them */
		while (len > 0 && raw[len - 1] == '\0')
			len--;
		j = cJSON_ParseWithLength((const char *)raw, (size_t)len);
		if (j && json_has_num(j, "exp"))
			exp = (int64_t)json_num(j, "exp", 0);
		cJSON_Delete(j);
	}
	free(b64);
	free(raw);
	return exp;
}

static void set_jwt(struct slurm_token *t, char *jwt)
{
	if (t->jwt) {
		memset(t->jwt, 0, strlen(t->jwt));
		free(t->jwt);
	}
	t->jwt = jwt;
	t->exp = jwt ? slurm_jwt_exp(jwt) : 0;
	t->minted_at = (int64_t)time(NULL);
}

/* A token is one line of base64url and dots. */
static int plausible_jwt(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || strchr("-_.=+/", *s)))
			return 0;
	return 1;
}

static enum go_status read_file(struct slurm_token *t, struct strbuf *err)
{
	struct strbuf sb = STRBUF_INIT;
	enum go_status st = fs_read_file(t->h->slurm->token_file, &sb, err);
	if (st != GO_OK) {
		strbuf_release(&sb);
		return st;
	}
	strbuf_trim(&sb);
	if (!strncmp(sb.buf, "SLURM_JWT=", 10)) {
		memmove(sb.buf, sb.buf + 10, sb.len - 9);
		sb.len -= 10;
	}
	if (!plausible_jwt(sb.buf)) {
		memset(sb.buf, 0, sb.len);
		strbuf_release(&sb);
		return go_fail(err, GO_ERR_AUTH, "token file '%s' for cluster '%s' holds no JWT (one line from `scontrol token`)",
			       t->h->slurm->token_file, t->h->name);
	}
	set_jwt(t, strbuf_detach(&sb, NULL));
	return GO_OK;
}

static enum go_status mint(struct slurm_token *t, struct strbuf *err)
{
	struct ssh_opts o;
	struct ssh_conn *conn = NULL;
	struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, eo = STRBUF_INIT;
	struct ssh_exec_result res;
	enum go_status st;
	char *line, *end;

	host_ssh_opts(t->h, 0, &o);
	st = ssh_connect(&o, &conn, err);
	if (st != GO_OK) {
		struct strbuf why = STRBUF_INIT;
		strbuf_addstr(&why, err->buf);
		st = go_fail(err, st, "cluster '%s': cannot mint a Slurm token on the login node: %s",
			     t->h->name, why.buf);
		strbuf_release(&why);
		return st;
	}
	strbuf_addf(&cmd, "scontrol token lifespan=%d", t->h->slurm->token_lifespan_s);
	memset(&res, 0, sizeof(res));
	st = ssh_exec(conn, cmd.buf, NULL, 0, &out, &eo, &res, MINT_TIMEOUT_MS, err);
	ssh_disconnect(conn);
	if (st == GO_OK && (res.signal[0] || res.exit_code != 0)) {
		struct strbuf how = STRBUF_INIT;
		ssh_exec_add_end(&how, &res);
		strbuf_trim(&eo);
		st = go_fail(err, GO_ERR_AUTH, "cluster '%s': `%s` on the login node failed (%s): %.*s; AuthAltTypes=auth/jwt must be set in slurm.conf, or set SLURM_JWT / \"token_file\"",
			     t->h->name, cmd.buf, how.buf, (int)strcspn(eo.buf, "\n"), eo.buf);
		strbuf_release(&how);
	}
	if (st == GO_OK) {
		line = strstr(out.buf, "SLURM_JWT=");
		if (!line) {
			st = go_fail(err, GO_ERR_AUTH, "cluster '%s': `%s` printed no SLURM_JWT=... line",
				     t->h->name, cmd.buf);
		} else {
			line += 10;
			end = line + strcspn(line, "\r\n \t");
			*end = '\0';
			if (!plausible_jwt(line))
				st = go_fail(err, GO_ERR_AUTH, "cluster '%s': `%s` printed something that is not a JWT",
					     t->h->name, cmd.buf);
			else {
				set_jwt(t, xstrdup(line));
				t->mints++;
			}
		}
	}
	memset(out.buf, 0, out.len);
	strbuf_release(&out);
	strbuf_release(&eo);
	strbuf_release(&cmd);
	return st;
}

enum go_status slurm_token_init(struct slurm_token *t, const struct host *h, struct strbuf *err)
{
	const char *env = getenv("SLURM_JWT");
	memset(t, 0, sizeof(*t));
	t->h = h;
	if (!strncmp(h->slurm->url, "unix:", 5)) {
		t->src = TOKEN_NONE;
		return GO_OK;
	}
	if (env && *env) {
		if (!plausible_jwt(env))
			return go_fail(err, GO_ERR_AUTH, "SLURM_JWT is set but holds no JWT; unset it or put the token from `scontrol token` in it");
		t->src = TOKEN_ENV;
		set_jwt(t, xstrdup(env));
		return GO_OK;
	}
	if (h->slurm->token_file) {
		t->src = TOKEN_FILE;
		return read_file(t, err);
	}
	t->src = TOKEN_SSH;
	return mint(t, err);
}

enum go_status slurm_token_renew(struct slurm_token *t, struct strbuf *err)
{
	switch (t->src) {
	case TOKEN_SSH:
		return mint(t, err);
	case TOKEN_FILE:
		return read_file(t, err);
	case TOKEN_ENV:
		return go_fail(err, GO_ERR_AUTH, "the token in SLURM_JWT %s; get a new one with `scontrol token lifespan=N` on the login node, or unset SLURM_JWT to let gpuorch mint one over SSH",
			       t->exp && t->exp <= (int64_t)time(NULL) ? "has expired" : "was refused");
	case TOKEN_NONE:
		break;
	}
	return go_fail(err, GO_ERR_AUTH, "slurmrestd refused the unix socket's local authentication");
}

enum go_status slurm_token_current(struct slurm_token *t, const char **jwt, struct strbuf *err)
{
	int64_t now = (int64_t)time(NULL), life, margin;
	*jwt = t->jwt;
	if (t->src == TOKEN_NONE || !t->exp)
		return GO_OK;
	life = t->exp - t->minted_at;
	/* a fifth of its life, at least a minute (half of a short one) */
	margin = life / 5 > 60 ? life / 5 : life / 2 < 60 ? life / 2 : 60;
	if (t->exp - now > margin)
		return GO_OK;
	if (t->src == TOKEN_ENV) {
		if (t->exp > now)
			return GO_OK;   /* still valid; nothing can renew it */
		return slurm_token_renew(t, err);
	}
	{
		enum go_status st = slurm_token_renew(t, err);
		*jwt = t->jwt;
		return st;
	}
}

void slurm_token_release(struct slurm_token *t)
{
	set_jwt(t, NULL);
	memset(t, 0, sizeof(*t));
}
