/* interrupt.h -- the one catcher of SIGINT and SIGTERM: a command that must
 * finish what it started (record a run incomplete, stop the instances it
 * started) installs it and looks at interrupt_signal between its steps. */
#ifndef GPUORCH_CORE_INTERRUPT_H
#define GPUORCH_CORE_INTERRUPT_H

#include <signal.h>

/* The signal caught (SIGINT or SIGTERM), 0 while none was. */
extern volatile sig_atomic_t interrupt_signal;

/* From now on SIGINT and SIGTERM are recorded in interrupt_signal, never
 * lost (a shell starts background jobs with SIGINT ignored); SIGPIPE is
 * ignored (a closed pipe is an EPIPE where it is written). */
void interrupt_catch(void);

#endif
