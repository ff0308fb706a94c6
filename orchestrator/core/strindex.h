/* strindex.h -- where a string stands in a fixed list, in O(log n): the
 * controller looks up every journal event's step among 20,000 planned steps,
 * and a walk over all of them per event made a run quadratic (issue 31). */
#ifndef GPUORCH_STRINDEX_H
#define GPUORCH_STRINDEX_H

struct strindex_ent;
struct strindex {
	struct strindex_ent *e;
	int n;
};

/* Index names[0..n-1] (NULL entries are left out); the strings are not
 * copied and must outlive the index. */
void strindex_build(struct strindex *x, const char *const *names, int n);
/* The lowest position of s among the names, or -1 (also for s NULL). */
int strindex_find(const struct strindex *x, const char *s);
void strindex_release(struct strindex *x);

#endif
