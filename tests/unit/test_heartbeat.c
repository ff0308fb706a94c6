/* test_heartbeat.c -- the heartbeat thread every run starts ends at once
 * when stopped: it waits on a condition, not in a plain sleep that made each
 * run wait up to 200 ms for it after its hosts were done. */
#include "cloud/heartbeat.h"

#include <stdint.h>
#include <stdlib.h>
#include "core/stats.h"
#include "core/timeutil.h"
#include "check.h"
#include "core/banned.h"

#define TRIES 7

int main(void)
{
	double took[TRIES];
	int i;

	for (i = 0; i < TRIES; i++) {
		struct heartbeat *hb = heartbeat_start(4, 0);
		int64_t t0;
		/* the thread has looked at its (empty) slots and waits for its next look */
		time_sleep_ms(30);
		t0 = time_mono_ms();
		heartbeat_stop(hb);
		took[i] = (double)(time_mono_ms() - t0);
	}
	stats_sort(took, TRIES);
	/* a plain 200 ms sleep: ~170 ms every time; the median leaves room for a
	 * loaded machine (or valgrind) without letting that through */
	CHECK(stats_median(took, TRIES) < 60.0, "heartbeat_stop returns without waiting out the thread's 200 ms",
	      "median %.0f ms of %d stops (min %.0f, max %.0f)", stats_median(took, TRIES), TRIES,
	      took[0], took[TRIES - 1]);

	/* NULL-safe; slots out of range are ignored: one past the end would be
	 * written past the array (the ASan and valgrind runs of this test see it) */
	heartbeat_stop(NULL);
	{
		struct heartbeat *hb = heartbeat_start(2, 0);
		heartbeat_add(hb, 2, NULL, NULL);
		heartbeat_add(hb, -1, NULL, NULL);
		heartbeat_remove(hb, 2);
		time_sleep_ms(250);   /* the thread takes a look: nothing to beat */
		CHECK(!heartbeat_fired(hb, 2) && !heartbeat_fired(hb, 0),
		      "slots out of range are ignored (the thread looked, beat nothing)", "fired");
		heartbeat_stop(hb);
	}
	return check_summary();
}
