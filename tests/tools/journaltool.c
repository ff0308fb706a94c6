/* journaltool.c -- test helper: hostjournal.c on a real runner's journal.
 *
 *   journaltool OFFSET < BYTES   feed stdin as the journal from OFFSET on
 *   journaltool --file PATH OFFSET
 * Prints one line per event delivered, "EV ID STATUS RC" (- for none), then
 * "offset N bad N dup N ended STATUS|-" (N: where to resume). */
#include "remote/hostjournal.h"
#include "core/jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

static int print_event(const struct journal_event *e, void *ctx)
{
	const cJSON *rc = cJSON_GetObjectItemCaseSensitive(e->json, "rc");
	const char *st = json_str(e->json, "status");
	(void)ctx;
	printf("%s %s %s ", e->ev, e->id ? e->id : "-", st ? st : "-");
	if (cJSON_IsNumber(rc))
		printf("%d\n", rc->valueint);
	else
		printf("-\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct journal j;
	struct strbuf err = STRBUF_INIT;
	enum go_status st = GO_OK;
	char buf[65536];
	size_t n;

	if (argc == 4 && !strcmp(argv[1], "--file")) {
		journal_init(&j, strtoull(argv[3], NULL, 10));
		st = journal_read_file(&j, argv[2], print_event, NULL, &err);
	} else if (argc == 2) {
		journal_init(&j, strtoull(argv[1], NULL, 10));
		while (!st && (n = fread(buf, 1, sizeof(buf), stdin)) > 0)
			st = journal_feed(&j, buf, n, print_event, NULL, &err);
	} else {
		fprintf(stderr, "usage: journaltool OFFSET < BYTES | journaltool --file PATH OFFSET\n");
		return 2;
	}
	if (st)
		fprintf(stderr, "journaltool: %s\n", err.buf);
	printf("offset %llu bad %d dup %d ended %s\n", (unsigned long long)j.offset, j.nbad, j.ndup,
	       j.ended ? j.end_status : "-");
	journal_release(&j);
	strbuf_release(&err);
	return st ? 1 : 0;
}
