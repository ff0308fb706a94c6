/* provider-aws.c -- the native "aws" provider: EC2's Query API (Version
 * 2016-11-15) over HTTPS through transport/http.c, signed by libcurl's SigV4
 * (CURLOPT_AWS_SIGV4 "aws:amz:REGION:ec2"); no AWS CLI. DescribeInstances,
 * StartInstances, StopInstances, and for an instance gpuorch launches itself
 * ("launch": {...}) RunInstances (on-demand or spot, shutdown behaviour
 * "terminate", tagged with the host) and TerminateInstances; the XML answers
 * are read with libxml2.
 *
 * Credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN)
 * from the environment, else the profile ("profile", $AWS_PROFILE or
 * "default") of $AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials. A session
 * token is sent as X-Amz-Security-Token, which SigV4 signs. The secret and
 * the token never reach a message, a log or the record. Throttling
 * (RequestLimitExceeded, HTTP 503) is tried again with a doubling backoff.
 * The endpoint can be overridden ("endpoint": tests, other partitions). */
#include "cloud/cloud-int.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include "core/fsutil.h"
#include "core/timeutil.h"
#include "transport/http.h"
#include "core/banned.h"

#define EC2_VERSION "2016-11-15"

struct awsp {
	char *instance_id, *region, *endpoint, *profile;
	char *reach;               /* "public_ip" (default), "private_ip" or "host" */
	/* "launch": what RunInstances asks for */
	char *image_id, *instance_type, *key_name, *subnet_id, *market, *spot_max_price;
	char **security_groups;    /* NULL-terminated, or NULL */
};

void creds_release(struct creds *c)
{
	if (c->secret)
		memset(c->secret, 0, strlen(c->secret));
	if (c->token)
		memset(c->token, 0, strlen(c->token));
	free(c->key_id);
	free(c->secret);
	free(c->token);
	memset(c, 0, sizeof(*c));
}

static void release(struct instance *in)
{
	struct awsp *p = in->priv;
	if (!p)
		return;
	free(p->instance_id);
	free(p->region);
	free(p->endpoint);
	free(p->profile);
	free(p->reach);
	free(p->image_id);
	free(p->instance_type);
	free(p->key_name);
	free(p->subnet_id);
	free(p->market);
	free(p->spot_max_price);
	argv_free(p->security_groups);
	free(p);
	in->priv = NULL;
}

/* ---------------------------------------------------------------- credentials */

static char *trimmed(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && strchr(" \t\r", s[n - 1]))
		n--;
	return xstrfmt("%.*s", (int)n, s);
}

/* The [profile] section of an AWS credentials file (an INI file). */
static void creds_from_file(const char *path, const char *profile, struct creds *c)
{
	struct strbuf text = STRBUF_INIT, e = STRBUF_INIT;
	char *line, *next;
	int in_section = 0;
	if (!fs_is_file(path) || fs_read_file(path, &text, &e) != GO_OK)
		goto out;
	for (line = text.buf; line && *line; line = next) {
		char *eq, *key;
		size_t len;
		next = strchr(line, '\n');
		len = next ? (size_t)(next - line) : strlen(line);
		if (next)
			next++;
		while (len && (*line == ' ' || *line == '\t')) {
			line++;
			len--;
		}
		if (!len || *line == '#' || *line == ';')
			continue;
		if (*line == '[') {
			const char *close = memchr(line, ']', len);
			char *name = trimmed(line + 1, close ? (size_t)(close - line - 1) : len - 1);
			in_section = !strcmp(name, profile);
			free(name);
			continue;
		}
		eq = memchr(line, '=', len);
		if (!in_section || !eq)
			continue;
		key = trimmed(line, (size_t)(eq - line));
		if (!strcmp(key, "aws_access_key_id") && !c->key_id)
			c->key_id = trimmed(eq + 1, len - (size_t)(eq - line) - 1);
		else if (!strcmp(key, "aws_secret_access_key") && !c->secret)
			c->secret = trimmed(eq + 1, len - (size_t)(eq - line) - 1);
		else if (!strcmp(key, "aws_session_token") && !c->token)
			c->token = trimmed(eq + 1, len - (size_t)(eq - line) - 1);
		free(key);
	}
out:
	if (text.buf)
		memset(text.buf, 0, text.len);
	strbuf_release(&text);
	strbuf_release(&e);
}

enum go_status creds_load(const char *profile, const char *who, struct creds *c, struct strbuf *err)
{
	const char *k = getenv("AWS_ACCESS_KEY_ID"), *s = getenv("AWS_SECRET_ACCESS_KEY");
	const char *t = getenv("AWS_SESSION_TOKEN");
	memset(c, 0, sizeof(*c));
	if (k && *k && s && *s && !profile) {
		c->key_id = xstrdup(k);
		c->secret = xstrdup(s);
		c->token = t && *t ? xstrdup(t) : NULL;
	} else {
		const char *prof = profile ? profile : getenv("AWS_PROFILE");
		const char *file = getenv("AWS_SHARED_CREDENTIALS_FILE");
		char *path = file && *file ? xstrdup(file)
			     : xstrfmt("%s/.aws/credentials", getenv("HOME") ? getenv("HOME") : ".");
		if (!prof || !*prof)
			prof = "default";
		creds_from_file(path, prof, c);
		if (!c->key_id || !c->secret) {
			creds_release(c);
			go_fail(err, GO_ERR_AUTH,
				"%s: no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
				"or put profile [%s] in '%s' ('aws configure', or 'aws sso login' and "
				"export the session's credentials)", who, prof, path);
			free(path);
			return GO_ERR_AUTH;
		}
		free(path);
	}
	if (strpbrk(c->key_id, ":\r\n") || strpbrk(c->secret, "\r\n") ||
	    (c->token && strpbrk(c->token, "\r\n"))) {
		creds_release(c);
		return go_fail(err, GO_ERR_AUTH, "%s: the AWS credentials contain a line break or "
			       "the key id a ':'; check them", who);
	}
	return GO_OK;
}

static enum go_status get_creds(struct instance *in, struct creds *c, struct strbuf *err)
{
	struct awsp *p = in->priv;
	return creds_load(p->profile, in->host, c, err);
}

/* ---------------------------------------------------------------- XML */

static xmlNode *find(xmlNode *n, const char *name)
{
	for (; n; n = n->next) {
		xmlNode *r;
		if (n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name))
			return n;
		if ((r = find(n->children, name)))
			return r;
	}
	return NULL;
}

/* The text of the first element NAME under n (a new string), or NULL. */
static char *text_of(xmlNode *n, const char *name)
{
	xmlNode *e = find(n, name);
	xmlChar *t;
	char *r;
	if (!e)
		return NULL;
	t = xmlNodeGetContent(e);
	r = t ? xstrdup((const char *)t) : NULL;
	xmlFree(t);
	return r;
}

/* ---------------------------------------------------------------- requests */

/* "&k=v", v percent-encoded. Where libcurl cannot be loaded the value is
 * left out: no request is sent then (http_do fails the same way), so the
 * error is not lost. */
static void add_param(struct strbuf *body, const char *k, const char *v)
{
	struct strbuf ignored = STRBUF_INIT;
	strbuf_addf(body, "&%s=", k);
	http_escape(body, v, &ignored);
	strbuf_release(&ignored);
}

/* How one EC2 action is sent (call_ex). */
struct call_how {
	int no_id;        /* do not send the instance's id (a filtered DescribeInstances) */
	int once;         /* one attempt: the caller decides what a lost reply means */
	int ambiguous;    /* out: no clear answer came (timeout, cut off, 5xx, not XML): the
			   * request may have been carried out */
	int throttled;    /* out: refused for the request rate (not carried out): try again */
};

/* One EC2 action; *doc is the parsed answer of a 2xx reply. params: more
 * "&Key=Value" pairs, already escaped (add_param), or NULL; the instance's
 * id is sent with every action but RunInstances (and how->no_id). An
 * InvalidInstanceID.NotFound answer is GO_ERR_NOT_FOUND: EC2 says, for
 * sure, that the instance does not exist. */
static enum go_status call_ex(struct instance *in, const char *action, const char *params,
			      struct call_how *how, xmlDoc **doc, struct strbuf *err)
{
	struct awsp *p = in->priv;
	struct creds cr;
	struct strbuf body = STRBUF_INIT, hdr = STRBUF_INIT;
	struct http_answer ans = {.body = STRBUF_INIT};
	enum go_status st;
	int attempt, max = how->once ? 1 : in->retries + 3;
	int64_t backoff = 500;
	char *url = p->endpoint ? xstrdup(p->endpoint)
				: xstrfmt("https://ec2.%s.amazonaws.com/", p->region);
	char *sigv4 = xstrfmt("aws:amz:%s:ec2", p->region);

	*doc = NULL;
	how->ambiguous = 0;
	if ((st = get_creds(in, &cr, err)) != GO_OK)
		goto out;
	for (attempt = 0; attempt < max; attempt++) {
		const char *headers[3] = {"Content-Type: application/x-www-form-urlencoded; charset=utf-8", NULL, NULL};
		struct http_request rq = {.url = url, .headers = headers, .timeout_s = in->timeout_s,
					  .aws_sigv4 = sigv4, .user = cr.key_id, .password = cr.secret};
		char *ecode = NULL, *emsg = NULL;
		long code;
		xmlDoc *d;

		strbuf_reset(&body);
		strbuf_addf(&body, "Action=%s&Version=%s", action, EC2_VERSION);
		if (strcmp(action, "RunInstances") && p->instance_id && !how->no_id)
			add_param(&body, "InstanceId.1", p->instance_id);
		if (params)
			strbuf_addstr(&body, params);
		rq.body = body.buf;
		rq.body_len = body.len;
		if (cr.token) {
			strbuf_reset(&hdr);
			strbuf_addf(&hdr, "X-Amz-Security-Token: %s", cr.token);
			headers[1] = hdr.buf;
		}
		st = http_do(&rq, &ans, err);
		if (hdr.len)
			memset(hdr.buf, 0, hdr.len);
		how->ambiguous = how->throttled = 0;
		if (st != GO_OK)
			break;
		code = ans.status;
		if (ans.failure) {
			st = go_fail(err, ans.failure == HTTP_TIMED_OUT ? GO_ERR_TIMEOUT : GO_ERR_CONNECT,
				     "%s: EC2 %s at %s: %s", in->host, action, url, ans.why);
			if (ans.failure == HTTP_TIMED_OUT || ans.failure == HTTP_PARTIAL ||
			    ans.failure == HTTP_RECV_ERROR || ans.failure == HTTP_GOT_NOTHING) {
				how->ambiguous = 1;   /* sent: it may have been acted on */
				goto again;
			}
			break;
		}
		d = xmlReadMemory(ans.body.buf, (int)ans.body.len, "ec2.xml", NULL,
				  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
		if (!d) {
			st = go_fail(err, GO_ERR_REMOTE, "%s: EC2 %s answered HTTP %ld with %zu bytes "
				     "that are not XML (a truncated or foreign reply)", in->host,
				     action, code, ans.body.len);
			how->ambiguous = 1;
			goto again;
		}
		if (code >= 200 && code < 300) {
			*doc = d;
			st = GO_OK;
			break;
		}
		ecode = text_of(xmlDocGetRootElement(d), "Code");
		emsg = text_of(xmlDocGetRootElement(d), "Message");
		xmlFreeDoc(d);
		if (ecode && (!strcmp(ecode, "AuthFailure") || !strcmp(ecode, "SignatureDoesNotMatch") ||
			      !strcmp(ecode, "InvalidClientTokenId") || !strcmp(ecode, "ExpiredToken") ||
			      !strcmp(ecode, "UnauthorizedOperation") || !strcmp(ecode, "RequestExpired"))) {
			const char *hint = cloud_cred_hint(ecode);
			st = go_fail(err, GO_ERR_AUTH, "%s: EC2 %s refused (%s: %s)%s%s", in->host,
				     action, ecode, emsg ? emsg : "", hint ? ": " : "", hint ? hint : "");
			free(ecode);
			free(emsg);
			break;
		}
		st = go_fail(err, ecode && !strcmp(ecode, "InvalidInstanceID.NotFound") ? GO_ERR_NOT_FOUND
			     : GO_ERR_REMOTE, "%s: EC2 %s failed: HTTP %ld %s: %s", in->host, action,
			     code, ecode ? ecode : "(no error code)", emsg ? emsg : "");
		how->ambiguous = code >= 500;
		how->throttled = ecode && (!strcmp(ecode, "RequestLimitExceeded") ||
					   !strcmp(ecode, "Throttling"));
		if (!ecode || (strcmp(ecode, "RequestLimitExceeded") && strcmp(ecode, "Throttling") &&
			       code < 500)) {
			free(ecode);
			free(emsg);
			break;
		}
		free(ecode);
		free(emsg);
again:
		if (attempt + 1 < max) {
			time_sleep_ms(backoff);
			backoff *= 2;
		}
	}
out:
	creds_release(&cr);
	strbuf_release(&body);
	strbuf_release(&ans.body);
	strbuf_release(&hdr);
	free(url);
	free(sigv4);
	return st;
}

static enum go_status call_with(struct instance *in, const char *action, const char *params,
				xmlDoc **doc, struct strbuf *err)
{
	struct call_how how = {0};
	return call_ex(in, action, params, &how, doc, err);
}

static enum go_status call(struct instance *in, const char *action, xmlDoc **doc, struct strbuf *err)
{
	return call_with(in, action, NULL, doc, err);
}

static enum go_status describe_field(struct instance *in, const char *field, char **out,
				     struct strbuf *err)
{
	xmlDoc *d;
	enum go_status st = call(in, "DescribeInstances", &d, err);
	xmlNode *inst;
	if (st != GO_OK)
		return st;
	inst = find(xmlDocGetRootElement(d), "instancesSet");
	*out = inst ? text_of(inst, field) : NULL;
	xmlFreeDoc(d);
	if (!inst)
		return go_fail(err, GO_ERR_REMOTE, "%s: EC2 DescribeInstances lists no instance %s",
			       in->host, ((struct awsp *)in->priv)->instance_id);
	return GO_OK;
}

static enum go_status op_check(struct instance *in, struct strbuf *err)
{
	char *s = NULL;
	xmlDoc *d;
	enum go_status st;
	if (!((struct awsp *)in->priv)->instance_id) {
		/* none launched yet: are the credentials good? (a signed DescribeInstances) */
		st = call(in, "DescribeInstances", &d, err);
		if (st == GO_OK)
			xmlFreeDoc(d);
		return st;
	}
	st = describe_field(in, "instanceId", &s, err);
	free(s);
	return st;
}

static enum go_status op_status(struct instance *in, enum inst_state *res, struct strbuf *err)
{
	char *s = NULL;
	xmlDoc *d;
	xmlNode *state;
	enum go_status st;
	*res = INST_UNKNOWN;
	if (!((struct awsp *)in->priv)->instance_id)   /* an unfiltered answer lists them all */
		return go_fail(err, GO_ERR_INTERNAL, "%s: no instance id to ask EC2 about", in->host);
	st = call(in, "DescribeInstances", &d, err);
	if (st != GO_OK)
		return st;
	if (!find(xmlDocGetRootElement(d), "instancesSet")) {
		/* asked for by id and none listed: EC2 no longer knows it */
		xmlFreeDoc(d);
		return go_fail(err, GO_ERR_NOT_FOUND, "%s: EC2 DescribeInstances lists no instance %s",
			       in->host, ((struct awsp *)in->priv)->instance_id);
	}
	state = find(xmlDocGetRootElement(d), "instanceState");
	s = state ? text_of(state, "name") : NULL;
	xmlFreeDoc(d);
	*res = s ? inst_state_parse(s) : INST_UNKNOWN;
	if (*res == INST_UNKNOWN)
		st = go_fail(err, GO_ERR_REMOTE, "%s: EC2 DescribeInstances gave %s%s%s for instance %s",
			     in->host, s ? "the unknown state '" : "no instanceState",
			     s ? s : "", s ? "'" : "", ((struct awsp *)in->priv)->instance_id);
	free(s);
	return st;
}

static enum go_status op_simple(struct instance *in, const char *action, struct strbuf *err)
{
	xmlDoc *d;
	enum go_status st = call(in, action, &d, err);
	if (st == GO_OK)
		xmlFreeDoc(d);
	return st;
}

static enum go_status op_start(struct instance *in, struct strbuf *err)
{
	return op_simple(in, "StartInstances", err);
}

static enum go_status op_stop(struct instance *in, struct strbuf *err)
{
	return op_simple(in, "StopInstances", err);
}

static enum go_status op_address(struct instance *in, char **res, struct strbuf *err)
{
	struct awsp *p = in->priv;
	int private_ip = p->reach && !strcmp(p->reach, "private_ip");
	enum go_status st;
	*res = NULL;
	if (p->reach && !strcmp(p->reach, "host"))
		return GO_OK;   /* the hosts entry's own address (a bastion, a VPN name, a test) */
	st = describe_field(in, private_ip ? "privateIpAddress" : "ipAddress", res, err);
	if (st == GO_OK && (!*res || !**res)) {
		free(*res);
		*res = NULL;
		st = go_fail(err, GO_ERR_REMOTE, "%s: EC2 instance %s has no %s IP address (\"reach\": "
			     "\"private_ip\" or \"host\" reaches it another way)", in->host,
			     p->instance_id, private_ip ? "private" : "public");
	}
	return st;
}

/* ---------------------------------------------------------------- launched instances */

/* Each instance item of a DescribeInstances / RunInstances answer, in order
 * (reservationSet/item/instancesSet/item), into v (at most max). */
static int instance_items(xmlNode *n, xmlNode **v, int max, int k)
{
	for (; n && k < max; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (!strcmp((const char *)n->name, "instancesSet")) {
			xmlNode *c;
			for (c = n->children; c && k < max; c = c->next)
				if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, "item"))
					v[k++] = c;
		} else {
			k = instance_items(n->children, v, max, k);
		}
	}
	return k;
}

/* The text of item's own child element NAME (not a nested one), or NULL. */
static char *child_text(xmlNode *item, const char *name)
{
	xmlNode *c;
	for (c = item->children; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, name)) {
			xmlChar *t = xmlNodeGetContent(c);
			char *r = t ? xstrdup((const char *)t) : NULL;
			xmlFree(t);
			return r;
		}
	return NULL;
}

/* The value of tag KEY in an instance item (a new string), or NULL. */
static char *tag_of(xmlNode *item, const char *key)
{
	xmlNode *c, *set = NULL;
	for (c = item->children; c && !set; c = c->next)
		if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, "tagSet"))
			set = c;
	for (c = set ? set->children : NULL; c; c = c->next) {
		char *k, *v;
		if (c->type != XML_ELEMENT_NODE)
			continue;
		k = child_text(c, "key");
		if (k && !strcmp(k, key)) {
			v = child_text(c, "value");
			free(k);
			return v ? v : xstrdup("");
		}
		free(k);
	}
	return NULL;
}

static enum inst_state item_state(xmlNode *item)
{
	xmlNode *st = find(item->children, "instanceState");
	char *name = st ? text_of(st->children, "name") : NULL;
	enum inst_state s = name ? inst_state_parse(name) : INST_UNKNOWN;
	free(name);
	return s;
}

#define MAX_LISTED 1000

/* DescribeInstances with filters (already escaped "&Filter.N..." pairs):
 * the instances listed, with gpuorch's tags. */
static enum go_status describe_filtered(struct instance *in, const char *filters,
					struct tagged_inst **out, int *n, struct strbuf *err)
{
	struct call_how how = {.no_id = 1};
	xmlDoc *d;
	xmlNode **items;
	int i, k;
	enum go_status st = call_ex(in, "DescribeInstances", filters, &how, &d, err);
	*out = NULL;
	*n = 0;
	if (st != GO_OK)
		return st;
	items = xcalloc(MAX_LISTED, sizeof(*items));
	k = instance_items(xmlDocGetRootElement(d), items, MAX_LISTED, 0);
	*out = xcalloc((size_t)(k ? k : 1), sizeof(**out));
	for (i = 0; i < k; i++) {
		struct tagged_inst *t = &(*out)[*n];
		t->id = child_text(items[i], "instanceId");
		if (!t->id)
			continue;
		t->state = item_state(items[i]);
		t->host = tag_of(items[i], "gpuorch:host");
		t->run = tag_of(items[i], "gpuorch:run");
		t->token = tag_of(items[i], "gpuorch:launch");
		(*n)++;
	}
	free(items);
	xmlFreeDoc(d);
	return GO_OK;
}

static enum go_status op_list_tagged(struct instance *in, struct tagged_inst **out, int *n,
				     struct strbuf *err)
{
	struct strbuf q = STRBUF_INIT;
	enum go_status st;
	add_param(&q, "Filter.1.Name", "tag-key");
	add_param(&q, "Filter.1.Value.1", "gpuorch:host");
	add_param(&q, "Filter.2.Name", "instance-state-name");
	add_param(&q, "Filter.2.Value.1", "pending");
	add_param(&q, "Filter.2.Value.2", "running");
	add_param(&q, "Filter.2.Value.3", "shutting-down");
	add_param(&q, "Filter.2.Value.4", "stopping");
	add_param(&q, "Filter.2.Value.5", "stopped");
	st = describe_filtered(in, q.buf, out, n, err);
	strbuf_release(&q);
	return st;
}

static enum go_status op_find_launched(struct instance *in, const char *token, struct strbuf *err)
{
	struct strbuf q = STRBUF_INIT;
	struct tagged_inst *v = NULL;
	int i, n = 0;
	enum go_status st;
	add_param(&q, "Filter.1.Name", "tag:gpuorch:launch");
	add_param(&q, "Filter.1.Value.1", token);
	st = describe_filtered(in, q.buf, &v, &n, err);
	strbuf_release(&q);
	if (st != GO_OK)
		return st;
	st = go_fail(err, GO_ERR_NOT_FOUND, "%s: no instance tagged gpuorch:launch=%s", in->host, token);
	for (i = 0; i < n; i++)
		if (v[i].state != INST_TERMINATED) {
			in->ops->adopt(in, v[i].id);
			st = GO_OK;
			strbuf_reset(err);
			break;
		}
	tagged_free(v, n);
	return st;
}

/* RunInstances: one instance of the launch spec, its id taken. The
 * ClientToken makes EC2 answer a repeated request with the instance the
 * first one created; on top of that, after a reply that did not come (or
 * a 5xx), the instance is looked for by its gpuorch:launch tag before the
 * request is sent again: a lost reply never makes a second instance. */
static enum go_status op_launch(struct instance *in, struct strbuf *err)
{
	struct awsp *p = in->priv;
	struct strbuf q = STRBUF_INIT, ud = STRBUF_INIT;
	char *name = xstrfmt("gpuorch-%s", in->host), *id = NULL, *b64;
	const char *run = in->run_id ? in->run_id : "hosts-up";
	long cap_min = (long)(in->max_lifetime_min + 0.999);
	xmlDoc *d = NULL;
	xmlNode *set;
	enum go_status st = GO_OK;
	int i, attempt, max = in->retries + 3;
	int64_t backoff = 500;

	if (!in->launch_token)
		return go_fail(err, GO_ERR_INTERNAL, "%s: a launch without an idempotency token", in->host);
	add_param(&q, "ImageId", p->image_id);
	add_param(&q, "InstanceType", p->instance_type);
	add_param(&q, "MinCount", "1");
	add_param(&q, "MaxCount", "1");
	add_param(&q, "ClientToken", in->launch_token);
	/* the guard's shutdown, and the one below, end it for good: no stopped
	 * instance left behind */
	add_param(&q, "InstanceInitiatedShutdownBehavior", "terminate");
	/* the provider-side lifetime cap, from boot: holds when SSH never
	 * answers and no guard could be armed */
	if (cap_min < 1)
		cap_min = 1;
	strbuf_addf(&ud, "#!/bin/sh\n# gpuorch: max_lifetime_min %g from launch\nshutdown -h +%ld\n",
		    in->max_lifetime_min, cap_min);
	b64 = xcalloc(4 * ((ud.len + 2) / 3) + 1, 1);
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)ud.buf, (int)ud.len);
	add_param(&q, "UserData", b64);
	free(b64);
	if (p->key_name)
		add_param(&q, "KeyName", p->key_name);
	if (p->subnet_id)
		add_param(&q, "SubnetId", p->subnet_id);
	for (i = 0; p->security_groups && p->security_groups[i]; i++) {
		char *k = xstrfmt("SecurityGroupId.%d", i + 1);
		add_param(&q, k, p->security_groups[i]);
		free(k);
	}
	if (p->market && !strcmp(p->market, "spot")) {
		add_param(&q, "InstanceMarketOptions.MarketType", "spot");
		add_param(&q, "InstanceMarketOptions.SpotOptions.SpotInstanceType", "one-time");
		add_param(&q, "InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior",
			  "terminate");
		if (p->spot_max_price)
			add_param(&q, "InstanceMarketOptions.SpotOptions.MaxPrice", p->spot_max_price);
	}
	add_param(&q, "TagSpecification.1.ResourceType", "instance");
	add_param(&q, "TagSpecification.1.Tag.1.Key", "Name");
	add_param(&q, "TagSpecification.1.Tag.1.Value", name);
	add_param(&q, "TagSpecification.1.Tag.2.Key", "gpuorch:host");
	add_param(&q, "TagSpecification.1.Tag.2.Value", in->host);
	add_param(&q, "TagSpecification.1.Tag.3.Key", "gpuorch:run");
	add_param(&q, "TagSpecification.1.Tag.3.Value", run);
	add_param(&q, "TagSpecification.1.Tag.4.Key", "gpuorch:launch");
	add_param(&q, "TagSpecification.1.Tag.4.Value", in->launch_token);
	for (attempt = 0; attempt < max; attempt++) {
		struct call_how how = {.once = 1};
		struct strbuf e2 = STRBUF_INIT;
		enum go_status fst;
		st = call_ex(in, "RunInstances", q.buf, &how, &d, err);
		if (st == GO_OK || (!how.ambiguous && !how.throttled))
			break;
		if (how.throttled)
			goto wait;
		/* no answer: did it launch? look before asking again */
		fst = op_find_launched(in, in->launch_token, &e2);
		strbuf_release(&e2);
		if (fst == GO_OK) {
			strbuf_reset(err);
			goto out;   /* adopted: p->instance_id is set */
		}
		if (fst != GO_ERR_NOT_FOUND)
			break;      /* cannot tell: the caller keeps the token and looks again */
wait:
		if (attempt + 1 < max) {
			time_sleep_ms(backoff);
			backoff *= 2;
		}
	}
	if (st == GO_OK) {
		set = find(xmlDocGetRootElement(d), "instancesSet");
		id = set ? text_of(set, "instanceId") : NULL;
		if (!id || strncmp(id, "i-", 2))
			st = go_fail(err, GO_ERR_REMOTE, "%s: EC2 RunInstances answered without an instance "
				     "id: check the account's EC2 console for an instance tagged %s",
				     in->host, name);
	}
	if (st == GO_OK) {
		free(p->instance_id);
		p->instance_id = id;
		id = NULL;
	}
out:
	free(id);
	if (d)
		xmlFreeDoc(d);
	free(name);
	strbuf_release(&q);
	strbuf_release(&ud);
	return st;
}

static enum go_status op_terminate(struct instance *in, struct strbuf *err)
{
	return op_simple(in, "TerminateInstances", err);
}

static void op_adopt(struct instance *in, const char *id)
{
	struct awsp *p = in->priv;
	free(p->instance_id);
	p->instance_id = id ? xstrdup(id) : NULL;
}

static const char *op_id(const struct instance *in)
{
	return ((const struct awsp *)in->priv)->instance_id;
}

static void describe(const struct instance *in, FILE *f)
{
	const struct awsp *p = in->priv;
	fprintf(f, "    instance: provider aws (EC2 Query API %s, SigV4 aws:amz:%s:ec2), price %.4g/h, "
		"idle guard %s, after_run %s\n", EC2_VERSION, p->region, in->price_per_hour,
		in->idle_stop_min > 0 ? "on" : "off", after_run_name(in->after_run));
	const char *id = p->instance_id ? p->instance_id : "(the launched one)";
	fprintf(f, "      endpoint %s\n", p->endpoint ? p->endpoint : "https://ec2.REGION.amazonaws.com/");
	if (in->launch)
		fprintf(f, "      launch   RunInstances ImageId=%s InstanceType=%s%s%s MinCount=1 MaxCount=1 "
			"InstanceInitiatedShutdownBehavior=terminate UserData='shutdown -h +%ld' ClientToken=(run+host) "
			"tags gpuorch:host,gpuorch:run,gpuorch:launch%s%s%s\n", p->image_id, p->instance_type,
			p->key_name ? " KeyName=" : "", p->key_name ? p->key_name : "",
			(long)(in->max_lifetime_min + 0.999),
			p->market && !strcmp(p->market, "spot") ? " MarketType=spot" : "",
			p->spot_max_price ? " MaxPrice=" : "", p->spot_max_price ? p->spot_max_price : "");
	fprintf(f, "      status   DescribeInstances InstanceId.1=%s\n", id);
	fprintf(f, "      start    StartInstances InstanceId.1=%s\n", id);
	fprintf(f, "      stop     StopInstances InstanceId.1=%s\n", id);
	if (in->launch)
		fprintf(f, "      end      TerminateInstances InstanceId.1=%s\n", id);
}

static const struct provider_ops aws_ops = {
	.name = "aws",
	.check = op_check,
	.status = op_status,
	.start = op_start,
	.stop = op_stop,
	.address = op_address,
	.launch = op_launch,
	.find_launched = op_find_launched,
	.list_tagged = op_list_tagged,
	.terminate = op_terminate,
	.adopt = op_adopt,
	.id = op_id,
	.describe = describe,
	.release = release,
};

enum go_status provider_aws_load(struct instance *in, const struct cfg *c)
{
	static const char *const keys[] = {
		"provider", "price_per_hour", "idle_stop_min", "max_lifetime_min", "after_run",
		"timeout_s", "retries", "start_timeout_s", "ssh_timeout_s", "poll_s", "guard_action",
		"instance_id", "region", "endpoint", "profile", "reach", "launch", NULL,
	};
	static const char *const lkeys[] = {
		"image_id", "instance_type", "key_name", "subnet_id", "security_group_ids", "market",
		"spot_max_price", NULL,
	};
	struct awsp *p = xcalloc(1, sizeof(*p));
	const cJSON *launch = cJSON_GetObjectItemCaseSensitive(c->obj, "launch");
	enum go_status st;
	in->priv = p;
	in->ops = &aws_ops;
	if ((st = cfg_keys(c, keys)) || (st = cfg_require(c, "region")) ||
	    (st = cfg_str(c, "instance_id", &p->instance_id)) ||
	    (st = cfg_str(c, "region", &p->region)) || (st = cfg_str(c, "endpoint", &p->endpoint)) ||
	    (st = cfg_str(c, "profile", &p->profile)) || (st = cfg_str(c, "reach", &p->reach)))
		return st;
	if (p->reach && strcmp(p->reach, "public_ip") && strcmp(p->reach, "private_ip") &&
	    strcmp(p->reach, "host"))
		return cfg_bad(c, "reach", "'%s' is not one of \"public_ip\", \"private_ip\", \"host\"", p->reach);
	if (launch && p->instance_id)
		return cfg_bad(c, "launch", "give either \"instance_id\" (an instance that exists) or "
			       "\"launch\" (gpuorch creates one), not both");
	if (!launch && !p->instance_id)
		return cfg_bad(c, "instance_id", "missing: name the instance (\"instance_id\": \"i-...\") "
			       "or let gpuorch create one (\"launch\": {\"image_id\": ..., \"instance_type\": ...})");
	if (launch) {
		struct strbuf path = STRBUF_INIT;
		struct cfg lc = *c;
		double price = 0;
		strbuf_addf(&path, "%s.launch", c->path);
		lc.path = path.buf;
		lc.obj = launch;
		if (!cJSON_IsObject(launch))
			st = cfg_bad(c, "launch", "must be an object: {\"image_id\": \"ami-...\", "
				     "\"instance_type\": \"g6.xlarge\", ...}");
		if (!st && !(st = cfg_keys(&lc, lkeys)) && !(st = cfg_require(&lc, "image_id")) &&
		    !(st = cfg_require(&lc, "instance_type")) && !(st = cfg_str(&lc, "image_id", &p->image_id)) &&
		    !(st = cfg_str(&lc, "instance_type", &p->instance_type)) &&
		    !(st = cfg_str(&lc, "key_name", &p->key_name)) &&
		    !(st = cfg_str(&lc, "subnet_id", &p->subnet_id)) &&
		    !(st = cfg_str(&lc, "market", &p->market)) &&
		    !(st = cfg_argv(&lc, "security_group_ids", &p->security_groups)) &&
		    !(st = cfg_num(&lc, "spot_max_price", 0.0001, 10000, &price))) {
			if (strncmp(p->image_id, "ami-", 4))
				st = cfg_bad(&lc, "image_id", "'%s' is not an AMI id (ami-...)", p->image_id);
			else if (p->market && strcmp(p->market, "spot") && strcmp(p->market, "on-demand"))
				st = cfg_bad(&lc, "market", "'%s' is not \"on-demand\" or \"spot\"", p->market);
			else if (price > 0 && !(p->market && !strcmp(p->market, "spot")))
				st = cfg_bad(&lc, "spot_max_price", "is only for \"market\": \"spot\"");
			else if (price > 0)
				p->spot_max_price = xstrfmt("%g", price);
		}
		strbuf_release(&path);
		if (st)
			return st;
		in->launch = 1;
		return GO_OK;
	}
	if (strncmp(p->instance_id, "i-", 2))
		return cfg_bad(c, "instance_id", "'%s' is not an EC2 instance id (i-...)", p->instance_id);
	if (strspn(p->region, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(p->region))
		return cfg_bad(c, "region", "'%s' is not an AWS region (like us-east-1)", p->region);
	if (p->endpoint && strncmp(p->endpoint, "https://", 8) && strncmp(p->endpoint, "http://", 7))
		return cfg_bad(c, "endpoint", "must start with https:// (or http:// for a local test server)");
	return GO_OK;
}
