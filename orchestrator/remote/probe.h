/* probe.h -- what a host has: GPU, driver, clocks, CUDA tools and their paths.
 *
 * One remote shell script (built here, run with ssh_exec) prints KEY=VALUE
 * lines; tools are found on PATH, then in CUDA_HOME/bin, /usr/local/cuda/bin,
 * /usr/local/cuda-N/bin and /opt/nvidia/nsight-compute/VERSION (a non-login SSH
 * PATH often lacks them). The slow part (nvidia-smi, tool versions, the torch
 * import) is cached on the host in $XDG_CACHE_HOME/gpuorch/probe-<gpu> (else
 * ~/.cache/gpuorch/probe-<gpu>) and reused
 * while the host is unchanged: same boot id, same tool paths, each tool file
 * of the same size, mtime and inode. */
#ifndef GPUORCH_PROBE_H
#define GPUORCH_PROBE_H

#include <cjson/cJSON.h>
#include "transport/hosts.h"
#include "transport/ssh.h"

struct tool_info {
	char *path;              /* NULL when not found */
	char *version;
};

/* One GPU of a host as nvidia-smi lists it (or the driver's /proc files,
 * until nvidia-smi has answered): a slot the runner locks on its own. */
struct gpu_slot {
	int index;               /* nvidia-smi's index (PCI bus order) */
	char *uuid, *name;       /* NULL when not known */
	long long mem_mib;       /* 0: not known */
	int max_sm_clock_mhz;    /* 0: not known */
};

struct host_info {
	char *hostname;
	char *kernel;            /* uname -sr */
	char *home;              /* remote $HOME */
	int has_gpu;
	char *gpu_reason;        /* why no GPU, e.g. "nvidia-smi: not found" */
	char *gpu_name;
	char *gpu_uuid;
	char *compute_cap;       /* "9.0" */
	char *driver;
	int sm_clock_mhz, max_sm_clock_mhz, mem_clock_mhz;
	int max_mem_clock_mhz;   /* 0: not known (an nvidia-smi line of 8 fields) */
	long long gpu_mem_mib;
	struct tool_info nvcc, ncu, sanitizer, python;
	char *torch_version;     /* NULL when python3 cannot import torch */
	long long disk_free_kib; /* in the work directory's file system */
	int execds_running;      /* execds serving the work directory; -1 unknown */
	int has_flock, has_timeout, has_setsid;
	int ncores;              /* online CPUs (nproc); 0 when unknown */
	char *sig;               /* the host's signature (boot id, tool files); NULL: none */
	int cached;              /* the slow part came from the host's probe cache */
	/* the GPU as the driver's /proc files name it (a probe for a run whose
	 * plan needs no more of it): nvidia-smi's query then comes later */
	char *proc_gpu_name, *proc_gpu_uuid, *proc_driver;
	int smi_answered;        /* nvidia-smi's answer (has_gpu) is in */
	struct gpu_slot *slots;  /* every GPU of the host, in index order; NULL when the
				  * probe listed none (then only the one above is known) */
	int nslots;
	int slots_from_proc;     /* listed from /proc: nvidia-smi's list replaces them */
	char *later;             /* NULL, or the tools only recorded (ncu, compute-sanitizer,
				  * python, torch) are still being asked on the host: their
				  * lines will be in LATER.later once LATER.lock is free
				  * (probe_script_text's later; the runner's probe_later) */
};

/* cuda_home may be NULL; python (may be NULL) is the interpreter to report
 * instead of python3 on the SSH PATH; gpu_index selects the GPU for nvidia-smi. */
enum go_status probe_host(struct ssh_conn *c, const char *cuda_home, const char *python,
			  const char *workdir, int gpu_index, struct host_info *out,
			  struct strbuf *raw, struct strbuf *err);
/* The probe as a POSIX sh text (what probe_host runs as `sh -c`), for a
 * command that probes first (remote.h). later: on a host whose probe is not
 * cached, answer what a plan needs (the GPU, nvcc) at once and ask the tools
 * that are only recorded in the background (host_info.later). gpu_names
 * (newline-separated, may be NULL): the GPU models the plan can name an arch
 * for by their name (the spec's targets; case-sensitive substrings here, so
 * a match is one spec_arch_for_gpu also makes); gpu_any: any model will do
 * (the host's arch is given). When the driver's /proc files name such a GPU,
 * or one probe_model_cc knows, nvidia-smi's query is asked later too. */
void probe_script_text(struct strbuf *sb, const char *cuda_home, const char *python,
		       const char *workdir, int gpu_index, int later, const char *gpu_names,
		       int gpu_any);
/* raw (may be NULL) gets the probe's KEY=VALUE output, which
 * probe_parse_text() reads back (0: complete). */
int probe_parse_text(const char *text, struct host_info *out);
/* A silent shell fragment that sets $sig to the host's signature as the
 * probe computes it (empty when the host has no boot id): a probe kept by
 * the controller still holds while the two are equal. */
void probe_sig_script(struct strbuf *sb, const char *cuda_home, const char *python,
		      int gpu_index);
/* The deferred lines (host_info.later) are in: add them to hi, and clear
 * hi->later. */
void probe_merge_later(struct host_info *hi, const char *text);
void probe_release(struct host_info *hi);
void probe_slots_release(struct host_info *hi);
/* One slot as the record writes it ({index, uuid, name, mem_mib,
 * max_sm_clock_mhz}); the array of hi's slots WHICH[0..N) (positions in
 * hi->slots; NULL: every slot). */
cJSON *probe_slot_json(const struct gpu_slot *g);
cJSON *probe_slots_json(const struct host_info *hi, const int *which, int n);
/* The record's "info" object (docs/run-record.md). */
cJSON *probe_to_json(const struct host_info *hi);
/* "9.0" -> "sm_90"; returns a new string or NULL. */
char *probe_cc_to_arch(const char *compute_cap);
/* The compute capability ("9.0") of a GPU model gpuorch knows by a word of
 * its name ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"), or NULL. A
 * fresh probe plans from it when the driver's /proc files name the GPU and
 * asks nvidia-smi beside the builds. */
const char *probe_model_cc(const char *model);

/* One host of an inventory, connected to and probed (or why not). */
struct host_probe {
	const struct host *h;
	int accept_new_hostkey;
	enum go_status st;       /* GO_OK: connected and probed; info is valid */
	struct strbuf err;
	char *fingerprint;       /* the host key's, once connected; else NULL */
	char *notice;            /* e.g. a newly recorded host key; NULL when none */
	struct host_info info;
	double seconds;          /* connect and probe */
	int build_tools_asked;   /* build_tools is filled (probe_inventory's with_build_tools) */
	struct tool_info build_tools[ENV_NTOOLS]; /* cmake, make, ninja (core/shellenv.h) under
					 * the host's "env": path NULL when absent */
};
/* Connect to every host of hs in parallel and probe it: what `hosts check`
 * shows and what host picking chooses from; with_build_tools: also which
 * cmake, make and ninja its builds would run, with its "env" applied. Returns hs->n entries, in the
 * inventory's order; free with probe_inventory_release(). */
struct host_probe *probe_inventory(const struct hosts *hs, int accept_new_hostkey,
				   int with_build_tools);
void probe_inventory_release(struct host_probe *p, int n);

#endif
