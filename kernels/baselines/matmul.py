"""matmul.py -- torch.matmul FP16 GEMM baseline with the gpuorch result contract.

python3 matmul.py --mode=check|bench --M=8192 --N=8192 --K=8192 [--block=.. --topk=..: ignored]
C = A·B, FP16 row-major; reference float64 on sampled rows (64 rows).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _bench  # noqa: E402

PARAMS = {"M": None, "N": None, "K": None, "block": "0", "topk": "0"}


def body(torch, opts, prob, dev, nv):
    try:
        M, N, K = (int(float(prob[k])) for k in ("M", "N", "K"))
    except ValueError:
        raise _bench.Fail(2, "M, N, K must be integers")

    def inputs(seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        a = (torch.rand(M, K, device="cuda", generator=g) * 2 - 1).half()
        b = (torch.rand(K, N, device="cuda", generator=g) * 2 - 1).half()
        return a, b

    trials = []
    ntr = opts["trials"] if opts["mode"] == "check" else 1
    for i in range(ntr):
        seed = opts["seed"] + i
        a, b = inputs(seed)
        c = torch.matmul(a, b)
        rows = torch.randint(0, M, (min(M, 64),), device="cuda", generator=torch.Generator(device="cuda").manual_seed(seed))
        t = _bench.compare(torch, c[rows], a[rows].double() @ b.double(), opts["tol"])
        t.update({"seed": seed, "shape": {"M": M, "N": N, "K": K}})
        trials.append(t)
    ok = all(t["pass"] for t in trials)
    res = {"status": "pass" if ok else "fail",
           "reason": None if ok else next(t["why"] for t in trials if not t["pass"]),
           "correctness": {"trials": trials, "max_abs": max(t["max_abs"] for t in trials),
                           "max_rel": max(t["max_rel"] for t in trials), "rel_l2": max(t["rel_l2"] for t in trials),
                           "tol": dict(opts["tol"], source=opts["tol_source"]), "pass": ok,
                           **_bench.worst_counts(trials)}}
    if opts["mode"] == "bench":
        inb = 2 * (M * K + K * N)
        l2 = dev["l2_bytes"] or (64 << 20)
        nsets = max(2, min(16, -(-2 * l2 // inb))) if inb < l2 else 1
        sets = [inputs(opts["seed"] + 7919 * (i + 1)) for i in range(nsets)]
        out = torch.empty(M, N, dtype=torch.half, device="cuda")
        tm = _bench.measure(torch, lambda i: torch.matmul(*sets[i], out=out), nsets, opts, dev, nv)
        res["timing"] = tm
        res["model"] = _bench.model(2.0 * M * N * K, 2.0 * (M * K + K * N + M * N), tm["median_us"], opts)
    return res


if __name__ == "__main__":
    sys.exit(_bench.main("matmul", PARAMS, {"rel_l2": 2e-3}, body))
