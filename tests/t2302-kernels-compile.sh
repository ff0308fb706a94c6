#!/bin/sh
test_description='every kernel of experiments/*.json in shard 3 of 4 (dealt by build count: tests/lib/kernels-compile.sh) builds with nvcc through gpuorch on a GPU-less host (ptxas report recorded, GPU steps skipped with the reason)'
# cost: 600
# timeout: 2700
KC_SHARD=2
KC_SHARDS=4
. "$(dirname "$0")/lib/kernels-compile.sh"
