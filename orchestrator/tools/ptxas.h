/* ptxas.h -- per-kernel resources from the verbose ptxas report of a build.
 *
 * A build run with `nvcc -Xptxas -v` prints, on stderr, one block per
 * function ("Compiling entry function 'X' for 'sm_90a'", "Function properties
 * for X", "N bytes stack frame, ...", "Used N registers, ..."). ptxas_parse()
 * turns that text into the "resources" array of a build in run.json
 * (docs/run-record.md). It never fails: lines it does not understand are
 * skipped, and a block cut short (a truncated log) is kept with the fields it
 * has, the others null, and a note. */
#ifndef GPUORCH_PTXAS_H
#define GPUORCH_PTXAS_H

#include <stddef.h>
#include <cjson/cJSON.h>
#include "core/strbuf.h"

/* Parse len bytes of nvcc stderr. Returns a new cJSON array (never NULL) of
 * objects, one per function, in the order ptxas reported them:
 *   {"kernel": mangled name, "demangled": "ns::name<64, true>",
 *    "entry": true for __global__ kernels, false for device functions,
 *    "arch": "sm_90a" or null, "registers", "barriers", "smem_bytes",
 *    "cmem_bytes" (all banks), "stack_bytes", "spill_store_bytes",
 *    "spill_load_bytes", "compile_ms": numbers or null when not reported,
 *    "warnings": ["ptxas warning lines that name this function"]}
 * ptxas warnings that name no function, ptxas errors and blocks cut short
 * are described in notes (one line each) when notes is not NULL. */
cJSON *ptxas_parse(const char *text, size_t len, struct strbuf *notes);

/* Best-effort demangling of an Itanium C++ name, name only: "_Z9attn_wmmaILi64EEvPK6__half..."
 * -> "attn_wmma<64>", "_ZN5flash6detail8attn_fwdILi64ELb0EEEv..." ->
 * "flash::detail::attn_fwd<64, false>". Template arguments it cannot read
 * are dropped ("name<...>"); a name that is not mangled is copied as is. */
void ptxas_demangle(const char *mangled, struct strbuf *out);

#endif
