"""sdpa.py -- PyTorch scaled_dot_product_attention baseline with the gpuorch result contract.

python3 sdpa.py --mode=check|bench --B=16 --H=16 --S=512 --D=64 [--causal=0] [--backend=default|flash|cudnn|efficient|math]
Inputs [B,H,S,D] FP16 drawn like kernels/attention (Q,K in [-2,2), V in [-1,1));
reference: float64 attention on the upcast inputs, per (b,h) chunk.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _bench  # noqa: E402

PARAMS = {"B": None, "H": None, "S": None, "D": None, "causal": "0", "backend": "default"}


def classify_kernels(names):
    """Which SDPA backend ran, from the CUDA kernels one call launched: cuDNN's fused attention
    (cudnn_generated_fort_native_sdpa_..., whose names also say flash), FlashAttention-2
    (pytorch_flash::flash_fwd_kernel), the memory-efficient CUTLASS kernel (fmha_cutlassF_...), else the
    math path (GEMMs and a softmax); None when nothing was recorded."""
    low = [n.lower() for n in names]
    if not low:
        return None
    if any("cudnn" in n for n in low):
        return "cudnn"
    if any("flash" in n for n in low):
        return "flash"
    if any("fmha" in n or "mem_eff" in n or "efficient_attention" in n for n in low):
        return "efficient"
    return "math"


def chosen_backend(torch, fn, requested):
    """The backend PyTorch chose for fn (one SDPA call), read from the kernels the profiler saw launch."""
    out = {"requested": requested, "chosen": None, "how": "torch.profiler: the CUDA kernels of one call",
           "kernels": []}
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        evs = prof.events()
        names = {e.name for e in evs if "cuda" in str(getattr(e, "device_type", "")).lower()}
        names |= {k.name for e in evs for k in (getattr(e, "kernels", None) or [])}
        names = sorted(names)
        out["kernels"] = names[:8]
        out["chosen"] = classify_kernels(names)
        if out["chosen"] is None:
            out["why"] = "the profiler recorded no CUDA kernel"
    except Exception as e:  # noqa: BLE001
        out["why"] = "profiler failed: %s" % str(e)[:200]
    return out


def body(torch, opts, prob, dev, nv):
    import torch.nn.functional as F
    try:
        B, H, S, D, causal = (int(float(prob[k])) for k in ("B", "H", "S", "D", "causal"))
    except ValueError:
        raise _bench.Fail(2, "B, H, S, D, causal must be integers")
    backend = prob["backend"]
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"default": None, "flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}
    if backend not in backends:
        raise _bench.Fail(2, "'--backend=%s': expected one of %s" % (backend, ", ".join(backends)))

    def call(q, k, v):
        if backends[backend] is None:
            return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
        with sdpa_kernel([backends[backend]]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))

    def inputs(seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        q = (torch.rand(B, H, S, D, device="cuda", generator=g) * 4 - 2).half()
        k = (torch.rand(B, H, S, D, device="cuda", generator=g) * 4 - 2).half()
        v = (torch.rand(B, H, S, D, device="cuda", generator=g) * 2 - 1).half()
        return q, k, v

    def reference(q, k, v):
        out = torch.empty(B, H, S, D, dtype=torch.float64, device="cuda")
        for b in range(B):
            for h in range(H):
                qq, kk, vv = q[b, h].double(), k[b, h].double(), v[b, h].double()
                s = qq @ kk.T / (D ** 0.5)
                if causal:
                    s = s.masked_fill(torch.ones(S, S, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
                out[b, h] = torch.softmax(s, -1) @ vv
        return out

    try:
        call(*inputs(0))
        torch.cuda.synchronize()
    except RuntimeError as e:
        return {"status": "skipped", "reason": "backend %s unavailable here: %s" % (backend, str(e)[:300])}
    chosen = chosen_backend(torch, lambda: call(*inputs(1)), backend)
    trials = []
    ntr = opts["trials"] if opts["mode"] == "check" else 1
    for i in range(ntr):
        seed = opts["seed"] + i
        q, k, v = inputs(seed)
        t = _bench.compare(torch, call(q, k, v), reference(q, k, v), opts["tol"])
        t.update({"seed": seed, "shape": {"B": B, "H": H, "S": S, "D": D, "causal": causal}})
        trials.append(t)
    ok = all(t["pass"] for t in trials)
    res = {"sdpa_backend": chosen,
           "status": "pass" if ok else "fail",
           "reason": None if ok else next(t["why"] for t in trials if not t["pass"]),
           "correctness": {"trials": trials, "max_abs": max(t["max_abs"] for t in trials),
                           "max_rel": max(t["max_rel"] for t in trials), "rel_l2": max(t["rel_l2"] for t in trials),
                           "tol": dict(opts["tol"], source=opts["tol_source"]), "pass": ok,
                           **_bench.worst_counts(trials)}}
    if opts["mode"] == "bench":
        inb = 3 * B * H * S * D * 2
        nsets = 1
        l2 = dev["l2_bytes"] or (64 << 20)
        if inb < l2:
            nsets = max(2, min(16, -(-2 * l2 // inb)))
        sets = [inputs(opts["seed"] + 7919 * (i + 1)) for i in range(nsets)]
        tm = _bench.measure(torch, lambda i: call(*sets[i]), nsets, opts, dev, nv)
        flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
        res["timing"] = tm
        res["model"] = _bench.model(flops, 4.0 * B * H * S * D * 2, tm["median_us"], opts)
    return res


if __name__ == "__main__":
    sys.exit(_bench.main("sdpa", PARAMS, {"max_abs": 2e-2, "rel_l2": 1e-2}, body))
