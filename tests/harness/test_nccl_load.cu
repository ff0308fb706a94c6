/* test_nccl_load.cu -- prints where kernels/nccl's nccl_load() found libnccl.so.2 (t2271); no GPU needed. */
#include "../../kernels/nccl/nccl_api.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	struct nccl_api api;
	char why[4096];
	int rc = nccl_load(&api, argc > 1 ? argv[1] : NULL, why, sizeof why);
	printf("rc=%d\npath=%s\nversion=%d\nwhy=%s\n", rc, rc == 0 ? api.path : "", rc == 0 ? api.version : 0, why);
	return 0;
}
