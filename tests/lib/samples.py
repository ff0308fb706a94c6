"""samples.py -- a run.json timing's samples in either form, for tests that edit committed records.

timing.samples is the packed form gpuorch records (orchestrator/store/samples.h):
{"encoding": "ns-delta-zigzag-varint/zlib/base64", "n": N, "data": base64}; older
records have timing.samples_us, a plain list. get() reads either, put() writes
back in the form the timing had (packed when it was packed). line_samples() reads a
line of samples.txt in either form; run as a script it prints a samples.txt decoded.
"""
import base64
import zlib

ENCODING = "ns-delta-zigzag-varint/zlib/base64"


def decode(packed):
    assert packed["encoding"] == ENCODING, packed["encoding"]
    raw = zlib.decompress(base64.b64decode(packed["data"]))
    out, prev, u, shift = [], 0, 0, 0
    for b in raw:
        u |= (b & 0x7F) << shift
        shift += 7
        if b & 0x80:
            continue
        prev += -(u >> 1) - 1 if u & 1 else u >> 1
        out.append(prev / 1000.0)
        u, shift = 0, 0
    assert len(out) == packed["n"], (len(out), packed["n"])
    return out


def encode(samples):
    raw, prev = bytearray(), 0
    for x in samples:
        ns = int(round(x * 1000.0))
        d, prev = ns - prev, ns
        u = d << 1 if d >= 0 else ((-(d + 1)) << 1) | 1
        while u >= 0x80:
            raw.append((u & 0x7F) | 0x80)
            u >>= 7
        raw.append(u)
    return {"encoding": ENCODING, "n": len(samples),
            "data": base64.b64encode(zlib.compress(bytes(raw), 9)).decode()}


def get(timing):
    if "samples" in timing:
        return decode(timing["samples"])
    return list(timing.get("samples_us") or [])


def put(timing, samples):
    if "samples" in timing or "samples_us" not in timing:
        timing.pop("samples_us", None)
        timing["samples"] = encode(samples)
    else:
        timing["samples_us"] = list(samples)


def line_samples(line):
    """The samples of one samples.txt line (report/samplesline.h), either form."""
    line = line.rstrip("\n")
    if line.startswith(ENCODING + " "):
        _, n, data = line.split(" ")
        return decode({"encoding": ENCODING, "n": int(n), "data": data})
    return [float(x) for x in line.split()]


if __name__ == "__main__":
    # samples.py FILE: each line of samples.txt FILE as its samples, space-separated
    # in %.17g after decoding (the same text for either form of a line)
    import sys
    with open(sys.argv[1]) as f:
        for ln in f:
            print(" ".join("%.17g" % x for x in line_samples(ln)))
