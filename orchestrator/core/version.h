/* version.h -- gpuorch's version: from git when it was built
 * (scripts/version.sh, written by the Makefile into build/gen/core/version.c),
 * e.g. "0.1.0-g0123456789ab", a tag's "1.2.0", "0.1.0-unknown" for a tree
 * without .git. `gpuorch --version`, every record's gpuorch_version and the
 * HTTP User-Agent say it. GPUORCH_RELEASE (the Makefile's VERSION, "0.1.0")
 * is the release alone: the report's renderer line names it, so a report
 * stays current across commits that do not change the renderer. */
#ifndef GPUORCH_VERSION_H
#define GPUORCH_VERSION_H

extern const char gpuorch_version[];

#endif
