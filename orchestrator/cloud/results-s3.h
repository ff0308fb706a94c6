/* results-s3.h -- the results store in an S3 bucket (store/results.h's backend). */
#ifndef GPUORCH_RESULTS_S3_H
#define GPUORCH_RESULTS_S3_H

#include "store/results.h"

/* url: "s3://BUCKET" or "s3://BUCKET/PREFIX". The region is $AWS_REGION,
 * else $AWS_DEFAULT_REGION, else us-east-1; endpoint, when not NULL, is an
 * S3-compatible server reached path-style (ENDPOINT/BUCKET/KEY: moto,
 * MinIO), else https://BUCKET.s3.REGION.amazonaws.com. Credentials as the
 * aws provider's (cloud-int.h), read at the first request. NULL and err
 * for a URL that is not one. */
struct results_store *results_s3_open(const char *url, const char *endpoint, struct strbuf *err);

#endif
