/* test_hosts.c -- unit tests of hosts.c: the inventory, its defaults and errors, ssh -G aliases, selection. */
#include "transport/hosts.h"
#include "core/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "core/banned.h"


#define DIR "tests/fixtures/hosts"

static char tmp[] = "/tmp/test_hosts.XXXXXX";

static char *put(const char *rel, const char *text)
{
	struct strbuf err = STRBUF_INIT;
	char *path = xstrfmt("%s/%s", tmp, rel);
	char *dir = fs_dirname(path);
	if (fs_mkdir_p(dir, 0755, &err) != GO_OK ||
	    fs_write_atomic(path, text, strlen(text), &err) != GO_OK)
		printf("# cannot write %s: %s\n", path, err.buf);
	free(dir);
	strbuf_release(&err);
	return path;
}

/* Load inline JSON (written to a temp file); expect an error containing want. */
static void expect_error(const char *what, const char *json, const char *want)
{
	struct strbuf err = STRBUF_INIT;
	struct hosts *h = NULL;
	char *path = put("case.json", json);
	char *full = xstrfmt("%s: %s", path, want);
	enum go_status st = hosts_load(path, &h, &err);
	CHECK(st == GO_ERR_HOSTS && !h && (strstr(err.buf, full) || (want[0] == '~' &&
							     strstr(err.buf, want + 1))),
	      what, "st=%d want \"%s\" got \"%s\"", st, want, err.buf);
	hosts_free(h);
	free(path);
	free(full);
	strbuf_release(&err);
}

static const struct host *find(const struct hosts *h, const char *name)
{
	int i;
	for (i = 0; h && i < h->n; i++)
		if (!strcmp(h->v[i].name, name))
			return &h->v[i];
	return NULL;
}

static void test_valid(void)
{
	struct strbuf err = STRBUF_INIT;
	struct hosts *h = NULL;
	enum go_status st = hosts_load(DIR "/valid.json", &h, &err);
	const struct host *a, *b, *c;
	char *kh = xstrfmt("%s/.ssh/known_hosts", tmp);

	CHECK(st == GO_OK && h && h->n == 3 && !strcmp(h->path, DIR "/valid.json"),
	      "the example inventory loads", "st=%d err=%s", st, err.buf);
	if (!h)
		return;
	a = find(h, "h100");
	b = find(h, "l4");
	c = find(h, "local-cpu");
	CHECK(a && !strcmp(a->address, "10.0.0.7") && a->port == 2222 &&
	      !strcmp(a->user, "ubuntu") && !strcmp(a->cuda_home, "/usr/local/cuda-13.0") &&
	      !strcmp(a->workdir, "/scratch/gpuorch") && !strcmp(a->gpu, "NVIDIA H100 80GB HBM3") &&
	      !strcmp(a->arch, "sm_90a") && a->connect_timeout_s == 30 && a->gpu_index == 1,
	      "explicit fields are read", "a=%p", (const void *)a);
	CHECK(a && a->identity && !strcmp(a->identity, DIR "/keys/id_test") && !a->use_agent &&
	      !strcmp(a->known_hosts, DIR "/known_hosts"),
	      "relative identity and known_hosts are relative to the hosts file",
	      "identity=%s known_hosts=%s", a ? a->identity : "", a ? a->known_hosts : "");
	CHECK(b && b->use_agent && !b->identity, "\"identity\": \"agent\" uses the agent",
	      "use_agent=%d", b ? b->use_agent : -1);
	CHECK(c && c->use_agent && !c->identity && c->port == 22 && !strcmp(c->user, "tester") &&
	      !strcmp(c->known_hosts, kh) && !strcmp(c->workdir, ".gpuorch") &&
	      c->connect_timeout_s == 10 && c->gpu_index == 0 && !c->cuda_home && !c->gpu &&
	      !c->arch,
	      "defaults: port 22, $USER, ~/.ssh/known_hosts, .gpuorch, 10 s, GPU 0, agent",
	      "user=%s known_hosts=%s", c ? c->user : "", c ? c->known_hosts : "");

	/* selection keeps the given order */
	{
		char *names[] = { "local-cpu", "h100" };
		st = hosts_select(h, names, 2, &err);
		CHECK(st == GO_OK && h->n == 2 && !strcmp(h->v[0].name, "local-cpu") &&
		      !strcmp(h->v[1].name, "h100") && h->v[1].port == 2222,
		      "hosts_select keeps the named hosts in the given order", "st=%d n=%d", st,
		      h->n);
	}
	{
		char *names[] = { "h100", "h200" };
		st = hosts_select(h, names, 2, &err);
		CHECK(st != GO_OK && strstr(err.buf, "unknown host 'h200'") &&
		      strstr(err.buf, "local-cpu, h100") && h->n == 2,
		      "an unknown name is an error listing the known hosts; nothing changes",
		      "st=%d err=%s", st, err.buf);
	}
	{
		char *names[] = { "h100", "h100" };
		st = hosts_select(h, names, 2, &err);
		CHECK(st != GO_OK && strstr(err.buf, "'h100'") && h->n == 2,
		      "a name selected twice is an error", "st=%d err=%s", st, err.buf);
	}
	st = hosts_select(h, NULL, 0, &err);
	CHECK(st == GO_OK && h->n == 2, "selecting nothing keeps every host", "n=%d", h->n);
	hosts_free(h);
	free(kh);
	strbuf_release(&err);
}

static void test_files(void)
{
	struct strbuf err = STRBUF_INIT;
	struct hosts *h = NULL;
	enum go_status st;

	st = hosts_load(DIR "/typo.json", &h, &err);
	CHECK(st == GO_ERR_HOSTS && !strcmp(err.buf, DIR "/typo.json: 'hosts[0]': unknown key 'adress' (did you mean 'address'?)"),
	      "a misspelt key is reported with its path and a suggestion", "err=%s", err.buf);
	st = hosts_load(DIR "/bad-syntax.json", &h, &err);
	CHECK(st == GO_ERR_HOSTS && strstr(err.buf, DIR "/bad-syntax.json:") &&
	      strstr(err.buf, "invalid JSON"),
	      "a JSON syntax error names the file and position", "st=%d err=%s", st, err.buf);
	st = hosts_load(DIR "/nope.json", &h, &err);
	CHECK(st == GO_ERR_NOT_FOUND && strstr(err.buf, "nope.json"), "a missing file is not found",
	      "st=%d err=%s", st, err.buf);
	strbuf_release(&err);
}

static void test_errors(void)
{
	expect_error("the top level is an object", "[]",
		     "expected a JSON object {\"hosts\": [...]} at the top level, found an array");
	expect_error("unknown top-level key", "{\"hosts\":[], \"host\":1}",
		     "unknown key 'host' (did you mean 'hosts'?)");
	expect_error("'hosts' is required", "{}", "missing required key 'hosts'");
	expect_error("'hosts' is an array", "{\"hosts\":{}}",
		     "'hosts': expected an array of hosts, found an object");
	expect_error("'hosts' is not empty", "{\"hosts\":[]}", "'hosts': lists no hosts");
	expect_error("a host is an object", "{\"hosts\":[\"h100\"]}",
		     "'hosts[0]': expected an object, found a string");
	expect_error("a host needs a name", "{\"hosts\":[{\"address\":\"x\"}]}",
		     "'hosts[0]': missing required key 'name'");
	expect_error("host names are file-name safe", "{\"hosts\":[{\"name\":\"a/b\",\"address\":\"x\"}]}",
		     "'hosts[0].name': 'a/b' is not a valid host name");
	expect_error("duplicate host names",
		     "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"},{\"name\":\"a\",\"address\":\"y\"}]}",
		     "'hosts[1].name': host \"a\" is defined twice (also 'hosts[0]')");
	expect_error("port lower bound", "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\",\"port\":0}]}",
		     "'hosts[0].port': expected an integer from 1 to 65535, found 0");
	expect_error("port upper bound",
		     "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\",\"port\":65536}]}",
		     "'hosts[0].port': expected an integer from 1 to 65535, found 65536");
	expect_error("port type", "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\",\"port\":\"22\"}]}",
		     "'hosts[0].port': expected an integer from 1 to 65535, found a string");
	expect_error("address type", "{\"hosts\":[{\"name\":\"a\",\"address\":7}]}",
		     "'hosts[0].address': expected a string, found a number");
	expect_error("empty user", "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\",\"user\":\"\"}]}",
		     "'hosts[0].user': must not be empty");
	expect_error("arch format", "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\",\"arch\":\"90a\"}]}",
		     "'hosts[0].arch': '90a' is not an arch");
	expect_error("connect timeout range",
		     "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\",\"connect_timeout_s\":0}]}",
		     "'hosts[0].connect_timeout_s': expected an integer from 1 to 600, found 0");
	expect_error("gpu_index range",
		     "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\",\"gpu_index\":-1}]}",
		     "'hosts[0].gpu_index': expected an integer from 0 to 63, found -1");
	expect_error("identity file must exist",
		     "{\"hosts\":[{\"name\":\"gpu1\",\"address\":\"x\",\"identity\":\"/nonexistent/id_ed25519\"}]}",
		     "'hosts[0].identity': cannot read identity file '/nonexistent/id_ed25519' for host 'gpu1': No such file or directory");
	expect_error("identity must be a file",
		     "{\"hosts\":[{\"name\":\"gpu1\",\"address\":\"x\",\"identity\":\"/\"}]}",
		     "'hosts[0].identity': cannot read identity file '/' for host 'gpu1': is a directory");
	expect_error("ssh_config must be readable",
		     "{\"hosts\":[{\"name\":\"gpu1\",\"ssh_alias\":\"g\",\"ssh_config\":\"/nonexistent/cfg\"}]}",
		     "'hosts[0].ssh_config': cannot read ssh config file '/nonexistent/cfg' for host 'gpu1'");
	expect_error("a typo inside a host", "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\",\"identiy\":\"agent\"}]}",
		     "'hosts[0]': unknown key 'identiy' (did you mean 'identity'?)");
}

static void test_alias(void)
{
	struct strbuf err = STRBUF_INIT;
	struct hosts *h = NULL;
	enum go_status st;
	char *key = put(".ssh/id_alias", "not a real key\n");
	char *cfg, *json, *cfgtext;
	const struct host *x;

	cfgtext = xstrfmt("Host gpubox\n"
			  "  HostName 10.1.2.3\n"
			  "  User alice\n"
			  "  Port 2201\n"
			  "  IdentityFile ~/.ssh/id_missing\n"
			  "  IdentityFile ~/.ssh/id_alias\n"
			  "  UserKnownHostsFile %s/kh1 %s/kh2\n"
			  "Host plain\n"
			  "  HostName plain.example.org\n", tmp, tmp);
	cfg = put("ssh_config", cfgtext);
	json = put("alias.json",
		   "{\"hosts\": [\n"
		   " {\"name\": \"box\", \"ssh_alias\": \"gpubox\", \"ssh_config\": \"ssh_config\"},\n"
		   " {\"name\": \"box2\", \"ssh_alias\": \"gpubox\", \"ssh_config\": \"ssh_config\",\n"
		   "  \"user\": \"bob\", \"port\": 2222, \"identity\": \"agent\", \"known_hosts\": \"/k\"},\n"
		   " {\"name\": \"plain\", \"ssh_config\": \"ssh_config\"}\n"
		   "]}\n");
	st = hosts_load(json, &h, &err);
	CHECK(st == GO_OK && h && h->n == 3, "an inventory of ssh aliases loads", "st=%d err=%s", st,
	      err.buf);
	x = find(h, "box");
	CHECK(x && !strcmp(x->address, "10.1.2.3") && !strcmp(x->user, "alice") && x->port == 2201,
	      "ssh -G gives hostname, user and port", "address=%s user=%s port=%d",
	      x ? x->address : "", x ? x->user : "", x ? x->port : 0);
	CHECK(x && x->identity && !strcmp(x->identity, key) && !x->use_agent,
	      "the first IdentityFile that exists is used (~ is $HOME)", "identity=%s",
	      x && x->identity ? x->identity : "(null)");
	{
		char *kh1 = xstrfmt("%s/kh1", tmp);
		CHECK(x && !strcmp(x->known_hosts, kh1), "the first UserKnownHostsFile is used",
		      "known_hosts=%s", x ? x->known_hosts : "");
		free(kh1);
	}
	x = find(h, "box2");
	CHECK(x && !strcmp(x->address, "10.1.2.3") && !strcmp(x->user, "bob") && x->port == 2222 &&
	      x->use_agent && !x->identity && !strcmp(x->known_hosts, "/k"),
	      "explicit fields override the alias", "user=%s port=%d", x ? x->user : "",
	      x ? x->port : 0);
	x = find(h, "plain");
	CHECK(x && !strcmp(x->address, "plain.example.org") && x->port == 22 && x->user[0],
	      "a host without an address is resolved by its name (user as ssh would use)",
	      "address=%s", x ? x->address : "");
	hosts_free(h);
	h = NULL;

	free(json);
	json = put("alias2.json",
		   "{\"hosts\": [{\"name\": \"box\", \"ssh_alias\": \"-oProxyCommand=x\","
		   " \"ssh_config\": \"ssh_config\"}]}");
	st = hosts_load(json, &h, &err);
	CHECK(st == GO_ERR_HOSTS && strstr(err.buf, "is not a valid ssh host alias"),
	      "an alias is never taken as an ssh option", "st=%d err=%s", st, err.buf);
	free(json);
	json = put("alias3.json",
		   "{\"hosts\": [{\"name\": \"box\", \"address\": \"1.2.3.4\","
		   " \"ssh_config\": \"ssh_config\"}]}");
	st = hosts_load(json, &h, &err);
	CHECK(st == GO_ERR_HOSTS && strstr(err.buf, "'hosts[0].ssh_config': 'ssh_config' is used only with 'ssh_alias'"),
	      "ssh_config without an alias is an error", "st=%d err=%s", st, err.buf);

	free(json);
	free(cfg);
	free(cfgtext);
	free(key);
	strbuf_release(&err);
}

static void test_user_fallback(void)
{
	struct strbuf err = STRBUF_INIT;
	struct hosts *h = NULL;
	char *json = put("nouser.json", "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"}]}");
	enum go_status st;
	unsetenv("USER");
	st = hosts_load(json, &h, &err);
	CHECK(st == GO_OK && h && h->v[0].user && h->v[0].user[0],
	      "without $USER the user comes from the password database", "st=%d err=%s", st,
	      err.buf);
	hosts_free(h);
	free(json);
	strbuf_release(&err);
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		printf("not ok 1 - mkdtemp\n");
		return 1;
	}
	setenv("HOME", tmp, 1);
	setenv("USER", "tester", 1);
	test_valid();
	test_files();
	test_errors();
	test_alias();
	test_user_fallback();
	fs_remove_tree(tmp);
	return check_summary();
}
