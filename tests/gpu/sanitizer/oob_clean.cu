// oob_clean.cu -- oob.cu without the planted out-of-bounds write.
#define PLANT 0
#include "oob.cu"
