/* hash.h -- SHA-256 through OpenSSL's libcrypto, as lowercase hex. */
#ifndef GPUORCH_HASH_H
#define GPUORCH_HASH_H

#include <stddef.h>

#define SHA256_HEX_LEN 64

/* out must hold SHA256_HEX_LEN + 1 bytes. */
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);

/* Incremental use. */
struct sha256_ctx;
struct sha256_ctx *sha256_begin(void);
void sha256_update(struct sha256_ctx *c, const void *data, size_t len);
void sha256_end(struct sha256_ctx *c, char out[SHA256_HEX_LEN + 1]); /* frees c */

#endif
