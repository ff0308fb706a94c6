/* site-assets.h -- orchestrator/run/site.js and site.css, the site's one
 * script and stylesheet, embedded in the gpuorch binary at build time
 * (Makefile, scripts/embed.sh); run/site.c writes them into every site. */
#ifndef GPUORCH_SITE_ASSETS_H
#define GPUORCH_SITE_ASSETS_H

#include <stddef.h>

extern const unsigned char gpuorch_site_js[];
extern const size_t gpuorch_site_js_len;
extern const unsigned char gpuorch_site_css[];
extern const size_t gpuorch_site_css_len;

#endif
