/* shellenv.c -- a host's "env" as shell assignments, and the build tools'
 * report (shellenv.h). */
#include "core/shellenv.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

const char *const env_tools[ENV_NTOOLS + 1] = { "cmake", "make", "ninja", NULL };

static size_t name_len(const char *s)
{
	size_t n = 0;
	if (!(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_')
		n++;
	return n;
}

int env_name_ok(const char *name, struct strbuf *why)
{
	if (!*name || name_len(name) != strlen(name)) {
		strbuf_addf(why, "'%s' is not a variable name: use letters, digits and '_', not starting "
			    "with a digit (e.g. \"PATH\", \"CMAKE_PREFIX_PATH\")", name);
		return 0;
	}
	if (!strncmp(name, "GPUORCH_", 8) || !strcmp(name, "CUDA_VISIBLE_DEVICES")) {
		strbuf_addf(why, "'%s' is set by gpuorch itself (%s); remove it from \"env\"", name,
			    name[0] == 'G' ? "GPUORCH_* are its own" : "the GPU comes from \"gpu_index\"");
		return 0;
	}
	return 1;
}

/* the length of a reference at s ("$NAME", "${NAME}", "$$"), 0 when s is none */
static size_t ref_len(const char *s)
{
	size_t n;
	if (s[1] == '$')
		return 2;
	if (s[1] == '{') {
		n = name_len(s + 2);
		return n && s[2 + n] == '}' ? n + 3 : 0;
	}
	n = name_len(s + 1);
	return n ? n + 1 : 0;
}

int env_value_ok(const char *value, struct strbuf *why)
{
	const char *p;
	for (p = value; (p = strchr(p, '$')) != NULL; p += ref_len(p))
		if (!ref_len(p)) {
			strbuf_addf(why, "'%s': the '$' at offset %d starts no $NAME or ${NAME} (write $$ "
				    "for a '$' itself; nothing else is expanded)", value, (int)(p - value));
			return 0;
		}
	return 1;
}

static void add_word(struct strbuf *cmd, const char *v)
{
	struct strbuf lit = STRBUF_INIT;
	const char *p = v;
	int any = 0;
	while (*p) {
		size_t n = *p == '$' ? ref_len(p) : 0;
		if (!n || p[1] == '$') {
			strbuf_addch(&lit, *p);
			p += n ? 2 : 1;
			continue;
		}
		if (lit.len) {
			strbuf_add_shell_quoted(cmd, lit.buf);
			strbuf_reset(&lit);
		}
		if (p[1] == '{')
			strbuf_addf(cmd, "\"%.*s\"", (int)n, p);
		else
			strbuf_addf(cmd, "\"${%.*s}\"", (int)n - 1, p + 1);
		p += n;
		any = 1;
	}
	if (lit.len || !any)
		strbuf_add_shell_quoted(cmd, lit.buf);
	strbuf_release(&lit);
}

void env_add_exports(struct strbuf *cmd, const struct env_var *v, int n)
{
	int i;
	for (i = 0; i < n; i++) {
		strbuf_addf(cmd, "%s=", v[i].name);
		add_word(cmd, v[i].value);
		strbuf_addf(cmd, " && export %s && ", v[i].name);
	}
}

void env_add_tool_report(struct strbuf *cmd, const char *const *tools)
{
	int i;
	strbuf_addstr(cmd, "for t in");
	for (i = 0; tools[i]; i++) {
		strbuf_addch(cmd, ' ');
		strbuf_add_shell_quoted(cmd, tools[i]);
	}
	strbuf_addstr(cmd, "; do if p=$(command -v \"$t\"); then echo \"gpuorch-tool: $t $p "
			   "$(\"$t\" --version 2>&1 | head -n 1)\"; else echo \"gpuorch-tool: $t absent\"; "
			   "fi; done");
}

/* the first dotted number of s ("cmake version 3.25.1" -> 3.25.1), or NULL */
static char *dotted(const char *s, size_t len)
{
	size_t i, j;
	for (i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]) || (i && isalnum((unsigned char)s[i - 1])))
			continue;
		for (j = i; j < len && (isdigit((unsigned char)s[j]) || s[j] == '.'); j++)
			;
		while (j > i && s[j - 1] == '.')
			j--;
		if (memchr(s + i, '.', j - i))
			return xstrfmt("%.*s", (int)(j - i), s + i);
	}
	return NULL;
}

int env_tool_read(const char *text, const char *name, char **path, char **version)
{
	const char *p = text;
	size_t n = strlen(name);
	*path = *version = NULL;
	while (p && (p = strstr(p, "gpuorch-tool: ")) != NULL) {
		const char *q = p + 14, *eol = strchr(q, '\n'), *sp;
		size_t len = eol ? (size_t)(eol - q) : strlen(q);
		p = eol;
		if ((q > text + 14 && q[-15] != '\n') || strncmp(q, name, n) || q[n] != ' ')
			continue;
		q += n + 1;
		len -= n + 1;
		if (len == 6 && !strncmp(q, "absent", 6))
			return 1;
		sp = memchr(q, ' ', len);
		*path = xstrfmt("%.*s", (int)(sp ? (size_t)(sp - q) : len), q);
		if (sp)
			*version = dotted(sp + 1, len - (size_t)(sp + 1 - q));
		return 1;
	}
	return 0;
}
