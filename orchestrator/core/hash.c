/* hash.c -- SHA-256 hex digests via libcrypto's EVP interface. */
#include "core/hash.h"
#include "core/strbuf.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include "core/banned.h"

struct sha256_ctx {
	EVP_MD_CTX *md;
};

struct sha256_ctx *sha256_begin(void)
{
	struct sha256_ctx *c = xmalloc(sizeof(*c));
	c->md = EVP_MD_CTX_new();
	if (!c->md || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
		fprintf(stderr, "fatal: libcrypto cannot initialise SHA-256\n");
		abort();
	}
	return c;
}

void sha256_update(struct sha256_ctx *c, const void *data, size_t len)
{
	EVP_DigestUpdate(c->md, data, len);
}

void sha256_end(struct sha256_ctx *c, char out[SHA256_HEX_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;
	EVP_DigestFinal_ex(c->md, d, &n);
	for (i = 0; i < n && i < 32; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[SHA256_HEX_LEN] = '\0';
	EVP_MD_CTX_free(c->md);
	free(c);
}

void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1])
{
	struct sha256_ctx *c = sha256_begin();
	sha256_update(c, data, len);
	sha256_end(c, out);
}
