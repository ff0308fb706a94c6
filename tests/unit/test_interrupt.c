/* test_interrupt.c -- an interrupt is told as one: its own status, exit 130
 * (docs/exit-codes.md), not the status of an internal bug nor of a lost host. */
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
	struct strbuf err = STRBUF_INIT, reason = STRBUF_INIT;
	enum item_status status;
	enum go_status st;

	memset(&ctx, 0, sizeof(ctx));
	memset(&h, 0, sizeof(h));
	h.name = "h1";
	ctx.interrupted = &interrupted;
	ctx.reconnect_timeout_s = 5;
	hostrun_init(&hr, 0, &h, &ctx, NULL);

	st = hr_reconnect(&hr, &err);
	CHECK(st != GO_ERR_INTERNAL, "reconnecting, once interrupted: not an internal error",
	      "status %d (%s): %s", (int)st, go_strerror(st), err.buf);
	CHECK(go_exit_code(st) == GO_EXIT_INTERRUPTED, "reconnecting, once interrupted: exit 130",
	      "exit %d (%s)", go_exit_code(st), go_strerror(st));
	CHECK(!strcmp(err.buf, "interrupted"), "the message says interrupted", "'%s'", err.buf);

	/* a step the runner killed because the run was interrupted */
	memset(&rs, 0, sizeof(rs));
	rs.end = REMOTE_KILLED;
	rs.exit_code = 143;
	rs.signal = 15;
	status = hr_end_status(&hr, &rs, 0, &reason);
	CHECK(status == ST_INFRA_ERROR && !strcmp(reason.buf, "interrupted"),
	      "a step killed by the interrupt is INFRA_ERROR, interrupted", "%s: '%s'",
	      item_status_name(status), reason.buf);

	interrupted = 0;
	hr.interrupted = 0;
	strbuf_reset(&reason);
	status = hr_end_status(&hr, &rs, 0, &reason);
	CHECK(status == ST_KILLED, "a step the runner killed otherwise is KILLED", "%s: '%s'",
	      item_status_name(status), reason.buf);

	CHECK(go_exit_code(GO_ERR_INTERNAL) == GO_EXIT_LOCAL, "an internal error stays exit 4",
	      "exit %d", go_exit_code(GO_ERR_INTERNAL));

	strbuf_release(&hr.out);
	strbuf_release(&err);
	strbuf_release(&reason);
	return check_summary();
}
