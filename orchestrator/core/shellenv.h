/* shellenv.h -- a host's "env" (docs/hosts.md): its names and values
 * checked, turned into the shell assignments that start each build and
 * step command on the host; and the build tools' report (cmake, make,
 * ninja: which one, where, which version) that hosts check and a failed
 * project build print, read back here. */
#ifndef GPUORCH_SHELLENV_H
#define GPUORCH_SHELLENV_H

#include "core/strbuf.h"

struct env_var {
	char *name;
	char *value;
};

/* 1 when name may be set (a shell name, [A-Za-z_][A-Za-z0-9_]*, and none
 * that gpuorch sets itself: GPUORCH_*, CUDA_VISIBLE_DEVICES); else 0 with
 * why (the rule it breaks and how to fix it). */
int env_name_ok(const char *name, struct strbuf *why);
/* 1 when value follows the expansion rules ($NAME, ${NAME}, $$, nothing
 * else after a '$'); else 0 with why, naming the byte offset. */
int env_value_ok(const char *value, struct strbuf *why);
/* Appends, for each of v[0..n-1] in order, "NAME=WORD && export NAME && ",
 * WORD the value with its literal parts single-quoted and each $NAME /
 * ${NAME} as "${NAME}": only those are expanded, by the host's shell. */
void env_add_exports(struct strbuf *cmd, const struct env_var *v, int n);

/* The tools a report covers, in its order. */
#define ENV_NTOOLS 3
extern const char *const env_tools[ENV_NTOOLS + 1];   /* "cmake", "make", "ninja", NULL */
/* Appends a shell command printing one line per tool named in tools
 * (NULL-terminated): "gpuorch-tool: NAME PATH VERSION-LINE", or
 * "gpuorch-tool: NAME absent". */
void env_add_tool_report(struct strbuf *cmd, const char *const *tools);
/* From such lines in text: tool name's path and version (the first dotted
 * number of its version line), each NULL when absent or not reported.
 * Returns 1 when text reports the tool (found or absent), else 0. */
int env_tool_read(const char *text, const char *name, char **path, char **version);

#endif
