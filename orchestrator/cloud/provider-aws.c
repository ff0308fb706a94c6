/* provider-aws.c -- the native "aws" provider (EC2 Query API through libcurl
 * with SigV4). */
#include "cloud/cloud-int.h"
#include "core/banned.h"

enum go_status provider_aws_load(struct instance *in, const struct cfg *c)
{
	return cfg_bad(c, "provider", "provider \"aws\" is not available in this build yet; use "
		       "\"aws-cli\" (the AWS CLI preset)");
}
