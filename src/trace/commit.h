/* Files of the trace module are written as PATH.tmp and renamed into place
 * only when every byte got out, so a reader never sees a half-written one. */
#ifndef COMET_TRACE_COMMIT_H
#define COMET_TRACE_COMMIT_H

#include <stdbool.h>
#include <stdio.h>
#include "comet/error.h"

/* Close f (open on tmp); rename tmp to path, or remove it if `failed` or
 * the close or rename fails (an error naming path). */
comet_status trace_commit(FILE *f, bool failed, const char *tmp, const char *path,
                          comet_error *err);

#endif
