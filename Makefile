# Makefile -- builds the gpuorch controller, its sanitizer build and the tests.
#
#   make            build/gpuorch and build/gpuorch-agent
#   make asan       build/asan/gpuorch and build/asan/gpuorch-agent (AddressSanitizer + UBSan)
#   make unit       the C unit tests (tests/unit/test_*.c)
#   make test       everything: tests/run-tests.sh (what .ci/run runs)
#   make kernels    compile every kernel of every experiment with nvcc (ptxas report)
#   make install    the binary, gpuorch(1) and the bash and zsh completions under
#                   $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); make uninstall removes them
#   make readme     rewrite README.md's command list from the commands' declarations

CC      ?= cc
PKGS    := libssh2 libcjson libarchive libcrypto libxml-2.0 zlib libcmark-gfm yajl
# libcurl: its header only; transport/http.c loads the library at the first HTTP request
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) libcurl 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# the release; the version itself comes from git at build time
# (scripts/version.sh: "0.1.0-g<commit>", a tag's "1.2.0", "0.1.0-unknown"
# without .git), into build/gen/core/version.c only
VERSION := 0.1.0

WARN    := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wformat=2 -Wvla
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
	-DGPUORCH_RELEASE='"$(VERSION)"' -Iorchestrator $(WARN) $(PKG_CFLAGS) $(CFLAGS)
LIBS    := $(PKG_LIBS) -lpthread -lm -ldl
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

# orchestrator/ is one folder per layer (docs/design.md); objects mirror the folders.
# orchestrator/host/ is a program of its own (gpuorch-agent, below), not gpuorch's.
SRC     := $(sort $(filter-out orchestrator/host/%,$(wildcard orchestrator/*/*.c)))
HDR     := $(filter-out orchestrator/host/%,$(wildcard orchestrator/*/*.h))
LIBSRC  := $(filter-out orchestrator/cmd/main.c,$(SRC))
OBJ     := $(SRC:orchestrator/%.c=build/obj/%.o)
LIBOBJ  := $(LIBSRC:orchestrator/%.c=build/obj/%.o)
ASANOBJ := $(SRC:orchestrator/%.c=build/asan/obj/%.o)
ASANLIB := $(LIBSRC:orchestrator/%.c=build/asan/obj/%.o)
UNITSRC := $(sort $(wildcard tests/unit/test_*.c))
UNITBIN := $(UNITSRC:tests/unit/%.c=build/tests/%)
UNITASAN:= $(UNITSRC:tests/unit/%.c=build/asan/tests/%)

.DEFAULT_GOAL := all

# Text that gpuorch ships to hosts is embedded in the binary as generated C
# arrays (scripts/embed.sh), one object each in the layer that uses it:
#   $(call EMBED,C-NAME,SOURCE,HEADER under orchestrator/,OBJECT STEM[,--sh])
# --sh: a shell script sent inside a command line, embedded without its
# comment and blank lines (scripts/embed.sh)
define EMBED
OBJ     += build/obj/$(4).o
LIBOBJ  += build/obj/$(4).o
ASANOBJ += build/asan/obj/$(4).o
ASANLIB += build/asan/obj/$(4).o
build/gen/$(4).c: $(2) scripts/embed.sh
	@mkdir -p $$(@D)
	scripts/embed.sh $(5) $(1) $(2) $(3) >$$@.tmp
	mv -f $$@.tmp $$@
build/obj/$(4).o: build/gen/$(4).c orchestrator/$(3)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) -c -o $$@ $$<
build/asan/obj/$(4).o: build/gen/$(4).c orchestrator/$(3)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) $$(SAN) -c -o $$@ $$<
endef
# the host runner (docs/runner.md)
$(eval $(call EMBED,gpuorch_runner_sh,orchestrator/remote/runner.sh,remote/runner-script.h,remote/runner-sh))
# the batch script of a Slurm job (run/slurmrun.c, docs/slurm.md)
$(eval $(call EMBED,gpuorch_slurm_job_sh,orchestrator/run/slurm-job.sh,run/slurm-job-script.h,run/slurm-job-sh,--sh))
# the start command of a host's run (remote/remote.c)
$(eval $(call EMBED,gpuorch_start_sh,orchestrator/remote/start.sh,remote/start-script.h,remote/start-sh,--sh))
# the host probe: the host's signature (also the start command's check of a
# kept probe), then the probe (remote/probe.c)
$(eval $(call EMBED,gpuorch_probe_sig_sh,orchestrator/remote/probe-sig.sh,remote/probe-script.h,remote/probe-sig-sh,--sh))
$(eval $(call EMBED,gpuorch_probe_sh,orchestrator/remote/probe.sh,remote/probe-script.h,remote/probe-sh,--sh))
# hosts clean and hosts disconnect on a host (remote/hostclean.c)
$(eval $(call EMBED,gpuorch_clean_sh,orchestrator/remote/clean.sh,remote/clean-script.h,remote/clean-sh,--sh))
# a cloud instance's guard (cloud/guard.c, docs/cloud.md)
$(eval $(call EMBED,gpuorch_guard_sh,orchestrator/cloud/guard.sh,cloud/guard-script.h,cloud/guard-sh,--sh))
# the static site's one script and stylesheet (run/site.c, docs/site.md)
$(eval $(call EMBED,gpuorch_site_js,orchestrator/run/site.js,run/site-assets.h,run/site-js))
$(eval $(call EMBED,gpuorch_site_css,orchestrator/run/site.css,run/site-assets.h,run/site-css))
# the host's execd, built on the host by the start command (docs/runner.md)
$(eval $(call EMBED,gpuorch_execd_c,orchestrator/remote/host/gpuorch-execd.c,remote/execd-source.h,remote/execd-src))
# the host agent's sources, one bundle, built on the host (docs/runner.md)
build/gen/agent-bundle.txt: $(sort $(wildcard orchestrator/host/*.[ch])) scripts/agent-bundle.sh
	@mkdir -p $(@D)
	scripts/agent-bundle.sh $(sort $(wildcard orchestrator/host/*.[ch])) >$@.tmp
	mv -f $@.tmp $@
$(eval $(call EMBED,gpuorch_agent_src,build/gen/agent-bundle.txt,remote/agent-source.h,remote/agent-src))
# gpuorch's version (core/version.h): written at every make, replaced only
# when it changed, so a new commit relinks and recompiles one file
OBJ     += build/obj/core/version-gen.o
LIBOBJ  += build/obj/core/version-gen.o
ASANOBJ += build/asan/obj/core/version-gen.o
ASANLIB += build/asan/obj/core/version-gen.o
build/gen/core/version.c: FORCE
	@mkdir -p $(@D)
	@v=$$(scripts/version.sh $(VERSION)) && \
	printf '/* generated by the Makefile (scripts/version.sh): do not edit */\n#include "core/version.h"\nconst char gpuorch_version[] = "%s";\n' "$$v" >$@.tmp && \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
build/obj/core/version-gen.o: build/gen/core/version.c orchestrator/core/version.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
build/asan/obj/core/version-gen.o: build/gen/core/version.c orchestrator/core/version.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN) -c -o $@ $<
.PHONY: FORCE
FORCE:
# the CUPTI injection library that kernel_timing steps build on the host (docs/byo.md)
$(eval $(call EMBED,gpuorch_ktrace_c,kernels/ktrace/gpuorch_ktrace.c,spec/ktrace-lib.h,spec/ktrace-lib))

# the fixed parts of the bash and zsh completions (cmd/cmd-doc.c prints their data)
$(eval $(call EMBED,gpuorch_completion_bash,orchestrator/cmd/completion-bash.sh,cmd/completion-scripts.h,cmd/completion-bash))
$(eval $(call EMBED,gpuorch_completion_zsh,orchestrator/cmd/completion.zsh,cmd/completion-scripts.h,cmd/completion-zsh))

# which renderer wrote a report.md (report/report-id.h): a hash of the
# sources it is rendered by, so it changes whenever they do
REPORT_ID_SRC := $(sort $(wildcard orchestrator/report/*.[ch] orchestrator/store/*.[ch] orchestrator/core/*.[ch]))
OBJ     += build/obj/report/report-id.o
LIBOBJ  += build/obj/report/report-id.o
ASANOBJ += build/asan/obj/report/report-id.o
ASANLIB += build/asan/obj/report/report-id.o
build/gen/report/report-id.c: $(REPORT_ID_SRC) scripts/report-id.sh
	@mkdir -p $(@D)
	scripts/report-id.sh $(REPORT_ID_SRC) >$@.tmp
	mv -f $@.tmp $@
build/obj/report/report-id.o: build/gen/report/report-id.c orchestrator/report/report-id.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
build/asan/obj/report/report-id.o: build/gen/report/report-id.c orchestrator/report/report-id.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN) -c -o $@ $<

.PHONY: all asan unit test kernels clean install uninstall readme
# gpuorch(1) and the completions, made by the binary from the commands'
# declarations (orchestrator/cmd/cmd-doc.c), so they cannot drift from its usage
DOCS := build/doc/gpuorch.1 build/doc/gpuorch.bash build/doc/_gpuorch
all: build/gpuorch build/gpuorch-agent $(DOCS)
build/doc/gpuorch.1: build/gpuorch
	@mkdir -p $(@D)
	build/gpuorch __doc man >$@.tmp
	mv -f $@.tmp $@
build/doc/gpuorch.bash: build/gpuorch
	@mkdir -p $(@D)
	build/gpuorch __doc bash >$@.tmp
	mv -f $@.tmp $@
build/doc/_gpuorch: build/gpuorch
	@mkdir -p $(@D)
	build/gpuorch __doc zsh >$@.tmp
	mv -f $@.tmp $@

PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
install: build/gpuorch $(DOCS)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR)
	install -m 755 build/gpuorch $(DESTDIR)$(BINDIR)/gpuorch
	install -m 644 build/doc/gpuorch.1 $(DESTDIR)$(MANDIR)/man1/gpuorch.1
	install -m 644 build/doc/gpuorch.bash $(DESTDIR)$(BASHCOMPDIR)/gpuorch
	install -m 644 build/doc/_gpuorch $(DESTDIR)$(ZSHCOMPDIR)/_gpuorch
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gpuorch $(DESTDIR)$(MANDIR)/man1/gpuorch.1 \
		$(DESTDIR)$(BASHCOMPDIR)/gpuorch $(DESTDIR)$(ZSHCOMPDIR)/_gpuorch

readme: build/gpuorch
	scripts/readme-commands.sh build/gpuorch README.md

# gpuorch-agent: the host runner as a C program (orchestrator/host/, docs/runner.md).
# Only libc: a host builds it with `cc -O2 -o gpuorch-agent orchestrator/host/*.c`;
# here with the project's warnings, and under ASan/UBSan for the tests (t1008).
AGENTSRC := $(sort $(wildcard orchestrator/host/*.c))
AGENTHDR := $(wildcard orchestrator/host/*.h)
AGENT_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS)
build/gpuorch-agent: $(AGENTSRC) $(AGENTHDR)
	@mkdir -p $(@D)
	$(CC) $(AGENT_CFLAGS) -o $@ $(AGENTSRC)
build/asan/gpuorch-agent: $(AGENTSRC) $(AGENTHDR)
	@mkdir -p $(@D)
	$(CC) $(AGENT_CFLAGS) $(SAN) -o $@ $(AGENTSRC)

build/gpuorch: $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $(OBJ) $(LIBS)

build/obj/%.o: orchestrator/%.c $(HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

asan: build/asan/gpuorch build/asan/gpuorch-agent $(UNITASAN)
build/asan/gpuorch: $(ASANOBJ)
	$(CC) $(ALL_CFLAGS) $(SAN) -o $@ $(ASANOBJ) $(LIBS)
build/asan/obj/%.o: orchestrator/%.c $(HDR)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN) -c -o $@ $<

unit: $(UNITBIN)
build/tests/%: tests/unit/%.c $(LIBOBJ) $(HDR) | build/tests
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBOBJ) $(LIBS)
build/asan/tests/%: tests/unit/%.c $(ASANLIB) $(HDR) | build/asan/tests
	$(CC) $(ALL_CFLAGS) $(SAN) -o $@ $< $(ASANLIB) $(LIBS)
# unit tests of the host agent (test_agent_*.c): linked with its sources, not gpuorch's
AGENTLIB := $(filter-out orchestrator/host/agent-main.c,$(AGENTSRC))
build/tests/test_agent_%: tests/unit/test_agent_%.c $(AGENTLIB) $(AGENTHDR) | build/tests
	$(CC) $(AGENT_CFLAGS) -Iorchestrator/host -o $@ $< $(AGENTLIB)
build/asan/tests/test_agent_%: tests/unit/test_agent_%.c $(AGENTLIB) $(AGENTHDR) | build/asan/tests
	$(CC) $(AGENT_CFLAGS) $(SAN) -Iorchestrator/host -o $@ $< $(AGENTLIB)

build/tests build/asan/tests:
	mkdir -p $@

test:
	tests/run-tests.sh

kernels:
	kernels/build-all.sh build/kernels

clean:
	rm -rf build
