/* blobs.h -- ship only the files a host lacks: the manifest of a pack and a tar of its missing blobs.
 *
 * DESIGN: a host keeps every file it was ever sent once, by content, as
 * W/blobs/<sha256>; a content directory's src/ is assembled there from its
 * manifest (one line per file: "SHA256 MODE PATH", in path order). The
 * follow command (remote.c) gets the manifest on its stdin, and when the
 * content is not yet on the host it answers with the blobs it lacks; the
 * controller then uploads a tar of just those (entries named by their
 * hash), and the next follow assembles src/. Touching one file of a tree
 * ships that file; an unchanged tree ships nothing. */
#ifndef GPUORCH_BLOBS_H
#define GPUORCH_BLOBS_H

#include <stddef.h>
#include "core/error.h"
#include "remote/pack.h"

/* Append the pack's manifest to out. */
void blobs_manifest(const struct pack *p, struct strbuf *out);
/* A ustar archive of the pack's files whose hashes are in missing (n hashes,
 * any order; an unknown hash is GO_ERR_REMOTE), each entry named by its hash,
 * each content once; *data is the caller's to free. */
enum go_status blobs_tar(const struct pack *p, char *const *missing, int n, unsigned char **data,
			 size_t *len, struct strbuf *err);
/* The same blobs for the host's execd to write itself (ssh_execd_put): each
 * "SHA256 SIZE\n" and its bytes, each content once, into *data (the
 * caller's to free). */
enum go_status blobs_frames(const struct pack *p, char *const *missing, int n,
			    unsigned char **data, size_t *len, struct strbuf *err);

#endif
