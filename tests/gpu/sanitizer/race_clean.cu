// race_clean.cu -- race.cu with its __syncthreads (no planted race).
#define PLANT 0
#include "race.cu"
