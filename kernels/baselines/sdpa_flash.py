"""sdpa_flash.py -- sdpa.py pinned to PyTorch's FlashAttention-2 backend (SDPBackend.FLASH_ATTENTION).

python3 sdpa_flash.py --mode=check|bench --B=.. --H=.. --S=.. --D=.. [--causal=0]
The same inputs, reference and timing as sdpa.py; a separate program so that an experiment can time
the FA2 backend beside the default one (cuDNN on the H100) in the same run, on the same problems.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _bench  # noqa: E402
import sdpa  # noqa: E402

PARAMS = dict(sdpa.PARAMS, backend="flash")

if __name__ == "__main__":
    sys.exit(_bench.main("sdpa_flash", PARAMS, {"max_abs": 2e-2, "rel_l2": 1e-2}, sdpa.body))
