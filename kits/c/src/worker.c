#include "worker.h"

#include <string.h>

#include "protocol.h"

#define MESSAGE_BYTES 1024

static const workload_entry *find(const worker_spec *spec, const char *workload)
{
    for (size_t i = 0; i < spec->workload_count; i++) {
        if (strcmp(spec->workloads[i].name, workload) == 0) {
            return &spec->workloads[i];
        }
    }
    return NULL;
}

int worker_run(const worker_spec *spec, FILE *in, FILE *out, FILE *log)
{
    worker_request r;
    char message[MESSAGE_BYTES];
    bool readable = request_read(in, &r, message, sizeof message);
    /* hello comes first whatever the request holds: echo its variant when it has one */
    protocol_hello(out, spec->target, spec->runtime_version,
                   r.variant != NULL && r.variant[0] != '\0' ? r.variant : "unknown");
    const workload_entry *workload = readable ? find(spec, r.workload) : NULL;
    if (!readable) {
        protocol_error(out, ERROR_INTERNAL, message);
    } else if (workload == NULL) {
        snprintf(message, sizeof message, "workload \"%s\" is not supported: the %s target implements %s", r.workload,
                 spec->target, spec->implements);
        protocol_error(out, ERROR_UNSUPPORTED, message);
    } else {
        workload->run(&r, out, log);
    }
    request_free(&r);
    fflush(out);
    return 0;
}
