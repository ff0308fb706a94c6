/* spec-query.c -- questions asked of a loaded spec (spec.h): a program or a
 * problem by name, the arch for a GPU, whether an arch satisfies another, a
 * step kind's name. Used by the validator (spec*.c) and by everything above. */
#include "spec/spec.h"
#include "spec/spec-int.h"

#include <stdlib.h>
#include <string.h>
#include "core/strbuf.h"
#include "core/banned.h"

const struct spec_program *spec_find_program(const struct spec *s, const char *name)
{
	int i;
	for (i = 0; i < s->nprograms; i++)
		if (s->programs[i].name && !strcmp(s->programs[i].name, name))
			return &s->programs[i];
	return NULL;
}

static int problem_by_name(const void *pa, const void *pb)
{
	const struct spec_problem *a = *(const struct spec_problem *const *)pa;
	const struct spec_problem *b = *(const struct spec_problem *const *)pb;
	int c = strcmp(a->name, b->name);
	return c ? c : (a > b) - (a < b);   /* the first defined first */
}

static int name_vs_problem(const void *key, const void *elem)
{
	return strcmp(key, (*(const struct spec_problem *const *)elem)->name);
}

void spec_index_problems(struct spec *s)
{
	int i;
	free(s->problems_by_name);
	s->problems_by_name = xcalloc((size_t)s->nproblems + 1, sizeof(*s->problems_by_name));
	for (i = 0; i < s->nproblems; i++) {
		if (!s->problems[i].name) {   /* not a whole spec: no index */
			free(s->problems_by_name);
			s->problems_by_name = NULL;
			return;
		}
		s->problems_by_name[i] = &s->problems[i];
	}
	qsort(s->problems_by_name, (size_t)s->nproblems, sizeof(*s->problems_by_name),
	      problem_by_name);
}

const struct spec_problem *spec_find_problem(const struct spec *s, const char *name)
{
	int i;
	if (s->problems_by_name) {
		const struct spec_problem *const *at =
			bsearch(name, s->problems_by_name, (size_t)s->nproblems,
				sizeof(*s->problems_by_name), name_vs_problem);
		/* names are unique once the spec is valid; else the first defined */
		while (at && at > s->problems_by_name && !strcmp(at[-1]->name, name))
			at--;
		return at ? *at : NULL;
	}
	for (i = 0; i < s->nproblems; i++)
		if (s->problems[i].name && !strcmp(s->problems[i].name, name))
			return &s->problems[i];
	return NULL;
}

const char *spec_arch_for_gpu(const struct spec *s, const char *gpu_name)
{
	int i;
	if (!gpu_name)
		return NULL;
	for (i = 0; i < s->ntargets; i++)
		if (str_contains_ci(gpu_name, s->targets[i].gpu))
			return s->targets[i].arch;
	return NULL;
}

int spec_arch_satisfies(const char *have, const char *need)
{
	int hn, ha, nn, na;
	if (!need)
		return 1;
	if (!spec_arch_parse(have, &hn, &ha) || !spec_arch_parse(need, &nn, &na))
		return 0;
	if (na) /* arch-specific features exist on that arch only */
		return ha && hn == nn;
	return hn >= nn;
}

int spec_source_is_glob(const char *entry)
{
	return strpbrk(entry, "*?[") != NULL || !strcmp(entry, ".");
}

int spec_source_may_select(const struct spec *s, const char *path)
{
	int i;
	for (i = 0; s->sources && s->sources[i]; i++) {
		const char *e = s->sources[i];
		size_t n = strlen(e);
		if (!strcmp(e, path) || spec_source_is_glob(e) ||
		    (!strncmp(e, path, n) && path[n] == '/'))
			return 1;
	}
	return 0;
}

static int in_sorted(char *const *files, const char *path)
{
	int i;
	for (i = 0; files && files[i]; i++)
		if (!strcmp(files[i], path))
			return 1;
	return 0;
}

enum go_status spec_check_selected(const struct spec *s, char *const *files, struct strbuf *err)
{
	int i, j;
	for (i = 0; i < s->nprograms; i++) {
		const struct spec_program *p = &s->programs[i];
		if (p->script && !in_sorted(files, p->script))
			return go_fail(err, GO_ERR_SPEC,
				       "%s: 'programs.%s.script': '%s' is not among the files that 'sources' "
				       "selects (ignored or untracked by git? list it by its own path)",
				       s->path, p->name, p->script);
		for (j = 0; p->sources && p->sources[j]; j++)
			if (!in_sorted(files, p->sources[j]))
				return go_fail(err, GO_ERR_SPEC,
					       "%s: 'programs.%s.sources[%d]': '%s' is not among the files "
					       "that 'sources' selects (ignored or untracked by git? list it "
					       "by its own path)", s->path, p->name, j, p->sources[j]);
	}
	return GO_OK;
}
