/* report-libs.c -- which baseline ran: the backend a script baseline's
 * library chose (PyTorch SDPA: cudnn, flash, efficient, math) and the
 * library versions it ran with (torch, CUDA, cuDNN, cuBLAS), one line per
 * step of a problem that recorded them (kernels/baselines/_bench.py). */
#include "report/report-int.h"

#include <string.h>
#include "core/banned.h"

static void add_lib(struct strbuf *md, const cJSON *libs, const char *key, const char *label, int *n)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(libs, key);
	if (!cJSON_IsString(v) && !cJSON_IsNumber(v))
		return;
	strbuf_addstr(md, (*n)++ ? ", " : "");
	strbuf_addstr(md, label);
	strbuf_addch(md, ' ');
	if (cJSON_IsString(v))
		rpt_md_cell_n(md, v->valuestring, 40);
	else
		strbuf_addf(md, "%.0f", v->valuedouble);
}

void rpt_add_libraries(struct strbuf *md, const cJSON *h, const char *problem)
{
	const cJSON *s;
	FOR_EACH_STEP_OF(s, h, STEP_BENCHMARK, problem) {
		const cJSON *res = rr_result(s), *be = rr_obj(res, "sdpa_backend"), *libs = rr_obj(res, "libraries");
		int n = 0;
		if (!be && !libs)
			continue;
		strbuf_addstr(md, "- ");
		rpt_md_code(md, rr_str(s, "program"));
		strbuf_addstr(md, ": ");
		if (be) {
			strbuf_addstr(md, "SDPA backend **");
			rpt_md_cell_n(md, rr_str(be, "chosen") ? rr_str(be, "chosen") : "unknown", 20);
			strbuf_addstr(md, "** (requested ");
			rpt_md_cell_n(md, rr_str(be, "requested") ? rr_str(be, "requested") : "?", 20);
			if (!rr_str(be, "chosen") && rr_str(be, "why")) {
				strbuf_addstr(md, "; ");
				rpt_md_cell_n(md, rr_str(be, "why"), 120);
			}
			strbuf_addstr(md, ")");
			n++;
		}
		if (libs) {
			int m = 0;
			strbuf_addstr(md, n ? "; " : "");
			add_lib(md, libs, "torch", "torch", &m);
			add_lib(md, libs, "cuda", "CUDA", &m);
			add_lib(md, libs, "cudnn", "cuDNN", &m);
			add_lib(md, libs, "cublas", "cuBLAS", &m);
			if (!m)
				strbuf_addstr(md, "no library versions recorded");
		}
		strbuf_addstr(md, "\n");
	}
}
