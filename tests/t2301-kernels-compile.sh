#!/bin/sh
test_description='every kernel of experiments/*.json numbers 2, 6, ... (of every 4th, in name order) builds with nvcc through gpuorch on a GPU-less host (ptxas report recorded, GPU steps skipped with the reason)'
# cost: 50
KC_SHARD=1
KC_SHARDS=4
. "$(dirname "$0")/lib/kernels-compile.sh"
