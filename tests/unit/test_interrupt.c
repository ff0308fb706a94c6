/* test_interrupt.c -- an interrupt is told as one: its own status, exit 130
 * (docs/exit-codes.md), not the status of an internal bug. */
#include "core/error.h"
#include "remote/hostrun-int.h"

#include <signal.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"

int main(void)
{
	volatile sig_atomic_t interrupted = 1;
	struct run_ctx ctx;
	struct hostrun hr;
	struct host h;
	struct remote_status rs;
	struct remote_step rstep;
	struct strbuf err = STRBUF_INIT;
	enum go_status st;

	memset(&ctx, 0, sizeof(ctx));
	memset(&h, 0, sizeof(h));
	memset(&rstep, 0, sizeof(rstep));
	h.name = "h1";
	ctx.interrupted = &interrupted;
	hostrun_init(&hr, 0, &h, &ctx, NULL);

	st = hr_wait_step(&hr, "/nowhere", 10, 0, &rs, &err);
	CHECK(st != GO_ERR_INTERNAL, "waiting for a step, once interrupted: not an internal error",
	      "status %d (%s): %s", (int)st, go_strerror(st), err.buf);
	CHECK(go_exit_code(st) == GO_EXIT_INTERRUPTED, "waiting for a step, once interrupted: exit 130",
	      "exit %d (%s)", go_exit_code(st), go_strerror(st));
	CHECK(!strcmp(err.buf, "interrupted"), "the message says interrupted", "'%s'", err.buf);

	strbuf_reset(&err);
	st = hr_start_step(&hr, &rstep, &err);
	CHECK(go_exit_code(st) == GO_EXIT_INTERRUPTED, "starting a step, once interrupted: exit 130",
	      "status %d (%s), exit %d: %s", (int)st, go_strerror(st), go_exit_code(st), err.buf);

	CHECK(go_exit_code(GO_ERR_INTERNAL) == GO_EXIT_LOCAL, "an internal error stays exit 4",
	      "exit %d", go_exit_code(GO_ERR_INTERNAL));

	strbuf_release(&hr.out);
	strbuf_release(&err);
	return check_summary();
}
