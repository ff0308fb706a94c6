/* interrupt.c -- SIGINT/SIGTERM recorded for the commands that finish what
 * they started (interrupt.h). */
#include "core/interrupt.h"

#include <string.h>
#include "core/banned.h"

volatile sig_atomic_t interrupt_signal;

static void on_signal(int sig)
{
	interrupt_signal = sig;
}

void interrupt_catch(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}
