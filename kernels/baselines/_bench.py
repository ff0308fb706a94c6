"""_bench.py -- the harness contract (docs/result-contract.md) for PyTorch baseline scripts.

Same CLI, same JSON line, same timing rules as kernels/harness/harness.cu:
CUDA events around one call per sample, a 2x-L2 buffer written before every
sample, rotation of input sets that fit in L2, >= 10 samples and >= 0.5 s of
GPU time, then stop on CV < 0.5 %, a CV plateau, or the time cap; NVML SM clock
per sample (ctypes) with throttled samples dropped.  Each input set's call is
captured once into a CUDA graph and the graph replayed per sample (--no-graph:
the eager call), so the call's Python overhead is not timed as GPU time.  Persisting-L2 reset is
done through libcudart when it can be loaded, else recorded as skipped.
"""
import ctypes
import os
import json
import math
import sys
import time

SCHEMA = "gpuorch.result/1"


class Fail(Exception):
    def __init__(self, code, msg):
        super().__init__(msg)
        self.code = code
        self.msg = msg


def finite_or_none(x):
    """x with every NaN/Inf float replaced by None (JSON null): an error over NaN outputs is infinite."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: finite_or_none(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite_or_none(v) for v in x]
    return x


def emit(obj):
    sys.stderr.flush()
    print(json.dumps(finite_or_none(obj), allow_nan=False, default=lambda x: None))
    sys.stdout.flush()


def num(v):
    try:
        f = float(v)
    except ValueError:
        return v
    if math.isfinite(f) and f == int(f):
        return int(f)
    return f


def parse(argv, program, params):
    """params: {name: default or None (required)}. Returns (opts, problem)."""
    opts = {"mode": None, "tol": {}, "seed": 1, "trials": 5, "max_time_s": 10.0, "min_time_s": 0.5,
            "min_samples": 10, "max_cv_pct": 0.5, "throttle_pct": 75.0, "peak_tflops": 0.0,
            "peak_gbps": 0.0, "flush": True, "max_samples": 100000, "graph": True}
    prob = {}
    for a in argv:
        if a in ("-h", "--help"):
            raise Fail(2, "usage: %s --mode=check|bench %s" % (program, " ".join(
                "--%s=%s" % (k, "N" if v is None else v) for k, v in params.items())))
        if not a.startswith("--"):
            raise Fail(2, "'%s': expected --KEY=VALUE" % a)
        if a == "--no-flush":
            opts["flush"] = False
            continue
        if a == "--no-graph":
            opts["graph"] = False
            continue
        if "=" not in a:
            raise Fail(2, "'%s': expected --KEY=VALUE" % a)
        k, v = a[2:].split("=", 1)
        nk = k.replace("_", "-")
        try:
            if nk == "mode":
                if v not in ("check", "bench"):
                    raise Fail(2, "'--mode=%s': expected check or bench" % v)
                opts["mode"] = v
            elif nk in ("tol-max-abs", "tol-max-rel", "tol-rel-l2"):
                opts["tol"][nk[4:].replace("-", "_")] = float(v)
            elif nk.startswith("tol-"):
                raise Fail(2, "'%s': unknown tolerance (known: max_abs, max_rel, rel_l2)" % a)
            elif nk in ("seed", "trials", "min-samples", "max-samples"):
                opts[nk.replace("-", "_")] = int(float(v))
            elif nk in ("max-time-s", "min-time-s", "max-cv-pct", "throttle-pct", "peak-tflops", "peak-gbps"):
                opts[nk.replace("-", "_")] = float(v)
            elif k in params:
                if k in prob:
                    raise Fail(2, "'--%s': given twice" % k)
                prob[k] = v
            else:
                raise Fail(2, "'--%s': unknown parameter for %s" % (k, program))
        except ValueError:
            raise Fail(2, "'%s': expected a number" % a)
    if opts["mode"] is None:
        raise Fail(2, "missing --mode=check|bench")
    for k, d in params.items():
        if k not in prob:
            if d is None:
                raise Fail(2, "missing --%s" % k)
            prob[k] = d
    if opts["min_samples"] < 10:
        raise Fail(2, "--min-samples: at least 10")
    return opts, prob


class Nvml:
    def __init__(self, pci_bus_id):
        self.ok = False
        self.why = ""
        self.max_mhz = 0
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                self.why = "nvmlInit_v2 failed"
                return
            h = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(h)) != 0:
                self.why = "nvmlDeviceGetHandleByPciBusId_v2(%s) failed" % pci_bus_id
                return
            m = ctypes.c_uint()
            if lib.nvmlDeviceGetMaxClockInfo(h, 1, ctypes.byref(m)) != 0 or m.value == 0:
                self.why = "nvmlDeviceGetMaxClockInfo failed"
                return
            buf = ctypes.create_string_buffer(96)
            lib.nvmlSystemGetDriverVersion(buf, 96)
            self.driver = buf.value.decode()
            self.lib, self.h, self.max_mhz, self.ok = lib, h, m.value, True
        except OSError as e:
            self.why = "dlopen libnvidia-ml.so.1 failed: %s" % e

    def clock(self):
        if not self.ok:
            return 0
        m = ctypes.c_uint()
        return m.value if self.lib.nvmlDeviceGetClockInfo(self.h, 1, ctypes.byref(m)) == 0 else 0


def device_info(torch):
    p = torch.cuda.get_device_properties(0)
    try:
        bus = "%08x:%02x:%02x.0" % (p.pci_domain_id, p.pci_bus_id, p.pci_device_id)
    except AttributeError:
        bus = ""
    nv = Nvml(bus)
    dev = {"name": p.name, "sm_count": p.multi_processor_count, "cc": "%d.%d" % (p.major, p.minor),
           "l2_bytes": getattr(p, "L2_cache_size", 0), "global_mem_bytes": p.total_memory,
           "sm_clock_mhz": nv.max_mhz if nv.ok else None, "mem_clock_mhz": None,
           "driver_version": getattr(nv, "driver", "unknown"),
           "runtime_version": torch.version.cuda, "torch_version": torch.__version__,
           "clock_source": "nvml" if nv.ok else nv.why}
    return dev, nv


def _loaded_lib(stem):
    """The path of a shared library this process has loaded (from /proc/self/maps), or None."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if line.strip() else ""
                if os.path.basename(path).startswith(stem + ".so"):
                    return path
    except OSError:
        pass
    return None


def libraries(torch):
    """The library versions a baseline ran with (issue 30 item 15): torch, its CUDA, cuDNN and the cuBLAS
    it loaded (cublasGetProperty on the loaded libcublas; call after the first matmul or attention)."""
    libs = {"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": None, "cublas": None}
    try:
        v = torch.backends.cudnn.version()
        libs["cudnn"] = "%d.%d.%d" % (v // 10000, v // 100 % 100, v % 100) if v and v >= 10000 else v
    except Exception as e:  # noqa: BLE001
        libs["cudnn_why"] = str(e)[:200]
    try:
        torch.ones(8, 8, device="cuda") @ torch.ones(8, 8, device="cuda")  # loads cuBLAS
        torch.cuda.synchronize()
        path = _loaded_lib("libcublas")
        if path:
            lib, parts = ctypes.CDLL(path), []
            for prop in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
                x = ctypes.c_int(0)
                if lib.cublasGetProperty(prop, ctypes.byref(x)) != 0:
                    raise OSError("cublasGetProperty(%d) failed" % prop)
                parts.append(str(x.value))
            libs["cublas"] = ".".join(parts)
            libs["cublas_path"] = path
        else:
            libs["cublas_why"] = "no libcublas in /proc/self/maps"
    except Exception as e:  # noqa: BLE001
        libs["cublas_why"] = str(e)[:200]
    return libs


def _reset_persisting_l2():
    try:
        rt = ctypes.CDLL("libcudart.so")
    except OSError:
        try:
            import glob
            import os
            import torch
            cands = glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "*", "lib", "libcudart.so*"))
            rt = ctypes.CDLL(cands[0]) if cands else None
        except Exception:
            rt = None
    if rt is None:
        return None
    return rt.cudaCtxResetPersistingL2Cache


def measure(torch, fn, nsets, opts, dev, nv):
    """fn(set) launches the work on the current stream."""
    l2 = dev["l2_bytes"] or (64 << 20)
    flush = torch.empty(2 * l2, dtype=torch.uint8, device="cuda") if opts["flush"] else None
    reset = _reset_persisting_l2()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ov = []
    for _ in range(64):
        e0.record()
        e1.record()
        e1.synchronize()
        ov.append(e0.elapsed_time(e1) * 1000)
    ov.sort()
    # A Python call spends 20-100 us of CPU enqueuing its kernels (an SDPA call through cuDNN the
    # most); when that outlasts the L2 flush before it, the GPU idles between the start event and
    # the first kernel and the gap is timed as the call's (B16 H16 S512 D64 causal: 42-53 us eager,
    # 42.1 as a graph, H100). Each set's call is captured into a CUDA graph once and replayed: one
    # launch, as a C harness makes. (A GPU-side sleep before the start event hid the gap too, but
    # gave the GPU idle time before every sample: D128 S4k ran 7 % faster than eager or graph.)
    launch, graphs = "eager (--no-graph)", None
    if opts["graph"]:
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for i in range(nsets):
                    fn(i)
            torch.cuda.current_stream().wait_stream(side)
            graphs = []
            for i in range(nsets):
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    fn(i)
                graphs.append(g)
            torch.cuda.synchronize()
            launch = "cuda_graph"
        except Exception as e:  # a call that cannot be captured is timed eagerly, and says so
            graphs = None
            torch.cuda.synchronize()
            launch = "eager (CUDA graph capture failed: %s)" % str(e)[:200]
    call = (lambda i: graphs[i].replay()) if graphs else fn
    warm, w0 = 0, time.monotonic()
    while warm < 3 or time.monotonic() - w0 < 0.05:
        call(warm % nsets)
        torch.cuda.synchronize()
        warm += 1
    thresh = nv.max_mhz * opts["throttle_pct"] / 100 if nv.ok else 0
    samples, clocks, dropped, attempt = [], [], 0, 0
    s = s2 = 0.0
    best, n_best, rule = float("inf"), 0, "time_cap"
    t0 = time.monotonic()
    while True:
        if flush is not None:
            if reset is not None:
                reset()
            flush.fill_(attempt & 0xFF)
        e0.record()
        call(attempt % nsets)
        e1.record()
        e1.synchronize()
        us = e0.elapsed_time(e1) * 1000
        attempt += 1
        mhz = nv.clock()
        if thresh and mhz and mhz < thresh:
            dropped += 1
            time.sleep(0.05)  # throttle recovery, as the harness does
        else:
            samples.append(us)
            clocks.append(mhz)
            s += us
            s2 += us * us
        n = len(samples)
        el = time.monotonic() - t0
        if n >= 2:
            mean = s / n
            cv = 100 * math.sqrt(max(0.0, s2 / n - mean * mean) * n / (n - 1)) / mean
            if cv < best * 0.99:
                best, n_best = cv, n
            enough = n >= opts["min_samples"] and s * 1e-6 >= opts["min_time_s"]
            if enough and cv < opts["max_cv_pct"]:
                rule = "cv"
                break
            if enough and n - n_best >= max(50, n_best):
                rule = "plateau"
                break
        if n >= opts["max_samples"]:
            rule = "max_samples"
            break
        if el >= opts["max_time_s"] and n >= 1:
            break
        if el >= 4 * opts["max_time_s"]:
            raise Fail(1, "every timing sample was throttled")
    srt = sorted(samples)
    n = len(srt)

    def pct(q):
        pos = q * (n - 1)
        i = int(pos)
        if i >= n - 1:
            return srt[-1]
        f = pos - i
        return srt[i] * (1 - f) + srt[i + 1] * f
    mean = s / n
    cv = 100 * math.sqrt(max(0.0, s2 / n - mean * mean) * n / (n - 1)) / mean if n > 1 else 0.0
    clocks.sort()
    return {"n": n, "min_us": srt[0], "p10_us": pct(0.1), "median_us": pct(0.5), "mean_us": mean,
            "p90_us": pct(0.9), "max_us": srt[-1], "cv_pct": cv, "stop_rule": rule, "gpu_time_s": s * 1e-6,
            "wall_s": time.monotonic() - t0, "dropped_throttled": dropped, "warmup": warm,
            "event_overhead_us": ov[32], "l2_flush_bytes": 2 * l2 if flush is not None else 0,
            "input_sets": nsets,
            "launch": launch,
            "sm_clock_mhz_median": (clocks[n // 2] or None) if nv.ok else None,
            "clock_note": ("per-sample NVML SM clock; throttled = under throttle_pct of max" if nv.ok else nv.why)
            + ("" if reset is not None else "; persisting-L2 reset skipped: libcudart not loadable"),
            "samples_total": n, "samples_kept": "all", "samples_us": [round(x, 3) for x in samples]}


def count_words(n):
    return "{:,}".format(n)


def compare(torch, out, ref, tol):
    """out, ref: tensors of the same shape; ref float64. Returns a trial dict (without seed/shape).
    An output that is NaN or Inf where the reference is finite is counted and makes the errors
    infinite (null in the JSON), as the harness does: never an error of 0 over the rest."""
    o = out.double()
    poison = torch.isnan(o) & False  # torch results are never poisoned by us
    rfin = torch.isfinite(ref)
    bad = rfin & ~torch.isfinite(o)
    nonfinite = int(bad.sum())
    nan = int((rfin & torch.isnan(o)).sum())
    good = torch.isfinite(o) & rfin
    d = (o - ref).abs()
    d = torch.where(good, d, torch.zeros_like(d))
    rms = float(ref.pow(2).mean().sqrt())
    floor = 0.01 * rms if rms > 0 else 1e-30
    t = {"max_abs": float(d.max()), "max_rel": float((d / ref.abs().clamp_min(floor)).max()),
         "rel_l2": float(d.pow(2).sum().sqrt() / ref.pow(2).sum().sqrt()),
         "unwritten": int(poison.sum()), "nonfinite": nonfinite, "nan": nan, "outputs": int(o.numel()),
         "cpu_points": 0}
    why = []
    if nonfinite:
        for k in ("max_abs", "max_rel", "rel_l2"):
            t[k] = float("inf")
        if nan:
            why.append("NaN in %s of %s outputs" % (count_words(nan), count_words(t["outputs"])))
        if nonfinite - nan:
            why.append("Inf in %s of %s outputs" % (count_words(nonfinite - nan), count_words(t["outputs"])))
    if nonfinite == 0 and o.numel() > 1 and float(o.max()) == float(o.min()):
        why.append("output is constant")
    for k in ("max_abs", "max_rel", "rel_l2"):
        if k in tol and not t[k] <= tol[k]:
            why.append("%s %.3g > %.3g" % (k, t[k], tol[k]))
    t["pass"] = not why
    t["why"] = "; ".join(why) or None
    return t


def worst_counts(trials):
    """correctness.nonfinite/nan/unwritten/outputs: the trial with the most outputs that are not numbers."""
    w = max(trials, key=lambda t: t["nonfinite"] + t["unwritten"]) if trials else None
    if not w or not (w["nonfinite"] + w["unwritten"]):
        return {"nonfinite": 0, "nan": 0, "unwritten": 0, "outputs": trials[0]["outputs"] if trials else 0}
    return {k: w[k] for k in ("nonfinite", "nan", "unwritten", "outputs")}


def main(program, params, defaults_tol, body):
    """body(torch, opts, prob, dev, nv) -> result dict fields (status, correctness, timing, model...)."""
    prob_json = {}
    mode = "check"
    try:
        opts, prob = parse(sys.argv[1:], program, params)
        mode = opts["mode"]
        prob_json = {k: num(v) for k, v in prob.items()}
        try:
            import torch
        except Exception as e:  # noqa: BLE001
            emit({"schema": SCHEMA, "program": program, "mode": mode, "status": "skipped",
                  "reason": "torch not importable: %s" % e, "problem": prob_json, "device": None})
            return 0
        if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
            emit({"schema": SCHEMA, "program": program, "mode": mode, "status": "skipped",
                  "reason": "no CUDA device: torch.cuda.is_available() is False", "problem": prob_json,
                  "device": None})
            return 0
        dev, nv = device_info(torch)
        res = {"schema": SCHEMA, "program": program, "mode": mode, "status": "pass", "reason": None,
               "problem": prob_json, "device": dev}
        if not opts["tol"]:
            opts["tol"] = dict(defaults_tol)
            opts["tol_source"] = "program default"
        else:
            opts["tol_source"] = "args"
        res.update(body(torch, opts, prob, dev, nv))
        if res.get("status") != "skipped":
            res["libraries"] = libraries(torch)
        emit(res)
        return 0
    except Fail as f:
        print("%s: error: %s" % (program, f.msg), file=sys.stderr)
        emit({"schema": SCHEMA, "program": program, "mode": mode, "status": "error", "reason": f.msg,
              "problem": prob_json, "device": None})
        return f.code
    except Exception as e:  # noqa: BLE001 -- CUDA errors surface as RuntimeError
        print("%s: error: %r" % (program, e), file=sys.stderr)
        emit({"schema": SCHEMA, "program": program, "mode": mode, "status": "error",
              "reason": "%s: %s" % (type(e).__name__, e), "problem": prob_json, "device": None})
        return 1


def model(flops, nbytes, median_us, opts):
    pt, pg = opts["peak_tflops"], opts["peak_gbps"]
    floor = max(flops / (pt * 1e6) if pt > 0 else 0, nbytes / (pg * 1e3) if pg > 0 else 0)
    return {"flops": flops, "bytes": nbytes, "tflops": flops / median_us / 1e6, "gbps": nbytes / median_us / 1e3,
            "peak_tflops": pt or None, "peak_gbps": pg or None, "peak_source": "args" if (pt or pg) else "none",
            "floor_us": floor or None, "pct_of_floor": 100 * floor / median_us if floor else None,
            "impossible": bool(floor and median_us < floor)}
