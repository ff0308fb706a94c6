/* probe.c -- what a host has: GPU, driver, clocks, CUDA tools and their paths.
 *
 * DESIGN
 * One constant POSIX sh script (probe_script) runs on the host with its
 * parameters as quoted assignments in front of it, and prints KEY=VALUE
 * lines (values on one line). All interpretation happens here, in C, where
 * it can be unit tested: probe_parse_output() turns the lines into a
 * struct host_info. Tools are looked up on PATH, then CUDA_HOME/bin,
 * /usr/local/cuda/bin, the newest /usr/local/cuda-* /bin and the newest
 * /opt/nvidia/nsight-compute/<version>: a non-login SSH session usually has a
 * PATH without CUDA. */
#include "remote/probe.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/jsonutil.h"
#include "core/parallel.h"
#include "core/timeutil.h"
#include "core/banned.h"

#define PROBE_TIMEOUT_MS 90000

/* The host's signature: silent; sets $sig from the boot id, the tool paths
 * and each tool file's size, mtime and inode (and the parameters). Shared
 * with the run's start command (probe_sig_script), which checks that a
 * probe the controller kept still holds. */
static const char probe_sig_part[] =
	"smi=$(command -v nvidia-smi 2>/dev/null)\n"
	"case \"$smi\" in /*) ;; *) smi= ;; esac\n"
	"for c in /usr/bin/nvidia-smi /usr/local/nvidia/bin/nvidia-smi; do\n"
	"  if [ -z \"$smi\" ] && [ -x \"$c\" ]; then smi=$c; fi\n"
	"done\n"
	/* find_tool NAME: sets $_ft (no subshell, so the versioned directories
	 * are listed once, and only when a tool is not found before them) */
	"_fdirs=- \n"
	"find_tool() {\n"
	"  _ft=$(command -v \"$1\" 2>/dev/null)\n"
	"  case \"$_ft\" in /*) return 0 ;; esac\n"
	"  _ft=\n"
	"  if [ -n \"$cuda_home\" ] && [ -x \"$cuda_home/bin/$1\" ]; then _ft=$cuda_home/bin/$1; return 0; fi\n"
	"  if [ -x \"/usr/local/cuda/bin/$1\" ]; then _ft=/usr/local/cuda/bin/$1; return 0; fi\n"
	"  [ \"$_fdirs\" != - ] || _fdirs=$(ls -d /usr/local/cuda-*/bin /opt/nvidia/nsight-compute/*/ 2>/dev/null | sort -V -r)\n"
	"  for _fd in $_fdirs; do\n"
	"    _fd=${_fd%/}\n"
	"    if [ -x \"$_fd/$1\" ]; then _ft=$_fd/$1; return 0; fi\n"
	"  done\n"
	"  return 1\n"
	"}\n"
	"find_tool nvcc; nvcc_p=$_ft; find_tool ncu; ncu_p=$_ft; find_tool compute-sanitizer; san_p=$_ft\n"
	"if [ -n \"$python\" ]; then py_p=$python; else py_p=$(command -v python3 2>/dev/null); fi\n"
	"case \"$py_p\" in /*) ;; *) py_p= ;; esac\n"
	/* no fork where a builtin does (a re-run's start command runs this) */
	"boot=; read -r boot 2>/dev/null </proc/sys/kernel/random/boot_id\n"
	"set --; for f in \"$smi\" \"$nvcc_p\" \"$ncu_p\" \"$san_p\" \"$py_p\"; do [ -z \"$f\" ] || set -- \"$@\" \"$f\"; done\n"
	"sig=\"probe-v1|$boot|$gpu|$cuda_home|$python|$([ $# -eq 0 ] || stat -L --printf '%n %s %Y %i|' \"$@\" 2>/dev/null)\"\n"
	"set --\n"
	"[ -n \"$boot\" ] || sig=\n";

/* The probe itself, after probe_sig_part: prints KEY=VALUE lines. */
static const char probe_script[] =
	/* kv KEY VALUE: one line; a value's newlines and CRs become spaces
	 * (a fork only for a value with a byte that is not printable: a fresh
	 * run waits for these lines) */
	"kv() {\n"
	"  case $2 in\n"
	"  *[![:print:]]*) printf '%s=%s\\n' \"$1\" \"$(printf '%s' \"$2\" | tr '\\n\\r' '  ')\" ;;\n"
	"  *) printf '%s=%s\\n' \"$1\" \"$2\" ;;\n"
	"  esac\n"
	"}\n"
	"to() { if command -v timeout >/dev/null 2>&1; then timeout \"$@\"; else shift; \"$@\"; fi; }\n"
	/* hostname and `uname -sr` from /proc where it can be read (no fork) */
	"h= k1= k2=\n"
	"{ read -r h </proc/sys/kernel/hostname; read -r k1 </proc/sys/kernel/ostype; read -r k2 </proc/sys/kernel/osrelease; } 2>/dev/null\n"
	"[ -n \"$h\" ] || h=$(hostname 2>/dev/null || uname -n)\n"
	"if [ -n \"$k1\" ] && [ -n \"$k2\" ]; then k=\"$k1 $k2\"; else k=$(uname -sr); fi\n"
	"kv hostname \"$h\"\n"
	"kv kernel \"$k\"\n"
	"kv home \"$HOME\"\n"
	/* The slow part (nvidia-smi, tool versions, python -c 'import torch')
	 * is cached on the host while it is unchanged: same boot, same tool
	 * paths, each tool file the same size and mtime, same parameters. Its
	 * parts run at once, each into a file of its own beside the cache
	 * ($par.N), and are printed in order: a fresh host's probe takes the
	 * slowest tool's time, not the sum (serial when there is no cache
	 * directory). */
	"probe_gpu() {\n"
	"  if [ -z \"$smi\" ]; then\n"
	"    kv has_gpu 0\n"
	"    kv gpu_reason 'nvidia-smi: not found (looked on PATH, /usr/bin, /usr/local/nvidia/bin)'\n"
	"    return 0\n"
	"  fi\n"
	"  out=$(to 30 \"$smi\" --query-gpu=name,uuid,compute_cap,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total,clocks.max.memory --format=csv,noheader,nounits -i \"$gpu\" 2>&1)\n"
	"  rc=$?\n"
	"  if [ $rc -ne 0 ] || [ -z \"$out\" ]; then\n"
	"    kv has_gpu 0\n"
	"    kv gpu_reason \"$smi failed (exit $rc): $(printf '%s' \"$out\" | head -n 3)\"\n"
	"  else\n"
	"    kv has_gpu 1\n"
	"    kv gpu \"$(printf '%s' \"$out\" | head -n 1)\"\n"
	"  fi\n"
	"}\n"
	"probe_nvcc() { kv nvcc_path \"$nvcc_p\"; kv nvcc_version \"$(to 30 \"$nvcc_p\" --version 2>&1 | grep -E 'release|^Build' | tr '\\n' ' ')\"; }\n"
	"probe_ncu() { kv ncu_version \"$(to 30 \"$ncu_p\" --version 2>&1 | grep -E '^Version' | head -n 1)\"; }\n"
	"probe_san() { kv sanitizer_version \"$(to 30 \"$san_p\" --version 2>&1 | grep -E '^Version' | head -n 1)\"; }\n"
	"probe_py() {\n"
	"  kv python_version \"$(to 20 \"$py_p\" --version 2>&1 | head -n 1)\"\n"
	"  tv=$(to 30 \"$py_p\" -c 'import torch; print(torch.__version__)' 2>/dev/null | tail -n 1) && [ -n \"$tv\" ] && kv torch \"$tv\"\n"
	"  return 0\n"
	"}\n"
	/* proc_gpu: 0 when the NVIDIA driver's /proc files name GPU $gpu (the
	 * $gpu-th in PCI bus order, as nvidia-smi counts) and the plan can name
	 * its arch without nvidia-smi ($gpu_any, or the model holds one of
	 * $gpu_names); sets pm, pu, pd (model, UUID, the driver's version line).
	 * No fork. GPUORCH_NVPROC: another directory for those files (tests). */
	"proc_gpu() {\n"
	"  pm= pu= pd= f=\n"
	"  [ -n \"$smi\" ] || return 1\n"
	"  d=${GPUORCH_NVPROC:-/proc/driver/nvidia}\n"
	"  i=0\n"
	"  _lc=${LC_COLLATE-}; LC_COLLATE=C\n"
	"  for g in \"$d\"/gpus/*/information; do\n"
	"    if [ \"$i\" = \"$gpu\" ]; then f=$g; break; fi\n"
	"    i=$((i + 1))\n"
	"  done\n"
	"  LC_COLLATE=$_lc\n"
	"  [ -n \"$f\" ] && [ -r \"$f\" ] || return 1\n"
	"  while IFS= read -r l; do\n"
	"    case $l in Model:*) pm=${l#Model:} ;; 'GPU UUID:'*) pu=${l#GPU UUID:} ;; esac\n"
	"  done < \"$f\"\n"
	"  { read -r pd < \"$d/version\"; } 2>/dev/null\n"
	"  pm=${pm#\"${pm%%[! \t]*}\"} pu=${pu#\"${pu%%[! \t]*}\"}\n"   /* leading blanks */
	"  [ -n \"$pm\" ] || return 1\n"
	"  [ \"$gpu_any\" != 1 ] || return 0\n"
	"  set -f; _ifs=$IFS; IFS='\n'\n"
	"  for n in $gpu_names; do\n"
	"    case $pm in *\"$n\"*) IFS=$_ifs; set +f; return 0 ;; esac\n"
	"  done\n"
	/* the model's words (split at blanks, '-', '_'), one of them a model
	 * gpuorch knows the compute capability of (probe_model_cc) */
	"  IFS=' \t-_'; set -- $pm; IFS=' '; _pw=\" $* \"; IFS=$_ifs; set +f\n"
	"  for n in $gpu_models; do\n"
	"    case $_pw in *\" $n \"*) return 0 ;; esac\n"
	"  done\n"
	"  return 1\n"
	"}\n"
	/* the paths of the tools found besides nvcc (known without running them) */
	"tool_paths() {\n"
	"  [ -z \"$ncu_p\" ] || kv ncu_path \"$ncu_p\"\n"
	"  [ -z \"$san_p\" ] || kv sanitizer_path \"$san_p\"\n"
	"  [ -z \"$py_p\" ] || kv python_path \"$py_p\"\n"
	"}\n"
	/* parts NAME...: those of the named parts whose tool was found */
	"parts() {\n"
	"  for p in \"$@\"; do\n"
	"    case $p in nvcc) [ -n \"$nvcc_p\" ] ;; ncu) [ -n \"$ncu_p\" ] ;; san) [ -n \"$san_p\" ] ;; py) [ -n \"$py_p\" ] ;; esac &&\n"
	"      printf '%s ' \"$p\"\n"
	"  done\n"
	"}\n"
	/* run_parts NAME...: their lines, in order; at once, each into its
	 * $par.NAME, when there is a $par and more than one part */
	"run_parts() {\n"
	"  if [ -z \"$par\" ] || [ $# -le 1 ]; then\n"
	"    for p in \"$@\"; do probe_$p; done\n"
	"    return 0\n"
	"  fi\n"
	"  for p in \"$@\"; do probe_$p > \"$par.$p\" 2>/dev/null 8>&- & done\n"
	"  wait\n"
	"  for p in \"$@\"; do set -- \"$@\" \"$par.$p\"; shift; done\n"   /* the parts' files, in order */
	"  [ $# -eq 0 ] || { cat \"$@\" 2>/dev/null; rm -f \"$@\"; }\n"
	"  return 0\n"
	"}\n"
	/* Probing for a run (later=1): what the plan needs (the GPU, nvcc)
	 * is answered first; the tools only recorded (ncu, compute-sanitizer,
	 * python, torch: up to seconds) go on in the background, overlapping
	 * the run's builds. That part holds $par.lock (flock) until its lines
	 * are in $par.later; the host runner waits for it before the run's
	 * first step and puts them in its journal (docs/runner.md,
	 * probe_later); the host's cache is written whole by it. */
	"later_part() {\n"
	"  run_parts \"$@\" > \"$par.l\"\n"
	"  i=0\n"
	"  while [ ! -f \"$par.now\" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done\n"
	"  if [ -f \"$par.now\" ]; then\n"
	"    { printf '%s\\n' \"$sig\"; cat \"$par.now\" \"$par.l\"; } > \"$par.c\" && mv -f \"$par.c\" \"$cache\"\n"
	"  fi\n"
	"  rm -f \"$par.now\"\n"
	"  mv -f \"$par.l\" \"$par.later\"\n"
	/* what runs that never reached a runner left (interrupted mid-probe) */
	"  find \"${cache%/*}\" -maxdepth 1 \\( -name 'probe-*.later' -o -name 'probe-*.lock' \\) -mmin +1440 \\\n"
	"    -exec rm -f {} + 2>/dev/null\n"
	"}\n"
	"kv sig \"$sig\"\n"
	"cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gpuorch/probe-$gpu\n"
	"if [ -n \"$boot\" ] && [ -f \"$cache\" ] && [ \"$(head -n 1 \"$cache\")\" = \"$sig\" ]; then\n"
	"  tail -n +2 \"$cache\"\n"
	"  kv probe_cached 1\n"
	"else\n"
	"  par=\n"
	"  if [ -n \"$boot\" ] && mkdir -p \"${cache%/*}\" 2>/dev/null; then par=$cache.$$; fi\n"
	"  if [ -n \"$par\" ] && [ \"$later\" = 1 ] && command -v flock >/dev/null 2>&1 &&\n"
	"     { : > \"$par.lock\"; } 2>/dev/null && exec 8>\"$par.lock\" && flock 8; then\n"
	"    if proc_gpu; then now='nvcc' rest='gpu ncu san py'; else now='gpu nvcc' rest='ncu san py' pm=; fi\n"
	/* at the lowest priority (its own pid from /proc/self: no process to
	 * learn it; renice before its first tool, which inherits it): on a host
	 * of few CPUs its tools (ncu, python -c 'import torch') must not slow
	 * the run's start and builds, which come before its lines are needed */
	"    ( trap '' HUP\n"
	"      { read -r me _ </proc/self/stat && renice -n 19 -p \"$me\"; } >/dev/null 2>&1\n"
	"      later_part $(parts $rest) ) </dev/null >/dev/null 2>&1 &\n"
	"    exec 8>&-\n"
	/* no nvidia-smi: its two lines need no process of their own */
	"    [ -n \"$smi\" ] || now=${now#gpu }\n"
	"    out=$([ -n \"$smi\" ] || probe_gpu; run_parts $(parts $now); tool_paths\n"
	"      [ -z \"$pm\" ] || { kv gpu_proc_name \"$pm\"; kv gpu_proc_uuid \"$pu\"; kv gpu_proc_driver \"$pd\"; })\n"
	"    printf '%s\\n' \"$out\"\n"
	"    printf '%s\\n' \"$out\" > \"$par.n\" && mv -f \"$par.n\" \"$par.now\"\n"
	"    kv later \"$par\"\n"
	"  else\n"
	"    out=$(run_parts $(parts gpu nvcc ncu san py); tool_paths)\n"
	"    printf '%s\\n' \"$out\"\n"
	"    if [ -n \"$par\" ]; then\n"
	"      printf '%s\\n%s\\n' \"$sig\" \"$out\" > \"$cache.$$\" && mv -f \"$cache.$$\" \"$cache\"\n"
	"    fi\n"
	"  fi\n"
	"  kv probe_cached 0\n"
	"fi\n"
	"kv cores \"$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null)\"\n"
	"w=$workdir\n"
	"while [ -n \"$w\" ] && [ ! -d \"$w\" ]; do\n"
	"  case \"$w\" in */*) w=${w%/*} ;; *) w=. ;; esac\n"
	"done\n"
	"[ -n \"$w\" ] || w=/\n"
	"kv disk_free_kib \"$(df -Pk \"$w\" 2>/dev/null | awk 'NR == 2 {print $4}')\"\n"
	/* execds serving the work directory (their socket's lock held): `hosts
	 * disconnect` and `hosts clean` stop them */
	"n=0\n"
	"for s in \"$workdir\"/execd/*.sock; do\n"
	"  [ -S \"$s\" ] && [ -f \"$s.lock\" ] && ! flock -n \"$s.lock\" true 2>/dev/null && n=$((n + 1))\n"
	"done\n"
	"kv execds_running $n\n"
	"for t in flock timeout setsid; do\n"
	"  if command -v $t >/dev/null 2>&1; then kv has_$t 1; else kv has_$t 0; fi\n"
	"done\n"
	"kv done 1\n";

/* ------------------------------------------------------------------ */
/* parsing                                                             */

static char *dup_or_null(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

static void trim_in_place(char *s)
{
	size_t n = strlen(s), i = 0;
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (s[i] && isspace((unsigned char)s[i]))
		i++;
	if (i)
		memmove(s, s + i, n - i + 1);
}

/* "Cuda compilation tools, release 13.0, V13.0.88 Build cuda_13.0.r13.0/..."
 * -> "13.0.88"; falls back to the release number "13.0". */
static char *parse_nvcc_version(const char *s)
{
	const char *p = s;
	size_t n;

	while ((p = strstr(p, "V")) != NULL) {
		if ((p == s || p[-1] == ' ' || p[-1] == ',') && isdigit((unsigned char)p[1])) {
			p++;
			n = strspn(p, "0123456789.");
			while (n && p[n - 1] == '.')
				n--;
			return xstrfmt("%.*s", (int)n, p);
		}
		p++;
	}
	p = strstr(s, "release ");
	if (p) {
		p += 8;
		n = strspn(p, "0123456789.");
		while (n && p[n - 1] == '.')
			n--;
		if (n)
			return xstrfmt("%.*s", (int)n, p);
	}
	return dup_or_null(s);
}

/* "Version 2025.3.0.0 (build 36398880) (public-release)" -> "2025.3.0.0";
 * "Python 3.11.2" -> "3.11.2". */
static char *parse_word_version(const char *s, const char *word)
{
	size_t wl = strlen(word), n;
	const char *p = strstr(s, word);

	if (!p)
		return dup_or_null(s);
	p += wl;
	while (*p == ' ')
		p++;
	n = strcspn(p, " \t");
	return n ? xstrfmt("%.*s", (int)n, p) : NULL;
}

static int to_int(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	return end == s ? 0 : (int)v;
}

static void set_str(char **dst, const char *val)
{
	free(*dst);
	*dst = dup_or_null(val);
}

/* "name, uuid, 9.0, 580.1, 1980, 1980, 2619, 81559" */
static void parse_gpu_line(const char *line, struct host_info *hi)
{
	char *copy = xstrdup(line);
	char *fields[9] = { 0 };
	char *p = copy;
	int n = 0;

	while (n < 9) {
		char *comma = strchr(p, ',');
		fields[n++] = p;
		if (!comma)
			break;
		*comma = '\0';
		p = comma + 1;
	}
	for (int i = 0; i < n; i++)
		trim_in_place(fields[i]);
	if (n > 0)
		set_str(&hi->gpu_name, fields[0]);
	if (n > 1)
		set_str(&hi->gpu_uuid, fields[1]);
	if (n > 2)
		set_str(&hi->compute_cap, fields[2]);
	if (n > 3)
		set_str(&hi->driver, fields[3]);
	if (n > 4)
		hi->sm_clock_mhz = to_int(fields[4]);
	if (n > 5)
		hi->max_sm_clock_mhz = to_int(fields[5]);
	if (n > 6)
		hi->mem_clock_mhz = to_int(fields[6]);
	if (n > 7)
		hi->gpu_mem_mib = strtoll(fields[7], NULL, 10);
	if (n > 8)   /* the highest memory clock: the physical peak's (store/peaks.h) */
		hi->max_mem_clock_mhz = to_int(fields[8]);
	free(copy);
}


/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Release Build
 * (...)" (or "... Open Kernel Module for x86_64  580.159.04 ...") -> the
 * first word after "Module" made of digits and dots; NULL when none. */
static char *parse_proc_driver(const char *line)
{
	const char *p = line ? strstr(line, "Module") : NULL;
	size_t n;

	while (p && *p) {
		p += strcspn(p, " \t");
		p += strspn(p, " \t");
		n = strcspn(p, " \t");
		if (n && isdigit((unsigned char)p[0]) && strspn(p, "0123456789.") == n)
			return xstrfmt("%.*s", (int)n, p);
	}
	return NULL;
}

/* Parse the script's KEY=VALUE output; returns 0 when it is complete. */
static int parse_output(char *text, struct host_info *hi)
{
	char *line = text;
	int done = 0;

	while (line && *line) {
		char *nl = strchr(line, '\n');
		char *eq;
		if (nl)
			*nl = '\0';
		eq = strchr(line, '=');
		if (eq) {
			const char *k = line, *v = eq + 1;
			*eq = '\0';
			if (!strcmp(k, "hostname"))
				set_str(&hi->hostname, v);
			else if (!strcmp(k, "kernel"))
				set_str(&hi->kernel, v);
			else if (!strcmp(k, "home"))
				set_str(&hi->home, v);
			else if (!strcmp(k, "has_gpu")) {
				hi->has_gpu = !strcmp(v, "1");
				hi->smi_answered = 1;
			} else if (!strcmp(k, "gpu_proc_name")) {
				set_str(&hi->proc_gpu_name, v);
				if (hi->proc_gpu_name)
					trim_in_place(hi->proc_gpu_name);
			} else if (!strcmp(k, "gpu_proc_uuid")) {
				set_str(&hi->proc_gpu_uuid, v);
				if (hi->proc_gpu_uuid)
					trim_in_place(hi->proc_gpu_uuid);
			}
			else if (!strcmp(k, "gpu_proc_driver"))
				set_str(&hi->proc_driver, v);
			else if (!strcmp(k, "gpu_reason"))
				set_str(&hi->gpu_reason, v);
			else if (!strcmp(k, "gpu"))
				parse_gpu_line(v, hi);
			else if (!strcmp(k, "nvcc_path"))
				set_str(&hi->nvcc.path, v);
			else if (!strcmp(k, "nvcc_version")) {
				free(hi->nvcc.version);
				hi->nvcc.version = parse_nvcc_version(v);
			} else if (!strcmp(k, "ncu_path"))
				set_str(&hi->ncu.path, v);
			else if (!strcmp(k, "ncu_version")) {
				free(hi->ncu.version);
				hi->ncu.version = parse_word_version(v, "Version");
			} else if (!strcmp(k, "sanitizer_path"))
				set_str(&hi->sanitizer.path, v);
			else if (!strcmp(k, "sanitizer_version")) {
				free(hi->sanitizer.version);
				hi->sanitizer.version = parse_word_version(v, "Version");
			} else if (!strcmp(k, "python_path"))
				set_str(&hi->python.path, v);
			else if (!strcmp(k, "python_version")) {
				free(hi->python.version);
				hi->python.version = parse_word_version(v, "Python");
			} else if (!strcmp(k, "torch"))
				set_str(&hi->torch_version, v);
			else if (!strcmp(k, "disk_free_kib"))
				hi->disk_free_kib = *v ? strtoll(v, NULL, 10) : -1;
			else if (!strcmp(k, "execds_running"))
				hi->execds_running = *v ? atoi(v) : -1;
			else if (!strcmp(k, "has_flock"))
				hi->has_flock = !strcmp(v, "1");
			else if (!strcmp(k, "has_timeout"))
				hi->has_timeout = !strcmp(v, "1");
			else if (!strcmp(k, "has_setsid"))
				hi->has_setsid = !strcmp(v, "1");
			else if (!strcmp(k, "cores"))
				hi->ncores = to_int(v);
			else if (!strcmp(k, "sig"))
				set_str(&hi->sig, v);
			else if (!strcmp(k, "probe_cached"))
				hi->cached = !strcmp(v, "1");
			else if (!strcmp(k, "later"))
				set_str(&hi->later, v);
			else if (!strcmp(k, "done"))
				done = 1;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!hi->smi_answered && hi->proc_gpu_name) {
		/* nvidia-smi comes later: the GPU as /proc names it until then */
		hi->has_gpu = 1;
		set_str(&hi->gpu_name, hi->proc_gpu_name);
		set_str(&hi->gpu_uuid, hi->proc_gpu_uuid);
		free(hi->driver);
		hi->driver = parse_proc_driver(hi->proc_driver);
	}
	if (hi->has_gpu && !hi->gpu_name) {
		hi->has_gpu = 0;
		set_str(&hi->gpu_reason, "nvidia-smi printed no GPU");
	}
	return done && hi->hostname ? 0 : -1;
}

/* The data-centre and cloud GPUs whose model name alone gives the compute
 * capability: a word of the name as the driver writes it (split at blanks,
 * '-' and '_', matched whole and case-sensitively, as the probe's shell
 * does), and the capability as nvidia-smi prints it. A model whose name is
 * shared by GPUs of different capabilities (the RTX 6000 of Turing, Ampere
 * and Ada) is not here: its runs wait for nvidia-smi. */
static const struct known_model {
	const char *word, *cc;
} known_models[] = {
	{ "V100", "7.0" },  { "T4", "7.5" },     { "A100", "8.0" },  { "A800", "8.0" },
	{ "A30", "8.0" },   { "A10", "8.6" },    { "A10G", "8.6" },  { "A16", "8.6" },
	{ "A40", "8.6" },   { "L4", "8.9" },     { "L40", "8.9" },   { "L40S", "8.9" },
	{ "L20", "8.9" },   { "H100", "9.0" },   { "H200", "9.0" },  { "H800", "9.0" },
	{ "H20", "9.0" },   { "GH200", "9.0" },  { "B200", "10.0" }, { "GB200", "10.0" },
};

const char *probe_model_cc(const char *model)
{
	const char *p = model;
	size_t i, n;

	while (p && *p) {
		p += strspn(p, " \t-_");
		n = strcspn(p, " \t-_");
		for (i = 0; n && i < sizeof(known_models) / sizeof(known_models[0]); i++)
			if (strlen(known_models[i].word) == n && !strncmp(p, known_models[i].word, n))
				return known_models[i].cc;
		p += n;
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* API                                                                 */

void probe_sig_script(struct strbuf *sb, const char *cuda_home, const char *python,
		      int gpu_index)
{
	strbuf_addstr(sb, "cuda_home=");
	strbuf_add_shell_quoted(sb, cuda_home ? cuda_home : "");
	strbuf_addstr(sb, "\npython=");
	strbuf_add_shell_quoted(sb, python ? python : "");
	strbuf_addf(sb, "\ngpu=%d\n", gpu_index > 0 ? gpu_index : 0);
	strbuf_addstr(sb, probe_sig_part);
}

int probe_parse_text(const char *text, struct host_info *out)
{
	char *copy = xstrdup(text ? text : "");
	int rc;
	memset(out, 0, sizeof(*out));
	out->disk_free_kib = -1;
	out->execds_running = -1;
	rc = parse_output(copy, out);
	free(copy);
	if (rc)
		probe_release(out);
	return rc;
}

void probe_merge_later(struct host_info *hi, const char *text)
{
	char *copy = xstrdup(text ? text : "");
	(void)parse_output(copy, hi);
	free(copy);
	free(hi->later);
	hi->later = NULL;
}

void probe_script_text(struct strbuf *sb, const char *cuda_home, const char *python,
		       const char *workdir, int gpu_index, int later, const char *gpu_names,
		       int gpu_any)
{
	size_t i;

	/* its cache (~/.cache/gpuorch) is the user's alone, as all gpuorch writes */
	strbuf_addstr(sb, "umask 077\nworkdir=");
	strbuf_add_shell_quoted(sb, workdir && *workdir ? workdir : ".");
	strbuf_addf(sb, "\nlater=%d\ngpu_any=%d\ngpu_names=", later ? 1 : 0, gpu_any ? 1 : 0);
	strbuf_add_shell_quoted(sb, gpu_names ? gpu_names : "");
	strbuf_addstr(sb, "\ngpu_models='");
	for (i = 0; i < sizeof(known_models) / sizeof(known_models[0]); i++)
		strbuf_addf(sb, "%s%s", i ? " " : "", known_models[i].word);
	strbuf_addstr(sb, "'\n");
	probe_sig_script(sb, cuda_home, python, gpu_index);
	strbuf_addstr(sb, probe_script);
}

enum go_status probe_host(struct ssh_conn *c, const char *cuda_home, const char *python,
			  const char *workdir, int gpu_index, struct host_info *out,
			  struct strbuf *raw, struct strbuf *err)
{
	struct strbuf cmd = STRBUF_INIT, body = STRBUF_INIT;
	struct strbuf sout = STRBUF_INIT, serr = STRBUF_INIT;
	struct ssh_exec_result r;
	enum go_status st;

	memset(out, 0, sizeof(*out));
	out->disk_free_kib = -1;
	out->execds_running = -1;
	probe_script_text(&body, cuda_home, python, workdir, gpu_index, 0, NULL, 0);
	strbuf_addstr(&cmd, "sh -c ");
	strbuf_add_shell_quoted(&cmd, body.buf);

	sout.max = 256 * 1024;
	serr.max = 16 * 1024;
	st = ssh_exec(c, cmd.buf, NULL, 0, &sout, &serr, &r, PROBE_TIMEOUT_MS, err);
	if (!st && raw)
		strbuf_add(raw, sout.buf, sout.len);
	if (!st) {
		if (r.signal[0] || r.exit_code != 0 || parse_output(sout.buf, out)) {
			struct strbuf how = STRBUF_INIT;
			strbuf_trim(&serr);
			ssh_exec_add_end(&how, &r);
			st = go_fail(err, GO_ERR_REMOTE, "the host probe did not complete (%s)%s%s",
				     how.buf, serr.len ? ": " : "", serr.buf);
			strbuf_release(&how);
			probe_release(out);
		}
	}
	strbuf_release(&cmd);
	strbuf_release(&body);
	strbuf_release(&sout);
	strbuf_release(&serr);
	return st;
}

static void tool_release(struct tool_info *t)
{
	free(t->path);
	free(t->version);
	t->path = t->version = NULL;
}

void probe_release(struct host_info *hi)
{
	if (!hi)
		return;
	free(hi->hostname);
	free(hi->kernel);
	free(hi->home);
	free(hi->gpu_reason);
	free(hi->gpu_name);
	free(hi->gpu_uuid);
	free(hi->compute_cap);
	free(hi->driver);
	free(hi->torch_version);
	free(hi->sig);
	free(hi->later);
	free(hi->proc_gpu_name);
	free(hi->proc_gpu_uuid);
	free(hi->proc_driver);
	tool_release(&hi->nvcc);
	tool_release(&hi->ncu);
	tool_release(&hi->sanitizer);
	tool_release(&hi->python);
	memset(hi, 0, sizeof(*hi));
}

static void add_tool(cJSON *obj, const char *key, const struct tool_info *t)
{
	cJSON *o = json_add_obj(obj, key);
	json_add_str(o, "path", t->path);
	json_add_str(o, "version", t->path ? t->version : NULL);
}

static void add_num_or_null(cJSON *obj, const char *key, int have, double v)
{
	if (have)
		json_add_num(obj, key, v);
	else
		cJSON_AddNullToObject(obj, key);
}

cJSON *probe_to_json(const struct host_info *hi)
{
	cJSON *o = cJSON_CreateObject();
	char *arch = hi->has_gpu ? probe_cc_to_arch(hi->compute_cap) : NULL;
	int g = hi->has_gpu;

	if (!o) {
		free(arch);
		return NULL;
	}
	json_add_str(o, "hostname", hi->hostname);
	json_add_str(o, "kernel", hi->kernel);
	json_add_bool(o, "has_gpu", hi->has_gpu);
	json_add_str(o, "gpu_reason", hi->has_gpu ? NULL : hi->gpu_reason);
	json_add_str(o, "gpu_name", g ? hi->gpu_name : NULL);
	json_add_str(o, "gpu_uuid", g ? hi->gpu_uuid : NULL);
	json_add_str(o, "compute_cap", g ? hi->compute_cap : NULL);
	json_add_str(o, "arch", arch);
	json_add_str(o, "driver", g ? hi->driver : NULL);
	add_num_or_null(o, "sm_clock_mhz", g, hi->sm_clock_mhz);
	add_num_or_null(o, "max_sm_clock_mhz", g, hi->max_sm_clock_mhz);
	add_num_or_null(o, "mem_clock_mhz", g, hi->mem_clock_mhz);
	add_num_or_null(o, "max_mem_clock_mhz", g && hi->max_mem_clock_mhz > 0, hi->max_mem_clock_mhz);
	add_num_or_null(o, "gpu_mem_mib", g, (double)hi->gpu_mem_mib);
	add_tool(o, "nvcc", &hi->nvcc);
	add_tool(o, "ncu", &hi->ncu);
	add_tool(o, "compute_sanitizer", &hi->sanitizer);
	add_tool(o, "python", &hi->python);
	json_add_str(o, "torch", hi->torch_version);
	add_num_or_null(o, "disk_free_kib", hi->disk_free_kib >= 0, (double)hi->disk_free_kib);
	add_num_or_null(o, "execds_running", hi->execds_running >= 0, (double)hi->execds_running);
	free(arch);
	return o;
}

char *probe_cc_to_arch(const char *cc)
{
	const char *dot;
	size_t i, majlen;

	if (!cc || !*cc)
		return NULL;
	dot = strchr(cc, '.');
	if (!dot || dot == cc || !dot[1])
		return NULL;
	majlen = (size_t)(dot - cc);
	for (i = 0; i < majlen; i++)
		if (!isdigit((unsigned char)cc[i]))
			return NULL;
	for (i = 1; dot[i]; i++)
		if (!isdigit((unsigned char)dot[i]))
			return NULL;
	if (majlen > 3 || strlen(dot + 1) > 2)
		return NULL;
	return xstrfmt("sm_%.*s%s", (int)majlen, cc, dot + 1);
}

/* ---------------------------------------------------------------- an inventory */

static void probe_one(void *arg)
{
	struct host_probe *t = arg;
	struct ssh_conn *c = NULL;
	struct ssh_opts o;
	int64_t t0 = time_mono_ms();

	host_ssh_opts(t->h, t->accept_new_hostkey, &o);
	t->st = ssh_connect(&o, &c, &t->err);
	if (t->st == GO_OK) {
		t->fingerprint = xstrdup(ssh_fingerprint(c));
		if (ssh_notice(c))
			t->notice = xstrdup(ssh_notice(c));
		t->st = probe_host(c, t->h->cuda_home, t->h->python, t->h->workdir,
				   t->h->gpu_index, &t->info, NULL, &t->err);
	}
	ssh_disconnect(c);
	t->seconds = (double)(time_mono_ms() - t0) / 1000.0;
}

struct host_probe *probe_inventory(const struct hosts *hs, int accept_new_hostkey)
{
	struct host_probe *t = xcalloc((size_t)hs->n, sizeof(*t));
	void **args = xcalloc((size_t)hs->n, sizeof(*args));
	int i;

	for (i = 0; i < hs->n; i++) {
		t[i].h = &hs->v[i];
		t[i].accept_new_hostkey = accept_new_hostkey;
		strbuf_init(&t[i].err, 0);
		args[i] = &t[i];
	}
	par_run(hs->n, probe_one, args, NULL, NULL, 200);
	free(args);
	return t;
}

void probe_inventory_release(struct host_probe *p, int n)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < n; i++) {
		if (p[i].st == GO_OK)
			probe_release(&p[i].info);
		free(p[i].fingerprint);
		free(p[i].notice);
		strbuf_release(&p[i].err);
	}
	free(p);
}
