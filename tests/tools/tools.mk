# tools.mk -- test helper programs, built with the Makefile's own flags:
#   make -f Makefile -f tests/tools/tools.mk tools asan-tools
# (tests/run-tests.sh does this). Each tests/tools/NAME.c is linked with
# every orchestrator object except main.o into build/tests/NAME and
# build/asan/tests/NAME.

TOOLSRC  := $(sort $(wildcard tests/tools/*.c))
TOOLBIN  := $(TOOLSRC:tests/tools/%.c=build/tests/%)
TOOLASAN := $(TOOLSRC:tests/tools/%.c=build/asan/tests/%)

.PHONY: tools asan-tools
tools: $(TOOLBIN)
asan-tools: $(TOOLASAN)

$(TOOLBIN): build/tests/%: tests/tools/%.c $(LIBOBJ) $(HDR) | build/tests
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBOBJ) $(LIBS)
$(TOOLASAN): build/asan/tests/%: tests/tools/%.c $(ASANLIB) $(HDR) | build/asan/tests
	$(CC) $(ALL_CFLAGS) $(SAN) -o $@ $< $(ASANLIB) $(LIBS)
