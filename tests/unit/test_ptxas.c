/* test_ptxas.c -- unit tests of ptxas.c against nvcc output captured in tests/fixtures/ptxas.
 * Run from the repository root. */
#include "tools/ptxas.h"
#include "core/fsutil.h"
#include "core/jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/banned.h"


#define FIX "tests/fixtures/ptxas/"

static cJSON *parse_fixture(const char *name, struct strbuf *notes)
{
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	char *path = xstrfmt(FIX "%s", name);
	cJSON *arr;
	if (fs_read_file(path, &text, &err) != GO_OK) {
		printf("# cannot read fixture: %s\n", err.buf);
		n_failed++;
	}
	arr = ptxas_parse(text.buf, text.len, notes);
	strbuf_release(&text);
	strbuf_release(&err);
	free(path);
	return arr;
}

static const cJSON *find_kernel(const cJSON *arr, const char *name, const char *arch)
{
	const cJSON *k;
	cJSON_ArrayForEach(k, arr) {
		const char *a = json_str(k, "arch");
		if (!strcmp(json_str(k, "kernel") ? json_str(k, "kernel") : "", name) &&
		    (!arch || (a && !strcmp(a, arch))))
			return k;
	}
	return NULL;
}

static double num(const cJSON *o, const char *key)
{
	return json_num(o, key, -999);
}

static int is_null(const cJSON *o, const char *key)
{
	return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, key));
}

static void test_demangle(void)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "_Z9attn_wmmaILi64EEvPK6__halfS2_S2_PS0_iiif", "attn_wmma<64>" },
		{ "_Z10attn_wmmaILi64EEvPK6__halfS2_S2_PS0_iiif", "attn_wmmaI" },
		{ "_ZN5flash6detail8attn_fwdILi128ELb1EEEvPK6__halfS4_S4_PS2_if",
		  "flash::detail::attn_fwd<128, true>" },
		{ "_Z12spill_kernelPKfPfii", "spill_kernel" },
		{ "_Z4axpyfPKfPfi", "axpy" },
		{ "_ZN12_GLOBAL__N_16kernelEPf", "(anonymous namespace)::kernel" },
		{ "_ZL6staticPf", "static" },
		{ "_Z4gemmIfLj128ELin4EEvPT_", "gemm<float, 128u, -4>" },
		{ "_Z4gemmI6__halfEvPT_", "gemm<__half>" },
		{ "_Z1fIS_EvT_", "f<...>" },
		{ "kernel_c", "kernel_c" },
		{ "_Z", "_Z" },
		{ "_Z999abc", "_Z999abc" },
		{ "_ZN3abcE", "abc" },
		{ "_ZN3abc", "_ZN3abc" },
		{ "_Z3fooILi", "foo<...>" },
	};
	size_t i;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf sb = STRBUF_INIT;
		char *what = xstrfmt("demangle %s", cases[i].in);
		ptxas_demangle(cases[i].in, &sb);
		CHECK(!strcmp(sb.buf, cases[i].out), what, "got '%s', want '%s'", sb.buf,
		      cases[i].out);
		free(what);
		strbuf_release(&sb);
	}
}

static void test_spill(void)
{
	struct strbuf notes = STRBUF_INIT;
	cJSON *arr = parse_fixture("spill-sm_90a.txt", &notes);
	const cJSON *k = find_kernel(arr, "_Z12spill_kernelPKfPfii", NULL);
	const cJSON *fib = find_kernel(arr, "_Z3fibiPKi", NULL);
	const cJSON *mix = find_kernel(arr, "_Z3mixPKfii", NULL);

	CHECK(cJSON_GetArraySize(arr) == 4, "spill sm_90a: 2 kernels + 2 device functions",
	      "got %d", cJSON_GetArraySize(arr));
	CHECK(k && num(k, "registers") == 24 && num(k, "spill_store_bytes") == 16 &&
	      num(k, "spill_load_bytes") == 16 && num(k, "stack_bytes") == 1040 &&
	      num(k, "barriers") == 0, "spill kernel: 24 regs, 16/16 spill bytes, 1040 stack",
	      "%s", k ? cJSON_PrintUnformatted(k) : "missing");
	CHECK(k && cJSON_IsTrue(cJSON_GetObjectItem(k, "entry")) &&
	      !strcmp(json_str(k, "arch"), "sm_90a") &&
	      !strcmp(json_str(k, "demangled"), "spill_kernel"), "spill kernel: entry, arch, name",
	      "bad");
	CHECK(k && is_null(k, "smem_bytes") && is_null(k, "cmem_bytes"),
	      "no smem/cmem reported -> null, not 0", "bad");
	CHECK(k && num(k, "compile_ms") > 90 && num(k, "compile_ms") < 94, "compile time read",
	      "%g", k ? num(k, "compile_ms") : 0);
	CHECK(fib && cJSON_IsFalse(cJSON_GetObjectItem(fib, "entry")) &&
	      num(fib, "stack_bytes") == 32 && num(fib, "spill_store_bytes") == 28 &&
	      is_null(fib, "registers") && json_str(fib, "arch") &&
	      !strcmp(json_str(fib, "arch"), "sm_90a"),
	      "device function: stack + spills, arch of its section, no registers", "%s",
	      fib ? "bad fields" : "missing");
	CHECK(mix && num(mix, "stack_bytes") == 0, "device function after the last kernel", "bad");
	CHECK(strstr(notes.buf, "Too big maxrregcount") != NULL,
	      "warnings naming no function go to notes", "notes: %s", notes.buf);
	CHECK(strstr(notes.buf, "truncated") == NULL, "complete log: no truncation note",
	      "notes: %s", notes.buf);
	cJSON_Delete(arr);
	strbuf_release(&notes);
}

static void test_spill_warnings(void)
{
	struct strbuf notes = STRBUF_INIT;
	cJSON *arr = parse_fixture("spill-warn-sm_90a.txt", &notes);
	const cJSON *k = find_kernel(arr, "_Z12spill_kernelPKfPfii", NULL);
	const cJSON *w = k ? cJSON_GetObjectItem(k, "warnings") : NULL;
	const cJSON *rec = find_kernel(arr, "_Z16recursive_kernelPiPKii", NULL);
	CHECK(cJSON_GetArraySize(w) == 2, "spill + lmem warnings attached to their kernel",
	      "got %d", cJSON_GetArraySize(w));
	CHECK(w && strstr(cJSON_GetArrayItem(w, 1)->valuestring, "Registers are spilled"),
	      "warning text kept", "bad");
	CHECK(rec && cJSON_GetArraySize(cJSON_GetObjectItem(rec, "warnings")) == 0,
	      "other kernels get no warnings", "bad");
	cJSON_Delete(arr);
	strbuf_release(&notes);
}

static void test_smem(void)
{
	struct strbuf notes = STRBUF_INIT;
	cJSON *arr = parse_fixture("smem-sm_89.txt", &notes);
	const cJSON *t = find_kernel(arr, "_Z14tile_transposePKfPfi", "sm_89");
	const cJSON *r = find_kernel(arr, "_Z12block_reducePKfPfi", "sm_89");
	const cJSON *a = find_kernel(arr, "_Z4axpyfPKfPfi", "sm_89");
	CHECK(cJSON_GetArraySize(arr) == 3, "smem sm_89: 3 kernels", "got %d",
	      cJSON_GetArraySize(arr));
	CHECK(t && num(t, "smem_bytes") == 16640 && num(t, "barriers") == 1 &&
	      num(t, "registers") == 16 && num(t, "cmem_bytes") == 372,
	      "tile_transpose: 16640 smem, 1 barrier, 16 regs, 372 cmem", "bad");
	CHECK(r && num(r, "smem_bytes") == 128, "block_reduce: static smem only", "bad");
	CHECK(a && num(a, "smem_bytes") < 0 && num(a, "cmem_bytes") == 380,
	      "axpy: no smem field", "bad");
	cJSON_Delete(arr);
	strbuf_release(&notes);
}

static void test_template(void)
{
	struct strbuf notes = STRBUF_INIT;
	cJSON *arr = parse_fixture("template-multiarch.txt", &notes);
	const cJSON *a89 = find_kernel(arr,
		"_ZN5flash6detail8attn_fwdILi64ELb0EEEvPK6__halfS4_S4_PS2_if", "sm_89");
	const cJSON *a90 = find_kernel(arr,
		"_ZN5flash6detail8attn_fwdILi64ELb0EEEvPK6__halfS4_S4_PS2_if", "sm_90a");
	const cJSON *w = find_kernel(arr, "_Z9attn_wmmaILi64EEvPK6__halfS2_S2_PS0_iiif", "sm_90a");
	CHECK(cJSON_GetArraySize(arr) == 6, "two archs x three kernels", "got %d",
	      cJSON_GetArraySize(arr));
	CHECK(a89 && a90 && num(a89, "registers") == 164 && num(a90, "registers") == 95,
	      "same kernel, per-arch registers", "bad");
	CHECK(a90 && !strcmp(json_str(a90, "demangled"), "flash::detail::attn_fwd<64, false>"),
	      "nested template name demangled", "%s", a90 ? json_str(a90, "demangled") : "");
	CHECK(w && !strcmp(json_str(w, "demangled"), "attn_wmma<64>"), "attn_wmma<64>", "bad");
	cJSON_Delete(arr);
	strbuf_release(&notes);
}

static void test_handwritten(void)
{
	struct strbuf notes = STRBUF_INIT;
	cJSON *arr = parse_fixture("handwritten-older-nvcc.txt", &notes);
	const cJSON *s = find_kernel(arr, "_Z6scalarPfi", NULL);
	const cJSON *r = find_kernel(arr, "_Z7recursePii", NULL);
	const cJSON *c = find_kernel(arr, "kernel_c", NULL);
	const cJSON *a = find_kernel(arr, "_Z10attn_wmmaILi64EEvPK6__halfS2_S2_PS0_iiif", NULL);
	CHECK(a && num(a, "registers") == 128 && num(a, "smem_bytes") == 34816 &&
	      num(a, "cmem_bytes") == 400 && num(a, "compile_ms") == 12.3,
	      "brief's example line", "bad");
	CHECK(s && num(s, "registers") == 40 && is_null(s, "barriers") &&
	      num(s, "cmem_bytes") == 392, "older form without barriers; cmem banks summed",
	      "bad");
	CHECK(r && cJSON_GetArraySize(cJSON_GetObjectItem(r, "warnings")) == 1 &&
	      strstr(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "warnings"), 0)->valuestring,
		     "cannot be statically determined"),
	      "stack-size warning attached", "bad");
	CHECK(c && num(c, "registers") == 255 && num(c, "spill_store_bytes") == 8 &&
	      num(c, "smem_bytes") == 49152 && !strcmp(json_str(c, "demangled"), "kernel_c") &&
	      cJSON_GetArraySize(cJSON_GetObjectItem(c, "warnings")) == 1,
	      "extern \"C\" kernel with spills", "bad");
	cJSON_Delete(arr);
	strbuf_release(&notes);
}

static void test_truncated(void)
{
	struct strbuf notes = STRBUF_INIT;
	cJSON *arr = parse_fixture("truncated.txt", &notes);
	const cJSON *k = find_kernel(arr, "_Z12spill_kernelPKfPfii", NULL);
	const cJSON *a = find_kernel(arr, "_Z4axpyfPKfPfi", NULL);
	CHECK(k && num(k, "registers") == 24, "complete block before the cut kept", "bad");
	CHECK(a && is_null(a, "registers") && num(a, "stack_bytes") == 0 &&
	      is_null(a, "spill_store_bytes"), "cut block: partial record, unknowns null", "%s",
	      a ? "bad fields" : "missing");
	CHECK(strstr(notes.buf, "_Z4axpyfPKfPfi") && strstr(notes.buf, "truncated"),
	      "truncation noted", "notes: %s", notes.buf);
	cJSON_Delete(arr);
	strbuf_release(&notes);

	arr = parse_fixture("truncated-midline.txt", &notes);
	a = find_kernel(arr, "_Z4axpyfPKfPfi", NULL);
	CHECK(a && num(a, "registers") < 0, "line cut inside a number: registers unknown", "bad");
	cJSON_Delete(arr);
	strbuf_release(&notes);
}

static void test_garbage(void)
{
	static const char *inputs[] = {
		"",
		"\n\n\n",
		"ptxas info    :",
		"ptxas info    : Compiling entry function '",
		"ptxas info    : Compiling entry function '' for ''",
		"ptxas info    : Function properties for",
		"ptxas info    : Used 99999999999999999999999999 registers, used -1 barriers",
		"    12 bytes stack frame\nptxas info    : Used 3 registers",
		"ptxas warning : in function 'x\nptxas error   : Entry function 'k' uses too much shared data",
		"ptxas info    : Compile time = ms\nptxas info    : 12 bytes gmem",
		"ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
		"ptxas info    : Function properties for k\n"
		"    ,,, bytes stack frame,,\n"
		"ptxas info    : Used ,,,, registers,",
	};
	size_t i;
	int ok = 1;
	for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct strbuf notes = STRBUF_INIT;
		cJSON *arr = ptxas_parse(inputs[i], strlen(inputs[i]), &notes);
		ok = ok && cJSON_IsArray(arr);
		cJSON_Delete(arr);
		strbuf_release(&notes);
	}
	CHECK(ok, "malformed input never crashes and yields an array", "bad");

	{
		struct strbuf notes = STRBUF_INIT;
		const char *t = "ptxas error   : Entry function 'k' uses too much shared data";
		cJSON *arr = ptxas_parse(t, strlen(t), &notes);
		CHECK(cJSON_GetArraySize(arr) == 0 && strstr(notes.buf, "too much shared data"),
		      "ptxas error reported in notes", "notes: %s", notes.buf);
		cJSON_Delete(arr);
		strbuf_release(&notes);
	}
	{
		/* not NUL-terminated: only len bytes may be read */
		const char src[] = "ptxas info    : Compiling entry function 'k' for 'sm_90a'XXXX";
		char *buf = xmalloc(sizeof(src) - 5);
		cJSON *arr;
		memcpy(buf, src, sizeof(src) - 5);
		arr = ptxas_parse(buf, sizeof(src) - 5, NULL);
		CHECK(cJSON_GetArraySize(arr) == 1, "unterminated buffer read within len", "got %d",
		      cJSON_GetArraySize(arr));
		cJSON_Delete(arr);
		free(buf);
	}
	{
		cJSON *arr = ptxas_parse(NULL, 0, NULL);
		CHECK(cJSON_IsArray(arr) && cJSON_GetArraySize(arr) == 0, "NULL text: empty array",
		      "bad");
		cJSON_Delete(arr);
	}
}

/* sm_89 spill fixture: 8 bytes stored, 4 loaded -- the only capture whose
 * stores and loads differ, so a swap of the two shows. */
static void test_spill_unequal(void)
{
	struct strbuf notes = STRBUF_INIT;
	cJSON *arr = parse_fixture("spill-sm_89.txt", &notes);
	const cJSON *k = find_kernel(arr, "_Z12spill_kernelPKfPfii", "sm_89");
	const cJSON *r = find_kernel(arr, "_Z16recursive_kernelPiPKii", "sm_89");

	CHECK(k && num(k, "spill_store_bytes") == 8 && num(k, "spill_load_bytes") == 4 &&
	      num(k, "stack_bytes") == 1040 && num(k, "registers") == 24,
	      "spill sm_89: 8 bytes spill stores, 4 bytes spill loads (not swapped)",
	      "%s", k ? cJSON_PrintUnformatted(k) : "missing");
	CHECK(r && num(r, "spill_store_bytes") == 0 && num(r, "spill_load_bytes") == 0,
	      "spill sm_89: the recursive kernel spills nothing", "%s", r ? "bad" : "missing");
	cJSON_Delete(arr);
	strbuf_release(&notes);
}

int main(void)
{
	test_demangle();
	test_spill();
	test_spill_unequal();
	test_spill_warnings();
	test_smem();
	test_template();
	test_handwritten();
	test_truncated();
	test_garbage();
	return check_summary();
}
