/* init-cmake.c -- the executables of a CMake project, for `gpuorch init`
 * (init-cmake.h). CMake itself is asked first: an empty codemodel-v2 query
 * of its file API in a temporary build directory, `cmake -S ROOT -B TMP`
 * (configure only, nothing built; bounded in time, its output captured and
 * never shown), then every EXECUTABLE target of the reply with its first
 * artifact's path; the directory is removed afterwards. When cmake is not
 * installed or does not configure here (a CUDA project where there is no
 * nvcc), every CMakeLists.txt git tracks is scanned for
 * add_executable(NAME ...), each output guessed where `cmake -S . -B build`
 * puts it by default: build/<that CMakeLists.txt's folder>/NAME. */
#include "cmd/init-cmake.h"
#include "core/error.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"
#include "core/proc.h"
#include "core/strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

#define CMAKE_TIMEOUT_S 120
#define WHY_MAX 240

static void add_target(struct init_cmake *c, const char *name, const char *path)
{
	int i;
	for (i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], name))
			return;
	c->names = xrealloc(c->names, (size_t)(c->n + 2) * sizeof(*c->names));
	c->paths = xrealloc(c->paths, (size_t)(c->n + 2) * sizeof(*c->paths));
	c->names[c->n] = xstrdup(name);
	c->paths[c->n] = xstrdup(path);
	c->n++;
	c->names[c->n] = NULL;
	c->paths[c->n] = NULL;
}

void init_cmake_release(struct init_cmake *c)
{
	int i;
	for (i = 0; i < c->n; i++) {
		free(c->names[i]);
		free(c->paths[i]);
	}
	free(c->names);
	free(c->paths);
	free(c->how);
	memset(c, 0, sizeof(*c));
}

static int timeout_s(void)
{
	const char *v = getenv("GPUORCH_INIT_CMAKE_TIMEOUT_S");
	char *end;
	long s;
	if (!v || !*v)
		return CMAKE_TIMEOUT_S;
	errno = 0;
	s = strtol(v, &end, 10);
	if (errno || *end || s < 1 || s > 3600) {
		fprintf(stderr, "warning: GPUORCH_INIT_CMAKE_TIMEOUT_S='%s' is not a number of seconds "
			"from 1 to 3600; cmake gets %d s\n", v, CMAKE_TIMEOUT_S);
		return CMAKE_TIMEOUT_S;
	}
	return (int)s;
}

/* What a failed configure said, on one line: its first "CMake Error" and
 * the message's indented lines after it (else its first line), trimmed. */
static void configure_error(const char *text, struct strbuf *why)
{
	const char *p = strstr(text, "CMake Error");
	int whole = p != NULL;
	struct strbuf s = STRBUF_INIT;

	if (!p)
		for (p = text; *p == '\n' || *p == ' ' || *p == '\t'; p++)
			;
	while (*p && s.len <= WHY_MAX) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		/* the message goes on while its lines are indented or blank */
		if (s.len && len && *p != ' ' && *p != '\t')
			break;
		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r'))
			len--;
		if (len) {
			if (s.len)
				strbuf_addch(&s, ' ');
			strbuf_add(&s, p, len);
		}
		if (!nl || !whole)
			break;
		p = nl + 1;
	}
	if (s.len > WHY_MAX) {
		strbuf_setlen(&s, WHY_MAX);
		strbuf_addstr(&s, "...");
	}
	strbuf_addstr(why, s.len ? s.buf : "(it printed no error)");
	strbuf_release(&s);
}

/* Configure the project src into build: 0, or -1 with why. Its compilers'
 * temporary files (nvcc's tmpxft_*) go under tmp, removed with it: a
 * configure killed at its bound leaves nothing in the user's TMPDIR. */
static int configure(const char *src, const char *build, const char *tmp, struct strbuf *why)
{
	const char *argv[] = { "cmake", "-S", src, "-B", build, "-DCMAKE_BUILD_TYPE=Release", NULL };
	struct strbuf eo = STRBUF_INIT, err = STRBUF_INIT;
	int secs = timeout_s(), code = 0, rc = -1;
	enum go_status st;
	char *was = getenv("TMPDIR") ? xstrdup(getenv("TMPDIR")) : NULL;

	eo.max = (size_t)1 << 20;
	setenv("TMPDIR", tmp, 1);   /* init is one thread: the child inherits it */
	st = proc_run_timed(NULL, argv, NULL, &eo, &code, secs * 1000, &err);
	if (was)
		setenv("TMPDIR", was, 1);
	else
		unsetenv("TMPDIR");
	free(was);
	if (st == GO_ERR_NOT_FOUND) {
		strbuf_addstr(why, "cmake is not installed (no cmake on PATH)");
	} else if (st == GO_ERR_TIMEOUT) {
		strbuf_addf(why, "cmake -S . did not configure within %d s "
			    "(GPUORCH_INIT_CMAKE_TIMEOUT_S) and was stopped", secs);
	} else if (st != GO_OK) {
		strbuf_addf(why, "cmake could not run: %s", err.buf);
	} else if (code) {
		strbuf_addf(why, "cmake -S . failed to configure (exit %d): ", code);
		configure_error(eo.buf, why);
	} else {
		rc = 0;
	}
	strbuf_release(&eo);
	strbuf_release(&err);
	return rc;
}

/* The newest reply index of cmake's file API in dir (index-*.json), or NULL. */
static char *newest_index(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *best = NULL;

	if (!d)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len < 11 || strncmp(de->d_name, "index-", 6) || strcmp(de->d_name + len - 5, ".json"))
			continue;
		if (!best || strcmp(de->d_name, best) > 0) {
			free(best);
			best = xstrdup(de->d_name);
		}
	}
	closedir(d);
	return best;
}

/* The reply file named file in dir (a name, never a path), or NULL with why. */
static cJSON *load_reply(const char *dir, const char *file, struct strbuf *why)
{
	struct strbuf err = STRBUF_INIT;
	cJSON *j = NULL;
	char *path;

	if (!file || !*file || strchr(file, '/')) {
		strbuf_addf(why, "cmake's file API reply names no file where it should ('%s')",
			    file ? file : "(none)");
		return NULL;
	}
	path = xstrfmt("%s/%s", dir, file);
	if (json_load_file(path, &j, GO_ERR_IO, &err) != GO_OK)
		strbuf_addf(why, "cmake's file API reply: %s", err.buf);
	free(path);
	strbuf_release(&err);
	return j;
}

/* An artifact's path relative to the tree: a relative one is in the build
 * directory (build/...), an absolute one must be in the source tree src. */
static char *tree_path(const char *artifact, const char *src)
{
	size_t n = strlen(src);
	if (artifact[0] != '/')
		return xstrfmt("build/%s", artifact);
	if (n && !strncmp(artifact, src, n) && artifact[n] == '/' && artifact[n + 1])
		return xstrdup(artifact + n + 1);
	return NULL;
}

/* The EXECUTABLE targets of the codemodel (its first configuration) into c;
 * those built outside the tree are named in skipped. 0, or -1 with why. */
static int read_targets(const char *reply, const cJSON *model, const char *src, int max,
			struct init_cmake *c, struct strbuf *skipped, struct strbuf *why)
{
	const cJSON *targets = json_path(model, "configurations.0.targets"), *t;
	const char *source = json_str(json_path(model, "paths"), "source");

	if (!cJSON_IsArray(targets)) {
		strbuf_addstr(why, "cmake's codemodel has no configurations[0].targets");
		return -1;
	}
	FOR_EACH_OBJ(t, targets) {
		cJSON *tj = load_reply(reply, json_str(t, "jsonFile"), why);
		const cJSON *art;
		const char *type, *name;
		char *path;

		if (!tj)
			return -1;
		type = json_str(tj, "type");
		name = json_str(tj, "name");
		art = json_path(tj, "artifacts.0.path");
		if (type && !strcmp(type, "EXECUTABLE") && name && cJSON_IsString(art) && c->n < max) {
			path = tree_path(art->valuestring, source ? source : src);
			if (path)
				add_target(c, name, path);
			else
				strbuf_addf(skipped, "%s%s (built at %s, outside the tree)",
					    skipped->len ? ", " : "", name, art->valuestring);
			free(path);
		}
		cJSON_Delete(tj);
	}
	return 0;
}

/* Read the file API's reply in build into c: 0, or -1 with why. */
static int read_reply(const char *build, const char *src, int max, struct init_cmake *c,
		      struct strbuf *skipped, struct strbuf *why)
{
	char *reply = xstrfmt("%s/.cmake/api/v1/reply", build), *index = newest_index(reply);
	cJSON *ij = NULL, *model = NULL;
	const cJSON *cm;
	int rc = -1;

	if (!index) {
		strbuf_addstr(why, "cmake configured but wrote no file API reply (the file API "
			      "needs cmake 3.14 or later)");
		goto out;
	}
	ij = load_reply(reply, index, why);
	if (!ij)
		goto out;
	cm = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ij, "reply"),
					      "codemodel-v2");
	if (json_str(cm, "error")) {
		strbuf_addf(why, "cmake's file API: codemodel-v2: %s", json_str(cm, "error"));
		goto out;
	}
	model = load_reply(reply, json_str(cm, "jsonFile"), why);
	if (model)
		rc = read_targets(reply, model, src, max, c, skipped, why);
out:
	cJSON_Delete(model);
	cJSON_Delete(ij);
	free(index);
	free(reply);
	return rc;
}

/* The executables per cmake's file API, configured in a temporary
 * directory removed afterwards: 0, or -1 with why. */
static int api_find(const char *root, int max, struct init_cmake *c, struct strbuf *skipped,
		    struct strbuf *why)
{
	const char *tmpdir = getenv("TMPDIR");
	char *src = realpath(root, NULL), *tmp;
	int rc = -1;

	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	tmp = xstrfmt("%s/gpuorch-init-cmake.XXXXXX", tmpdir);
	if (!src) {
		strbuf_addf(why, "cannot resolve '%s': %s", root, strerror(errno));
	} else if (!mkdtemp(tmp)) {
		strbuf_addf(why, "cannot create a temporary directory under '%s': %s", tmpdir,
			    strerror(errno));
	} else {
		/* the names exist only now: mkdtemp filled in the XXXXXX */
		char *build = xstrfmt("%s/build", tmp), *query = xstrfmt("%s/.cmake/api/v1/query", build);
		char *qfile = xstrfmt("%s/codemodel-v2", query);
		struct strbuf err = STRBUF_INIT;
		if (fs_mkdir_p(query, 0755, &err) != GO_OK || fs_write_new(qfile, "", 0, &err) != GO_OK)
			strbuf_addf(why, "cannot write cmake's file API query: %s", err.buf);
		else if (configure(src, build, tmp, why) == 0)
			rc = read_reply(build, src, max, c, skipped, why);
		fs_remove_tree(tmp);
		strbuf_release(&err);
		free(qfile);
		free(query);
		free(build);
	}
	free(tmp);
	free(src);
	return rc;
}

/* add_executable(NAME ...) at the start of a line, any case; group 2 is
 * the word after NAME (IMPORTED, ALIAS: no file of the project's). */
static const char add_exe_rx[] =
	"^[ \t]*add_executable[ \t]*\\([ \t\r\n]*([A-Za-z0-9_.+-]+)[ \t\r\n]*([A-Za-z_]*)";

/* The add_executable() targets of root/rel, a CMakeLists.txt, into c. */
static void scan_file(const char *root, const char *rel, int max, struct init_cmake *c)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	size_t dirlen = strlen(rel) - strlen("CMakeLists.txt");
	char *full = xstrfmt("%s/%s", root, rel);
	regmatch_t m[3];
	regex_t re;
	const char *p;

	if (fs_read_file(full, &text, &err) != GO_OK) {
		fprintf(stderr, "warning: %s\n", err.buf);
		goto out;
	}
	if (regcomp(&re, add_exe_rx, REG_EXTENDED | REG_NEWLINE | REG_ICASE))
		goto out;
	for (p = text.buf; c->n < max && *p &&
	     regexec(&re, p, 3, m, p == text.buf || p[-1] == '\n' ? 0 : REG_NOTBOL) == 0;
	     p += m[0].rm_eo) {
		const char *kw = p + m[2].rm_so;
		int kwlen = (int)(m[2].rm_eo - m[2].rm_so);
		char *name, *path;
		if ((kwlen == 8 && !strncmp(kw, "IMPORTED", 8)) || (kwlen == 5 && !strncmp(kw, "ALIAS", 5)) ||
		    (kwlen == 16 && !strncmp(kw, "EXCLUDE_FROM_ALL", 16)))
			continue;
		name = xstrfmt("%.*s", (int)(m[1].rm_eo - m[1].rm_so), p + m[1].rm_so);
		path = xstrfmt("build/%.*s%s", (int)dirlen, rel, name);
		add_target(c, name, path);
		free(name);
		free(path);
	}
	regfree(&re);
out:
	free(full);
	strbuf_release(&text);
	strbuf_release(&err);
}

/* The add_executable() targets of every CMakeLists.txt in files, into c;
 * those that have one are listed in where. */
static void scan(const char *root, char *const *files, int max, struct init_cmake *c,
		 struct strbuf *where)
{
	int i;
	for (i = 0; files[i] && c->n < max; i++) {
		const char *b = strrchr(files[i], '/');
		int before = c->n;
		if (strcmp(b ? b + 1 : files[i], "CMakeLists.txt"))
			continue;
		scan_file(root, files[i], max, c);
		if (c->n > before)
			strbuf_addf(where, "%s%s", where->len ? ", " : "", files[i]);
	}
}

void init_cmake_find(const char *root, char *const *files, int max, struct init_cmake *c)
{
	struct strbuf why = STRBUF_INIT, where = STRBUF_INIT, skipped = STRBUF_INIT;

	memset(c, 0, sizeof(*c));
	if (api_find(root, max, c, &skipped, &why) == 0) {
		c->how = xstrfmt("%s%s%s", c->n ? "cmake's file API (configured in a temporary "
					  "directory, nothing built)"
					: "cmake's file API lists no executable target (one that an "
					  "option turns on needs -DOPTION=ON in build.command)",
				 skipped.len ? "; not taken: " : "", skipped.buf);
		goto out;
	}
	init_cmake_release(c);
	scan(root, files, max, c, &where);
	if (c->n)
		c->how = xstrfmt("add_executable() in %s, each built where cmake puts it by "
				 "default (not asked of cmake: %s)", where.buf, why.buf);
	else
		c->how = xstrfmt("no add_executable(NAME ...) in any CMakeLists.txt (not asked of "
				 "cmake: %s)", why.buf);
out:
	strbuf_release(&why);
	strbuf_release(&where);
	strbuf_release(&skipped);
}
