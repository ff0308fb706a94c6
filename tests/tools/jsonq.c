/* jsonq.c -- test helper: print the value at a dotted path of a JSON file.
 *
 *   jsonq FILE PATH          strings raw, numbers %.17g, true/false/null,
 *                            objects and arrays as compact JSON
 *   jsonq FILE PATH --len    the length of an array or object
 * Exits 1 when the file does not parse or the path does not exist. */
#include "core/jsonutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/banned.h"

int main(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT;
	cJSON *root = NULL;
	const cJSON *v;
	int rc = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: jsonq FILE PATH [--len]\n");
		return 2;
	}
	if (json_load_file(argv[1], &root, GO_ERR_IO, &err) != GO_OK) {
		fprintf(stderr, "jsonq: %s\n", err.buf);
		strbuf_release(&err);
		return 1;
	}
	v = !strcmp(argv[2], ".") ? root : json_path(root, argv[2]);
	if (!v) {
		fprintf(stderr, "jsonq: no '%s' in %s\n", argv[2], argv[1]);
		rc = 1;
	} else if (argc > 3 && !strcmp(argv[3], "--len")) {
		printf("%d\n", cJSON_GetArraySize(v));
	} else if (cJSON_IsString(v)) {
		printf("%s\n", v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		printf("%.17g\n", v->valuedouble);
	} else if (cJSON_IsBool(v)) {
		printf("%s\n", cJSON_IsTrue(v) ? "true" : "false");
	} else if (cJSON_IsNull(v)) {
		printf("null\n");
	} else {
		char *s = cJSON_PrintUnformatted(v);
		printf("%s\n", s ? s : "");
		free(s);
	}
	cJSON_Delete(root);
	strbuf_release(&err);
	return rc;
}
