/* Output files written safely: each file goes to a fresh temporary in its
 * destination's directory, created with O_CREAT|O_EXCL (so a file or a
 * symbolic link planted under any name is never written through), and is
 * renamed into place only when every file of the set was written whole.
 * A set that fails leaves nothing behind: its temporaries are removed, and
 * so are the files it had already moved into place. */
#ifndef COMET_FILES_H
#define COMET_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "comet/error.h"

typedef struct comet_files {
    size_t n, cap;
    char **entries;    /* per file: "TEMPORARY\0DESTINATION\0" in one allocation */
    FILE *open;        /* the file begun and not yet ended, or NULL */
    bool sync;         /* fsync every file before it is renamed */
} comet_files;

/* An empty set; `sync` asks for each file to reach the disk (fsync) before
 * the rename, so a crash never leaves an empty file in place. */
void comet_files_init(comet_files *set, bool sync);

/* Start the next file of the set, bound for `path`: *out is a stream on a
 * new temporary beside it (PATH.tmp.XXXXXXXX). One file is open at a
 * time. An unusable path (missing directory, no permission, a directory or
 * a regular file where a directory should be) is COMET_EINPUT; other
 * failures are COMET_EIO. The error names `path`. */
comet_status comet_files_begin(comet_files *set, const char *path, FILE **out, comet_error *err);

/* Finish the file begun last: flush, sync when asked, close. `failed` says
 * the caller could not produce all of its content; a stream error is found
 * here too. On failure the caller abandons the set. */
comet_status comet_files_end(comet_files *set, bool failed, comet_error *err);

/* Move every file into place in the order begun. On a failure every
 * temporary and every file already moved is removed. The set is empty
 * afterwards either way. */
comet_status comet_files_commit(comet_files *set, comet_error *err);

/* Remove every temporary of the set (closing the open one) and empty it. */
void comet_files_abandon(comet_files *set);

/* One file as a set of one: `produce` writes its content to f and says
 * whether it could (false: the file is not kept). */
comet_status comet_file_produce(const char *path, bool sync, bool (*produce)(FILE *f, void *ctx),
                                void *ctx, comet_error *err);

/* One file with this content, synced. */
comet_status comet_file_write(const char *path, const char *text, size_t len, comet_error *err);

/* How a failed open, create or rename with this errno counts: an unusable
 * path (COMET_EINPUT) or an I/O failure (COMET_EIO: disk full, quota, too
 * many open files, a device error). */
comet_status comet_errno_status(int errnum);

#endif
