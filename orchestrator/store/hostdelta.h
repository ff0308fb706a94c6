/* hostdelta.h -- what changed in one host's object of the run record since it
 * was last journaled: the journal's delta (store/runjournal.h).
 *
 * DESIGN: a shadow per host remembers, for each top-level key of the host
 * object, either the serialised value as last journaled (scalars and
 * objects) or, for an array (steps, builds, phases, archs), the items it
 * held (by identity). A diff is then:
 *   "set": {key: value}   keys whose value is new or changed (an object is
 *                         compared by its serialised text),
 *   "del": [key]          keys that are gone,
 *   "ins": {key: [[pos, item], ...]}  array items that appeared, at their
 *                         index in the array as it stands (ascending), so
 *                         inserting them in that order rebuilds the array.
 * An array is treated as growing by insertion only: an item is journaled
 * once, when it appears; when an item the shadow holds is no longer in its
 * array, the whole array is "set". An item changed in place after it was
 * journaled reaches run.json at the next whole save (record_save). A step's
 * save so costs that step's record, not the host's: the journal grows
 * linearly with the steps.
 *
 * Finding the new items walks the array, which at 20,000 steps made each
 * step's save cost the steps before it (issue 31). An append the record is
 * told of (hostdelta_appended) is journaled without that walk, when the
 * array's ends are as the shadow and the appends say (its first item, its
 * last, each told item after the one before): what the ends cannot show (an
 * item inserted, removed or replaced in the middle of such an array by
 * someone who did not say so) is checked, with the walk, when
 * GPUORCH_CHECK_DELTA is set (the test suite sets it) and ends the process
 * naming the key. */
#ifndef GPUORCH_HOSTDELTA_H
#define GPUORCH_HOSTDELTA_H

#include <cjson/cJSON.h>

struct hostdelta_key;
struct hostdelta {
	struct hostdelta_key *k;
	int n, alloc;
};

/* The shadow becomes host as it stands (after a whole save). */
void hostdelta_reset(struct hostdelta *d, const cJSON *host);
/* Forget everything: the next diff sets every key. */
void hostdelta_forget(struct hostdelta *d);
/* The change since the last reset or diff, as an object with "set", "del"
 * and "ins" (those that are not empty), or NULL when nothing changed; the
 * shadow then holds host as it stands. The object references host's items
 * (cJSON references, not copies): print it before host changes again, then
 * cJSON_Delete it (host's items stay). */
cJSON *hostdelta_diff(struct hostdelta *d, const cJSON *host);
void hostdelta_release(struct hostdelta *d);
/* item was just appended to host's array key: the next diff journals it
 * without walking the array (see above). Nothing when the shadow holds no
 * such array (the diff then walks, as for any change). */
void hostdelta_appended(struct hostdelta *d, const char *key, const cJSON *item);

#endif
