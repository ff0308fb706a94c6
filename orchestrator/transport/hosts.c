/* hosts.c -- load and validate the hosts inventory (docs/hosts.md).
 *
 * Design: like spec.c, one strict pass over the parsed JSON that stops at
 * the first problem and names it by JSON path ("hosts[1].port"). A host
 * that names an "ssh_alias" (or has no "address") is resolved by running
 * `ssh [-F ssh_config] -G ALIAS` through proc_run(), so it resolves exactly
 * as ssh would; the fields given in the file then override what ssh said.
 * Identity files are checked for readability here, before anything
 * connects, so a wrong key path is a usage error and not an auth failure. */
#include "transport/hosts.h"

#include <ctype.h>
#include <errno.h>
#include <math.h> /* isfinite only: no -lm needed */
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/fsutil.h"
#include "core/proc.h"
#include "core/jsonutil.h"
#include "core/banned.h"

#define DEFAULT_WORKDIR ".gpuorch"
#define DEFAULT_CONNECT_TIMEOUT_S 10
#define DEFAULT_EXECD_IDLE_S 1800   /* the host's execd leaves after this long unused */

struct hctx {
	const char *label;
	const char *dir;        /* directory of the hosts file */
	struct strbuf *err;
	struct strbuf path;
};

#define TRY(x) do { enum go_status try_st_ = (x); if (try_st_ != GO_OK) return try_st_; } while (0)

/* ---------------------------------------------------------------- messages */

static enum go_status bad(struct hctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static enum go_status bad(struct hctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	json_verror(c->err, c->label, c->path.buf, fmt, ap);
	va_end(ap);
	return GO_ERR_HOSTS;
}

static size_t push(struct hctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static size_t push(struct hctx *c, const char *fmt, ...)
{
	size_t mark = c->path.len;
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(&c->path, fmt, ap);
	va_end(ap);
	return mark;
}

static void pop(struct hctx *c, size_t mark)
{
	strbuf_setlen(&c->path, mark);
}

static enum go_status check_keys(struct hctx *c, const cJSON *obj, const char *const *allowed)
{
	const cJSON *it, *prev;
	for (it = obj->child; it; it = it->next) {
		const char *const *a;
		const char *best;
		for (prev = obj->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return bad(c, "key '%s' appears twice", it->string);
		for (a = allowed; *a && strcmp(*a, it->string); a++)
			;
		if (*a)
			continue;
		best = str_suggest(it->string, allowed);
		if (best)
			return bad(c, "unknown key '%s' (did you mean '%s'?)", it->string, best);
		return bad(c, "unknown key '%s' (see docs/hosts.md for the keys a host may have)",
			   it->string);
	}
	return GO_OK;
}

/* ---------------------------------------------------------------- helpers */

static const char *home_dir(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;
	if (h && *h)
		return h;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pw->pw_dir : "/";
}

/* "~" and "~/x" -> $HOME, $HOME/x (a new string). */
static char *expand_tilde(const char *p)
{
	if (p[0] == '~' && (p[1] == '\0' || p[1] == '/'))
		return xstrfmt("%s%s", home_dir(), p + 1);
	return xstrdup(p);
}

/* A local path from the hosts file: "~" is $HOME; a relative path is
 * relative to the directory of the hosts file (not to the current one). */
static char *local_path(const struct hctx *c, const char *p)
{
	if (p[0] == '~' || p[0] == '/' || !strcmp(c->dir, "."))
		return expand_tilde(p);
	return xstrfmt("%s/%s", c->dir, p);
}

static char *default_user(void)
{
	const char *u = getenv("USER");
	struct passwd *pw;
	if (u && *u)
		return xstrdup(u);
	pw = getpwuid(getuid());
	return xstrdup(pw && pw->pw_name ? pw->pw_name : "root");
}

static int is_readable_file(const char *p)
{
	return fs_is_file(p) && access(p, R_OK) == 0;
}

static const char *unreadable_reason(const char *p)
{
	if (access(p, R_OK) < 0)
		return strerror(errno);
	if (fs_is_dir(p))
		return "is a directory";
	return "not a regular file";
}

static int is_arch(const char *s)
{
	int digits = 0;
	if (strncmp(s, "sm_", 3) || s[3] == '0')
		return 0;
	for (s += 3; isdigit((unsigned char)*s); s++)
		digits++;
	if (*s == 'a')
		s++;
	return !*s && digits >= 2 && digits <= 3;
}

static int is_safe_name(const char *s)
{
	if (!*s || !isalnum((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return 0;
	return 1;
}

/* A string member; NULL when absent. */
static enum go_status get_str(struct hctx *c, const cJSON *obj, const char *key, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	size_t mark;
	const char *s;
	if (!v)
		return GO_OK;
	mark = push(c, ".%s", key);
	if (!cJSON_IsString(v))
		return bad(c, "expected a string, found %s", json_type_name(v));
	if (!*v->valuestring)
		return bad(c, "must not be empty");
	for (s = v->valuestring; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return bad(c, "must not contain control characters");
	pop(c, mark);
	*out = xstrdup(v->valuestring);
	return GO_OK;
}

/* A whole number small enough to print exactly (no libm needed). */
static int is_integral(double v)
{
	return v >= -9e15 && v <= 9e15 && v == (double)(long long)v;
}

static enum go_status get_int(struct hctx *c, const cJSON *obj, const char *key, int lo,
			      int hi, int *out, int *given)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	size_t mark;
	if (given)
		*given = v != NULL;
	if (!v)
		return GO_OK;
	mark = push(c, ".%s", key);
	if (!cJSON_IsNumber(v))
		return bad(c, "expected an integer from %d to %d, found %s", lo, hi, json_type_name(v));
	if (!is_integral(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
		return bad(c, "expected an integer from %d to %d, found %.17g", lo, hi,
			   v->valuedouble);
	pop(c, mark);
	*out = (int)v->valuedouble;
	return GO_OK;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* "gpus": [0, 2] (the GPUs the host's steps run on) or "gpu_index": N (the
 * same as [N]); neither: every GPU the probe lists. */
static enum go_status get_gpus(struct hctx *c, const cJSON *v, struct host *h)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(v, "gpus"), *e;
	int given = 0, i;
	size_t mark;

	TRY(get_int(c, v, "gpu_index", 0, HOST_MAX_GPUS - 1, &h->gpu_index, &given));
	if (given)
		h->gpus[h->ngpus++] = h->gpu_index;
	if (!a)
		return GO_OK;
	mark = push(c, ".gpus");
	if (given)
		return bad(c, "give either \"gpus\" or \"gpu_index\", not both (\"gpu_index\": N is \"gpus\": [N])");
	if (!cJSON_IsArray(a) || !cJSON_GetArraySize(a))
		return bad(c, "expected a list of GPU indices as nvidia-smi numbers them, e.g. [0, 2]; leave \"gpus\" out to use every GPU of the host");
	if (cJSON_GetArraySize(a) > HOST_MAX_GPUS)
		return bad(c, "lists %d GPUs; at most %d", cJSON_GetArraySize(a), HOST_MAX_GPUS);
	cJSON_ArrayForEach(e, a) {
		if (!cJSON_IsNumber(e) || !is_integral(e->valuedouble) || e->valuedouble < 0 ||
		    e->valuedouble >= HOST_MAX_GPUS)
			return bad(c, "item %d: expected a GPU index from 0 to %d (nvidia-smi's numbering)",
				   h->ngpus, HOST_MAX_GPUS - 1);
		h->gpus[h->ngpus++] = (int)e->valuedouble;
	}
	qsort(h->gpus, (size_t)h->ngpus, sizeof(h->gpus[0]), cmp_int);
	for (i = 1; i < h->ngpus; i++)
		if (h->gpus[i] == h->gpus[i - 1])
			return bad(c, "GPU %d is listed twice", h->gpus[i]);
	h->gpu_index = h->gpus[0];
	pop(c, mark);
	return GO_OK;
}

static void host_slurm_free(struct host_slurm *s)
{
	if (!s)
		return;
	free(s->url);
	free(s->partition);
	free(s->gpus);
	free(s->gres);
	free(s->account);
	free(s->qos);
	free(s->constraint);
	free(s->user);
	free(s->token_file);
	free(s);
}

static void host_release(struct host *h)
{
	int i;
	for (i = 0; i < h->nenv; i++) {
		free(h->env[i].name);
		free(h->env[i].value);
	}
	free(h->env);
	host_slurm_free(h->slurm);
	free(h->name);
	free(h->address);
	free(h->user);
	free(h->identity);
	free(h->known_hosts);
	free(h->cuda_home);
	free(h->python);
	free(h->workdir);
	free(h->gpu);
	free(h->arch);
	cJSON_Delete(h->instance);
	free(h->instance_path);
	memset(h, 0, sizeof(*h));
}

/* ---------------------------------------------------------------- ssh -G */

struct alias_info {
	char *hostname;
	char *user;
	int port;
	char *identity;       /* first existing identityfile, or NULL */
	char *known_hosts;    /* first userknownhostsfile */
};

static void alias_release(struct alias_info *a)
{
	free(a->hostname);
	free(a->user);
	free(a->identity);
	free(a->known_hosts);
	memset(a, 0, sizeof(*a));
}

static enum go_status resolve_alias(struct hctx *c, const char *host, const char *alias,
				    const char *config, struct alias_info *ai)
{
	struct strbuf out = STRBUF_INIT, eo = STRBUF_INIT;
	const char *argv[6];
	int n = 0, code = 0;
	enum go_status st;
	char *line, *next;

	memset(ai, 0, sizeof(*ai));
	if (alias[0] == '-' || strchr(alias, ' '))
		return bad(c, "'%s' is not a valid ssh host alias", alias);
	argv[n++] = "ssh";
	if (config) {
		argv[n++] = "-F";
		argv[n++] = config;
	}
	argv[n++] = "-G";
	argv[n++] = alias;
	argv[n] = NULL;
	st = proc_run(NULL, argv, &out, &eo, &code, c->err);
	if (st != GO_OK) {
		enum go_status r = bad(c, "cannot resolve host '%s' with 'ssh -G %s': %s", host,
				       alias, st == GO_ERR_NOT_FOUND ? "ssh is not installed"
								     : "cannot run ssh");
		strbuf_release(&out);
		strbuf_release(&eo);
		return r;
	}
	if (code != 0) {
		strbuf_trim(&eo);
		st = bad(c, "'ssh -G %s' failed for host '%s' (exit %d): %.*s", alias, host, code,
			 (int)strcspn(eo.buf, "\n"), eo.buf);
		strbuf_release(&out);
		strbuf_release(&eo);
		return st;
	}
	for (line = out.buf; line && *line; line = next) {
		char *sp, *val;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		val = sp + 1;
		if (!strcmp(line, "hostname") && !ai->hostname) {
			ai->hostname = xstrdup(val);
		} else if (!strcmp(line, "user") && !ai->user) {
			ai->user = xstrdup(val);
		} else if (!strcmp(line, "port")) {
			ai->port = atoi(val);
		} else if (!strcmp(line, "identityfile") && !ai->identity) {
			char *p = expand_tilde(val);
			if (is_readable_file(p))
				ai->identity = p;
			else
				free(p);
		} else if (!strcmp(line, "userknownhostsfile") && !ai->known_hosts) {
			val[strcspn(val, " ")] = '\0';
			if (*val && strcmp(val, "none"))
				ai->known_hosts = expand_tilde(val);
		}
	}
	strbuf_release(&out);
	strbuf_release(&eo);
	if (!ai->hostname) {
		alias_release(ai);
		return bad(c, "'ssh -G %s' printed no hostname for host '%s'", alias, host);
	}
	return GO_OK;
}

/* ---------------------------------------------------------------- clusters */

/* "http://h:p[/]", "https://...", or "unix:/abs/path" */
static int is_rest_url(const char *u)
{
	const char *p;
	if (!strncmp(u, "unix:/", 6))
		return 1;
	if (!strncmp(u, "http://", 7))
		p = u + 7;
	else if (!strncmp(u, "https://", 8))
		p = u + 8;
	else
		return 0;
	if (!*p || *p == '/' || *p == ':')
		return 0;
	for (; *p; p++)
		if (*p == ' ' || *p == '?' || *p == '#')
			return 0;
	return 1;
}

static int is_slurm_word(const char *s)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-:,", *s))
			return 0;
	return 1;
}

static enum go_status parse_slurm(struct hctx *c, const cJSON *v, struct host_slurm *s)
{
	static const char *const keys[] = { "url", "partition", "gpus", "gres", "account", "qos",
					    "constraint", "user", "token_file", "time_limit_min",
					    "max_jobs", "cpus_per_job", "token_lifespan_s",
					    "queue_timeout_s", NULL };
	static const char *const words[] = { "partition", "gpus", "gres", "account", "qos",
					     "user", NULL };
	char **wv[] = { &s->partition, &s->gpus, &s->gres, &s->account, &s->qos, &s->user };
	size_t mark = push(c, ".slurm");
	int i;

	if (!cJSON_IsObject(v))
		return bad(c, "expected an object {\"url\": ..., \"partition\": ...}, found %s",
			   json_type_name(v));
	TRY(check_keys(c, v, keys));
	if (!cJSON_GetObjectItemCaseSensitive(v, "url"))
		return bad(c, "missing required key 'url' (slurmrestd's address, e.g. \"http://login1:6820\" or \"unix:/run/slurmrestd.socket\")");
	if (!cJSON_GetObjectItemCaseSensitive(v, "partition"))
		return bad(c, "missing required key 'partition' (the Slurm partition the jobs go to)");
	TRY(get_str(c, v, "url", &s->url));
	if (!is_rest_url(s->url)) {
		push(c, ".url");
		return bad(c, "'%s' is not a slurmrestd address; expected http://HOST:PORT, https://HOST:PORT or unix:/PATH",
			   s->url);
	}
	for (i = 0; words[i]; i++) {
		TRY(get_str(c, v, words[i], wv[i]));
		if (*wv[i] && !is_slurm_word(*wv[i])) {
			push(c, ".%s", words[i]);
			return bad(c, "'%s' has a character Slurm does not allow here (letters, digits and . _ - : , only)",
				   *wv[i]);
		}
	}
	TRY(get_str(c, v, "constraint", &s->constraint));
	TRY(get_str(c, v, "token_file", &s->token_file));
	if (s->token_file) {
		char *p = local_path(c, s->token_file);
		free(s->token_file);
		s->token_file = p;
		if (!is_readable_file(p)) {
			push(c, ".token_file");
			return bad(c, "cannot read token file '%s': %s; write a JWT there (scontrol token) or drop the key to mint one over SSH",
				   p, unreadable_reason(p));
		}
	}
	s->time_limit_min = 30;
	s->max_jobs = 16;
	s->cpus_per_job = 1;
	s->token_lifespan_s = 3600;
	TRY(get_int(c, v, "time_limit_min", 1, 525600, &s->time_limit_min, NULL));
	TRY(get_int(c, v, "max_jobs", 1, 4096, &s->max_jobs, NULL));
	TRY(get_int(c, v, "cpus_per_job", 1, 1024, &s->cpus_per_job, NULL));
	TRY(get_int(c, v, "token_lifespan_s", 60, 31536000, &s->token_lifespan_s, NULL));
	TRY(get_int(c, v, "queue_timeout_s", 0, 31536000, &s->queue_timeout_s, NULL));
	pop(c, mark);
	return GO_OK;
}

/* ---------------------------------------------------------------- hosts */

/* "env": {"NAME": "value", ...}, names and values as core/shellenv.h says */
static enum go_status parse_env(struct hctx *c, const cJSON *obj, struct host *h)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "env"), *it, *prev;
	struct strbuf why = STRBUF_INIT;
	size_t mark;
	if (!v)
		return GO_OK;
	mark = push(c, ".env");
	if (!cJSON_IsObject(v))
		return bad(c, "expected an object of variables, e.g. {\"PATH\": \"/opt/cmake-3.30/bin:$PATH\"}, found %s",
			   json_type_name(v));
	h->env = xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(*h->env));
	cJSON_ArrayForEach(it, v) {
		size_t m2 = push(c, ".%s", it->string);
		for (prev = v->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return bad(c, "'%s' is given twice; keep one", it->string);
		if (!env_name_ok(it->string, &why) ||
		    (cJSON_IsString(it) && !env_value_ok(it->valuestring, &why))) {
			enum go_status st = bad(c, "%s", why.buf);
			strbuf_release(&why);
			return st;
		}
		if (!cJSON_IsString(it))
			return bad(c, "expected a string, found %s", json_type_name(it));
		pop(c, m2);
		h->env[h->nenv].name = xstrdup(it->string);
		h->env[h->nenv++].value = xstrdup(it->valuestring);
	}
	pop(c, mark);
	return GO_OK;
}

/* persist_s with the other keys: a plain host, an execd to carry it */
static enum go_status check_persist(struct hctx *c, const struct host *h)
{
	if (h->persist_s && h->slurm) {
		push(c, ".persist_s");
		return bad(c, "host '%s': \"persist_s\" is for a plain SSH host; remove it from the cluster entry",
			   h->name);
	}
	if (h->persist_s && !h->execd_idle_s) {
		push(c, ".persist_s");
		return bad(c, "host '%s': a kept session carries the commands that go through the host's execd, and \"execd_idle_s\" is 0; set \"execd_idle_s\" above 0 or \"persist_s\" to 0",
			   h->name);
	}
	return GO_OK;
}

static enum go_status parse_host(struct hctx *c, const cJSON *v, struct host *h)
{
	static const char *const keys[] = { "name", "address", "port", "user", "identity",
					    "known_hosts", "cuda_home", "workdir", "gpu", "arch",
					    "connect_timeout_s", "gpu_index", "gpus", "ssh_alias",
					    "ssh_config", "python", "max_builds", "execd_idle_s", "persist_s", "slurm",
					    "login", "instance", "env", NULL };
	static const char *const login_keys[] = { "address", "port", "user", "identity",
						  "known_hosts", "ssh_alias", "ssh_config",
						  "connect_timeout_s", NULL };
	static const char *const ssh_keys[] = { "address", "port", "user", "identity",
						"known_hosts", "ssh_alias", "ssh_config", NULL };
	const cJSON *sl, *login, *ssh;
	size_t login_mark = 0;
	char *alias = NULL, *config = NULL, *identity = NULL, *known = NULL;
	struct alias_info ai;
	enum go_status st = GO_OK;
	int port_given = 0;

	memset(&ai, 0, sizeof(ai));
	if (!cJSON_IsObject(v))
		return bad(c, "expected an object, found %s", json_type_name(v));
	TRY(check_keys(c, v, keys));
	if (!cJSON_GetObjectItemCaseSensitive(v, "name"))
		return bad(c, "missing required key 'name'");
	TRY(get_str(c, v, "name", &h->name));
	if (!is_safe_name(h->name) || strlen(h->name) > 64) {
		push(c, ".name");
		return bad(c, "'%s' is not a valid host name (1-64 letters, digits, '.', '_', '-'; starting with a letter or digit)",
			   h->name);
	}
	h->port = 22;
	h->connect_timeout_s = DEFAULT_CONNECT_TIMEOUT_S;
	/* a cluster: the SSH fields are the login node's, in "login" */
	sl = cJSON_GetObjectItemCaseSensitive(v, "slurm");
	login = cJSON_GetObjectItemCaseSensitive(v, "login");
	ssh = v;
	if (sl) {
		const char *const *k;
		h->slurm = xcalloc(1, sizeof(*h->slurm));
		TRY(parse_slurm(c, sl, h->slurm));
		for (k = ssh_keys; *k; k++)
			if (cJSON_GetObjectItemCaseSensitive(v, *k)) {
				push(c, ".%s", *k);
				return bad(c, "a cluster entry (with \"slurm\") takes its SSH fields in \"login\": move '%s' into \"login\"",
					   *k);
			}
		if (!login)
			return bad(c, "a cluster entry (with \"slurm\") needs \"login\": {\"address\": ..., \"user\": ...}, the login node that sources ship to");
		login_mark = push(c, ".login");
		if (!cJSON_IsObject(login))
			return bad(c, "expected an object, found %s", json_type_name(login));
		TRY(check_keys(c, login, login_keys));
		TRY(get_int(c, login, "connect_timeout_s", 1, 600, &h->connect_timeout_s, NULL));
		ssh = login;
	} else if (login) {
		push(c, ".login");
		return bad(c, "'login' is for a Slurm cluster entry only (one with \"slurm\"); a plain host takes \"address\", \"user\" ... directly");
	}
	TRY(get_str(c, ssh, "address", &h->address));
	TRY(get_int(c, ssh, "port", 1, 65535, &h->port, &port_given));
	TRY(get_str(c, ssh, "user", &h->user));
	TRY(get_str(c, v, "cuda_home", &h->cuda_home));
	TRY(get_str(c, v, "python", &h->python));
	TRY(get_str(c, v, "workdir", &h->workdir));
	TRY(get_str(c, v, "gpu", &h->gpu));
	TRY(get_str(c, v, "arch", &h->arch));
	if (h->arch && !is_arch(h->arch)) {
		push(c, ".arch");
		return bad(c, "'%s' is not an arch; expected a string like \"sm_89\" or \"sm_90a\"",
			   h->arch);
	}
	TRY(get_int(c, v, "connect_timeout_s", 1, 600, &h->connect_timeout_s, NULL));
	TRY(get_gpus(c, v, h));
	TRY(get_int(c, v, "max_builds", 1, 1024, &h->max_builds, NULL));
	h->execd_idle_s = DEFAULT_EXECD_IDLE_S;
	TRY(get_int(c, v, "execd_idle_s", 0, 604800, &h->execd_idle_s, NULL));
	TRY(get_int(c, v, "persist_s", 0, 86400, &h->persist_s, NULL));
	TRY(check_persist(c, h));
	TRY(parse_env(c, v, h));
	{
		/* A cloud instance behind the host: checked by cloud/instance.c
		 * (a layer above), before anything starts; kept here as given. */
		const cJSON *inst = cJSON_GetObjectItemCaseSensitive(v, "instance");
		if (inst) {
			h->instance = cJSON_Duplicate(inst, 1);
			h->instance_path = xstrfmt("%s.instance", c->path.buf);
		}
	}
	if (!h->workdir)
		h->workdir = xstrdup(DEFAULT_WORKDIR);

	if ((st = get_str(c, ssh, "ssh_alias", &alias)) != GO_OK ||
	    (st = get_str(c, ssh, "ssh_config", &config)) != GO_OK ||
	    (st = get_str(c, ssh, "identity", &identity)) != GO_OK ||
	    (st = get_str(c, ssh, "known_hosts", &known)) != GO_OK)
		goto out;
	if (config) {
		char *p = local_path(c, config);
		free(config);
		config = p;
		if (!is_readable_file(config)) {
			push(c, ".ssh_config");
			st = bad(c, "cannot read ssh config file '%s' for host '%s': %s", config,
				 h->name, unreadable_reason(config));
			goto out;
		}
		if (!alias && h->address) {
			push(c, ".ssh_config");
			st = bad(c, "'ssh_config' is used only with 'ssh_alias' (or without 'address')");
			goto out;
		}
	}
	if (alias || !h->address) {
		st = resolve_alias(c, h->name, alias ? alias : h->name, config, &ai);
		if (st != GO_OK)
			goto out;
		if (!h->address)
			h->address = xstrdup(ai.hostname);
		if (!h->user && ai.user)
			h->user = xstrdup(ai.user);
		if (!port_given && ai.port > 0 && ai.port <= 65535)
			h->port = ai.port;
	}
	if (!h->user)
		h->user = default_user();

	if (identity && !strcmp(identity, "agent")) {
		h->use_agent = 1;
	} else if (identity) {
		h->identity = local_path(c, identity);
		if (!is_readable_file(h->identity)) {
			push(c, ".identity");
			st = bad(c, "cannot read identity file '%s' for host '%s': %s; fix the path or use \"identity\": \"agent\"",
				 h->identity, h->name, unreadable_reason(h->identity));
			goto out;
		}
	} else if (ai.identity) {
		h->identity = xstrdup(ai.identity);
	} else {
		h->use_agent = 1;
	}

	if (known)
		h->known_hosts = local_path(c, known);
	else if (ai.known_hosts)
		h->known_hosts = xstrdup(ai.known_hosts);
	else
		h->known_hosts = expand_tilde("~/.ssh/known_hosts");
	if (sl)
		pop(c, login_mark);
	if (sl && !h->slurm->user)
		h->slurm->user = xstrdup(h->user);
out:
	alias_release(&ai);
	free(alias);
	free(config);
	free(identity);
	free(known);
	return st;
}

enum go_status hosts_load(const char *path, struct hosts **out, struct strbuf *err)
{
	static const char *const top_keys[] = { "hosts", NULL };
	struct hctx c;
	struct hosts *h;
	cJSON *root = NULL;
	const cJSON *arr, *it;
	enum go_status st;
	int i = 0, n, j;
	char *dir;

	*out = NULL;
	st = json_load_file(path, &root, GO_ERR_HOSTS, err);
	if (st != GO_OK)
		return st;
	c.label = path;
	c.dir = dir = fs_dirname(path);
	c.err = err;
	strbuf_init(&c.path, 0);
	h = xcalloc(1, sizeof(*h));
	h->path = xstrdup(path);

	if (!cJSON_IsObject(root)) {
		st = bad(&c, "expected a JSON object {\"hosts\": [...]} at the top level, found %s",
			 json_type_name(root));
		goto out;
	}
	if ((st = check_keys(&c, root, top_keys)) != GO_OK)
		goto out;
	arr = cJSON_GetObjectItemCaseSensitive(root, "hosts");
	if (!arr) {
		st = bad(&c, "missing required key 'hosts'");
		goto out;
	}
	push(&c, "hosts");
	if (!cJSON_IsArray(arr)) {
		st = bad(&c, "expected an array of hosts, found %s", json_type_name(arr));
		goto out;
	}
	n = cJSON_GetArraySize(arr);
	if (!n) {
		st = bad(&c, "lists no hosts");
		goto out;
	}
	h->v = xcalloc((size_t)n, sizeof(*h->v));
	cJSON_ArrayForEach(it, arr) {
		size_t mark = push(&c, "[%d]", i);
		st = parse_host(&c, it, &h->v[i]);
		h->n = ++i;
		if (st != GO_OK)
			goto out;
		for (j = 0; j < i - 1; j++) {
			if (!strcmp(h->v[j].name, h->v[i - 1].name)) {
				push(&c, ".name");
				st = bad(&c, "host \"%s\" is defined twice (also 'hosts[%d]')",
					 h->v[j].name, j);
				goto out;
			}
		}
		pop(&c, mark);
	}
out:
	strbuf_release(&c.path);
	free(dir);
	cJSON_Delete(root);
	if (st != GO_OK) {
		hosts_free(h);
		return st;
	}
	*out = h;
	return GO_OK;
}

void hosts_free(struct hosts *h)
{
	int i;
	if (!h)
		return;
	for (i = 0; i < h->n; i++)
		host_release(&h->v[i]);
	free(h->v);
	free(h->path);
	free(h);
}

enum go_status hosts_select(struct hosts *h, char **names, int nnames, struct strbuf *err)
{
	struct host *sel;
	char *taken;
	int i, j;

	if (nnames <= 0)
		return GO_OK;
	for (i = 0; i < nnames; i++) {
		for (j = 0; j < h->n; j++)
			if (!strcmp(h->v[j].name, names[i]))
				break;
		if (j == h->n) {
			struct strbuf known = STRBUF_INIT;
			enum go_status st;
			for (j = 0; j < h->n; j++)
				strbuf_addf(&known, "%s%s", j ? ", " : "", h->v[j].name);
			st = go_fail(err, GO_ERR_USAGE, "unknown host '%s' (hosts in '%s': %s)",
				     names[i], h->path, known.buf);
			strbuf_release(&known);
			return st;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(names[j], names[i]))
				return go_fail(err, GO_ERR_USAGE, "host '%s' is selected twice",
					       names[i]);
	}
	sel = xcalloc((size_t)nnames, sizeof(*sel));
	taken = xcalloc((size_t)h->n, 1);
	for (i = 0; i < nnames; i++) {
		for (j = 0; j < h->n; j++)
			if (!taken[j] && !strcmp(h->v[j].name, names[i]))
				break;
		sel[i] = h->v[j];
		taken[j] = 1;
	}
	for (j = 0; j < h->n; j++)
		if (!taken[j])
			host_release(&h->v[j]);
	free(taken);
	free(h->v);
	h->v = sel;
	h->n = nnames;
	return GO_OK;
}

/* ---------------------------------------------------------------- reaching a host */

void host_ssh_opts(const struct host *h, int accept_new_hostkey, struct ssh_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->label = h->name;
	o->address = h->address;
	o->port = h->port;
	o->user = h->user;
	o->identity = h->use_agent ? NULL : h->identity;
	o->use_agent = h->use_agent;
	o->known_hosts = h->known_hosts;
	o->accept_new_hostkey = accept_new_hostkey;
	o->connect_timeout_ms = h->connect_timeout_s * 1000;
	o->keepalive_s = 15;
}

char *host_workdir(const struct host *h, const char *home)
{
	const char *w = h->workdir ? h->workdir : ".gpuorch";
	if (w[0] == '/')
		return xstrdup(w);
	if (!strncmp(w, "~/", 2))
		w += 2;
	return xstrfmt("%s/%s", home && *home ? home : ".", w);
}
