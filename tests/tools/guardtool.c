/* guardtool.c -- the instance guard and the controller's heartbeat
 * (cloud/guard.h, cloud/heartbeat.h) from the shell tests:
 *
 *   guardtool HOSTS NAME install        arm the guard on host NAME's instance
 *   guardtool HOSTS NAME beat SECONDS   feed it from the heartbeat thread for
 *                                       SECONDS, then stop feeding and exit
 *                                       (the guard stays armed); prints
 *                                       "fired" if the guard fired meanwhile
 *   guardtool HOSTS NAME disarm
 * An error prints "error: MESSAGE" and exits 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cloud/guard.h"
#include "cloud/heartbeat.h"
#include "core/timeutil.h"
#include "core/banned.h"

int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	struct hosts *hs = NULL;
	struct instance *in = NULL;
	struct ssh_conn *c = NULL;
	struct ssh_opts o;
	char *names[1];
	enum go_status st;
	int rc = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: guardtool HOSTS NAME install|beat SECONDS|disarm\n");
		return 2;
	}
	names[0] = argv[2];
	if ((st = ssh_global_init(&err)) || (st = hosts_load(argv[1], &hs, &err)) ||
	    (st = hosts_select(hs, names, 1, &err)) ||
	    (st = instance_load(&hs->v[0], argv[1], &in, &err)))
		goto out;
	if (!in) {
		st = go_fail(&err, GO_ERR_USAGE, "host %s has no instance", argv[2]);
		goto out;
	}
	if (!strcmp(argv[3], "beat") && argc == 5) {
		struct heartbeat *hb = heartbeat_start(1, 0);
		heartbeat_add(hb, 0, &hs->v[0], in);
		time_sleep_ms((int64_t)(atof(argv[4]) * 1000));
		if (heartbeat_fired(hb, 0))
			printf("fired\n");
		heartbeat_stop(hb);
		goto out;
	}
	host_ssh_opts(&hs->v[0], 0, &o);
	if ((st = ssh_connect(&o, &c, &err)))
		goto out;
	if (!strcmp(argv[3], "install"))
		st = guard_install(c, &hs->v[0], in, &err);
	else if (!strcmp(argv[3], "disarm"))
		st = guard_disarm(c, &hs->v[0], &err);
	else
		st = go_fail(&err, GO_ERR_USAGE, "unknown command '%s'", argv[3]);
out:
	if (st != GO_OK) {
		fprintf(stderr, "error: %s\n", err.buf);
		rc = 1;
	}
	ssh_disconnect(c);
	instance_free(in);
	hosts_free(hs);
	ssh_global_cleanup();
	strbuf_release(&err);
	return rc;
}
