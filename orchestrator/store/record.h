/* record.h -- the run record (run.json) being built while a run goes on.
 *
 * DESIGN: the record is one cJSON tree owned by struct record and guarded
 * by its mutex. Host threads change only their own host object, always
 * between record_lock() and record_unlock(). record_save() serialises the
 * whole tree and writes run.json atomically: at the start of a run, at its
 * end and on interrupt. In between, record_save_host() appends what changed
 * in the one host's object since its last save (store/hostdelta.h) to the
 * run's journal (store/runjournal.h), so a save costs that change (a step:
 * that step's record), not the host's or the run's; readers
 * (store_load_record) apply the journal to run.json. run.json on disk is always a whole, parseable record
 * ("status": "running" until the end). */
#ifndef GPUORCH_RECORD_H
#define GPUORCH_RECORD_H

#include <pthread.h>
#include <cjson/cJSON.h>
#include "core/error.h"
#include "core/hash.h"
#include "store/hostdelta.h"

struct record {
	pthread_mutex_t lock;
	cJSON *root;
	char *dir;        /* the run directory */
	char *path;       /* dir/run.json */
	pthread_mutex_t jlock; /* orders journal appends against whole saves */
	int jfd;          /* dir/journal.jsonl, -1: none (host saves rewrite run.json) */
	/* under jlock and the record lock: */
	struct hostdelta *hd;  /* per host: what the journal and run.json hold of it */
	int nhd;
	char run_sha[SHA256_HEX_LEN + 1]; /* run.json as last written whole */
	int based;        /* the journal's base line is written */
};

void record_init(struct record *r, const char *dir, cJSON *root);
void record_release(struct record *r);
void record_lock(struct record *r);
void record_unlock(struct record *r);
/* Write run.json whole and empty the journal (takes the locks itself). */
enum go_status record_save(struct record *r, struct strbuf *err);
/* Record host INDEX's object as it stands: one journal line of what changed
 * since its last save, none when nothing did (takes the locks itself;
 * without a journal, a whole save). */
enum go_status record_save_host(struct record *r, int index, const cJSON *host,
				struct strbuf *err);
/* Append item to host INDEX's array key (host is that host's object; takes
 * the record lock): the next record_save_host journals it without walking
 * the array (store/hostdelta.h). A host's steps are appended through here. */
void record_host_append(struct record *r, int index, cJSON *host, const char *key,
			cJSON *item);
/* Write a file under the run directory atomically: rel like "logs/h/x.log". */
enum go_status record_write_file(struct record *r, const char *rel, const void *data,
				 size_t len, struct strbuf *err);

#endif
