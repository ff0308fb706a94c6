#!/bin/sh
test_description='orchestrator/ in layers: no loops of calls or includes, folders use only lower layers (scripts/check-layers.sh)'
. "$(dirname "$0")/lib/testlib.sh"

CHECK="$SRCDIR/scripts/check-layers.sh"

# mkunit DIR/NAME 'C TEXT': a source file of the scratch tree src/ and its object in obj/
mkunit() {
	mkdir -p "src/$(dirname "$1")" "obj/$(dirname "$1")" &&
	printf '%s\n' "$2" >"src/$1.c" &&
	cc -c -Isrc -o "obj/$1.o" "src/$1.c"
}

test_expect_success 'the built tree has no loops and every folder uses only lower layers' '
	{ (cd "$SRCDIR" && "$CHECK" orchestrator build/obj) >out; rc=$?; cat out; } &&
	test "$rc" -eq 0 &&
	test_grep "^layers: ok" out
'

test_expect_success 'a scratch tree that goes down the layers passes' '
	mkunit core/a "int a(void) { return 1; }" &&
	mkunit core/b "int a(void); int b(void) { return a(); }" &&
	mkunit cmd/main "int b(void); int main(void) { return b(); }" &&
	"$CHECK" src obj >out &&
	test_grep "^layers: ok (3 .c files, 2 file-to-file call edges" out
'

test_expect_success 'two files that call each other are a loop, named with the functions' '
	mkunit core/a "int b(void); int a(void) { return 0; } int a2(void) { return b(); }" &&
	test_expect_code 1 "$CHECK" src obj >out &&
	test_grep "^a loop of calls between files" out &&
	test_grep "^  src/core/a.c, src/core/b.c$" out &&
	test_grep "src/core/a.c <-> src/core/b.c: b <-> a" out
'

test_expect_success 'a loop through three files is found' '
	mkunit core/a "int c(void); int a(void) { return c(); }" &&
	mkunit core/b "int a(void); int b(void) { return a(); }" &&
	mkunit core/c "int b(void); int c(void) { return b(); }" &&
	test_expect_code 1 "$CHECK" src obj >out &&
	test_grep "^a loop of calls between files" out &&
	test_grep "^  src/core/a.c, src/core/b.c, src/core/c.c$" out &&
	rm src/core/c.c obj/core/c.o &&
	mkunit core/a "int a(void) { return 1; }"
'

test_expect_success 'a call up the layers is named: file, function, both layers' '
	mkunit core/b "int main(void); int b(void) { return main(); }" &&
	test_expect_code 1 "$CHECK" src obj >out &&
	test_grep "src/core/b.c calls main() of src/cmd/main.c: core (layer 0) may not use cmd (layer 4)" out &&
	mkunit core/b "int a(void); int b(void) { return a(); }"
'

test_expect_success 'a call sideways, to a folder of the same layer, is refused' '
	mkunit transport/t "int s(void); int t(void) { return s(); }" &&
	mkunit store/s "int s(void) { return 2; }" &&
	test_expect_code 1 "$CHECK" src obj >out &&
	test_grep "src/transport/t.c calls s() of src/store/s.c: transport (layer 1) may not use store (layer 1)" out &&
	rm -r src/transport src/store obj/transport obj/store
'

test_expect_success 'an include up the layers, and a loop of headers, are refused' '
	printf "#include \"core/y.h\"\n" >src/core/x.h &&
	printf "#include \"core/x.h\"\n" >src/core/y.h &&
	printf "#include \"cmd/cmd.h\"\n" >src/core/z.h &&
	printf "\n" >src/cmd/cmd.h &&
	test_expect_code 1 "$CHECK" src obj >out &&
	test_grep "^a loop of #includes between headers:" out &&
	test_grep "^  src/core/x.h, src/core/y.h$" out &&
	test_grep "src/core/z.h includes cmd/cmd.h: core (layer 0) may not use cmd (layer 4)" out &&
	rm src/core/x.h src/core/y.h src/core/z.h src/cmd/cmd.h
'

test_expect_success 'a folder on no layer, and a missing object, are errors that say what to do' '
	mkunit extra/e "int e(void) { return 3; }" &&
	test_expect_code 1 "$CHECK" src obj >out &&
	test_grep "src/extra/ is on no layer: add it to LAYERS in scripts/check-layers.sh" out &&
	rm obj/extra/e.o &&
	test_expect_code 2 "$CHECK" src obj 2>err &&
	test_grep "no object obj/extra/e.o for src/extra/e.c (run make)" err
'

test_expect_success 'the run record has one writer: record_lock outside store/ is refused, inside passes' '
	rm -r src/extra obj/extra &&
	mkunit store/record "struct record; void record_lock(struct record *r) { (void)r; } void record_unlock(struct record *r) { (void)r; }" &&
	mkunit store/runwrite "struct record; void record_lock(struct record *r); void record_unlock(struct record *r); void runw_x(struct record *r) { record_lock(r); record_unlock(r); }" &&
	"$CHECK" src obj >out &&
	test_grep "^layers: ok .*the run record written in store/ only" out &&
	mkunit run/engine "struct record; void record_lock(struct record *r); void record_unlock(struct record *r); int main(void) { record_lock(0); record_unlock(0); return 0; }" &&
	test_expect_code 1 "$CHECK" src obj >out &&
	test_grep "^src/run/engine.c calls record_lock(): only store/ writes the run record (use store/runwrite.h)" out &&
	test_grep "^src/run/engine.c calls record_unlock(): only store/ writes the run record" out &&
	! test_grep "store/runwrite.c calls" out &&
	rm src/run/engine.c obj/run/engine.o
'

test_expect_success 'a cJSON change of the record tree outside store/ is refused; a read, or the same in store/, passes' '
	hdr="typedef struct cJSON cJSON; struct hostrun { cJSON *hj; }; void cJSON_AddItemToObject(cJSON *o, const char *k, cJSON *v); cJSON *cJSON_GetObjectItem(const cJSON *o, const char *k);" &&
	mkunit remote/reader "$hdr cJSON *rd(struct hostrun *hr) { return cJSON_GetObjectItem(hr->hj, \"spread\"); }" &&
	mkunit store/writer "$hdr void wr(struct hostrun *hr, cJSON *v) { cJSON_AddItemToObject(hr->hj, \"x\", v); }" &&
	"$CHECK" src obj >out &&
	test_grep "^layers: ok" out &&
	mkunit remote/phase "$hdr void ph(struct hostrun *hr, cJSON *v) { cJSON_AddItemToObject(cJSON_GetObjectItem(hr->hj, \"phases\"), \"p\", v); }" &&
	test_expect_code 1 "$CHECK" src obj >out &&
	test_grep "^src/remote/phase.c:1: changes the run record outside store/ (use store/runwrite.h): .*cJSON_AddItemToObject(cJSON_GetObjectItem(hr->hj" out &&
	! test_grep "reader.c" out &&
	mkunit run/end "typedef struct cJSON cJSON; struct rs { cJSON *root; }; void cJSON_ReplaceItemInObject(cJSON *o, const char *k, cJSON *v); void json_add_num(cJSON *o, const char *k, double v); void e(struct rs *r, cJSON *v) { cJSON_ReplaceItemInObject(r->root, \"status\", v); json_add_num(r->root, \"exit_code\", 1); }" &&
	test_expect_code 1 "$CHECK" src obj >out &&
	test_grep "^src/run/end.c:1: changes the run record outside store/.*cJSON_ReplaceItemInObject(r->root" out
'

test_done
