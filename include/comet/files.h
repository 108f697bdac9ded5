/* Output files written safely: each file goes to a fresh temporary in its
 * destination's directory, created with O_CREAT|O_EXCL (so a file or a
 * symbolic link planted under any name is never written through), and is
 * renamed into place only when every file of the set was written whole.
 * A set may also name files to remove. Its commit is all-or-nothing with
 * respect to the files it replaces too: every earlier file gets a second
 * link (PATH.old.XXXXXXXX, made with link(2), which never replaces a name)
 * before anything moves, and a commit that fails half-way puts every
 * earlier file back and removes every new one. (Where no hard link can be
 * made, EPERM, EMLINK or ENOTSUP, a file is replaced without a way back,
 * as rename alone would.) Every file reaches the disk (fsync) before it is
 * renamed, so a crash never leaves an empty file in place, and every error
 * carries the text of the errno that caused it. */
#ifndef COMET_FILES_H
#define COMET_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "comet/error.h"

typedef struct comet_file_entry {
    char *temporary;   /* the new content, or NULL: the destination is to be removed */
    char *destination;
    char *backup;      /* during a commit: a second link to the earlier file, or NULL */
} comet_file_entry;

typedef struct comet_files {
    size_t n, cap;
    comet_file_entry *entries;
    FILE *open;        /* the file begun and not yet ended, or NULL */
    /* rename(2), used to move each new file into place; a test puts a
     * failing one here to see a commit undone half-way */
    int (*rename_into_place)(const char *from, const char *to);
} comet_files;

/* An empty set. */
void comet_files_init(comet_files *set);

/* Start the next file of the set, bound for `path`: *out is a stream on a
 * new temporary beside it (PATH.tmp.XXXXXXXX). One file is open at a
 * time. An unusable path (missing directory, no permission, a directory or
 * a regular file where a directory should be) is COMET_EINPUT; other
 * failures are COMET_EIO. The error names `path`. */
comet_status comet_files_begin(comet_files *set, const char *path, FILE **out, comet_error *err);

/* Finish the file begun last: flush, sync, close. `failed` says
 * the caller could not produce all of its content; a stream error is found
 * here too. On failure the caller abandons the set. */
comet_status comet_files_end(comet_files *set, bool failed, comet_error *err);

/* Have the commit remove `path` (a file the set replaces by its absence,
 * such as a rank an earlier, larger export wrote). */
comet_status comet_files_remove(comet_files *set, const char *path, comet_error *err);

/* Whether a file can be put at `path`: a directory (or anything else that
 * rename(2) cannot replace with a file) is COMET_EINPUT "cannot write: Is a
 * directory" naming path. A missing path is fine. */
comet_status comet_file_check_destination(const char *path, comet_error *err);

/* Move every file into place in the order begun, and remove the files
 * named for removal. Every destination is checked first; then every
 * earlier file gets a backup link; then the files move. On a failure
 * every earlier file is restored, every new one and every temporary is
 * removed, and the error names the file. Backups are removed either way;
 * the set is empty afterwards. */
comet_status comet_files_commit(comet_files *set, comet_error *err);

/* Remove every temporary of the set (closing the open one) and empty it. */
void comet_files_abandon(comet_files *set);

/* One output file, the helper every single file comet writes goes
 * through: `produce` writes its content to f and says whether it could
 * (false: the file is not kept). It goes to a fresh temporary beside its
 * destination, synced and renamed into place (a set of one). A symbolic
 * link at `path` is followed, so the file it names is replaced, not the
 * link; a dangling link or a directory is refused (COMET_EINPUT); a device
 * or a pipe is written in place. Errors name `path` as given. */
comet_status comet_file_produce(const char *path, bool (*produce)(FILE *f, void *ctx), void *ctx,
                                comet_error *err);

/* One file with this content (comet_file_produce). */
comet_status comet_file_write(const char *path, const char *text, size_t len, comet_error *err);

/* An output directory belongs to one run at a time: an exclusive flock
 * on DIR/.comet-lock, which holds the owner's process id. Taken without
 * waiting: when another process holds it, an error naming the directory
 * and that process (COMET_EINPUT). The kernel drops the lock when its
 * process dies, so a lock file left by a killed run is no obstacle. *fd is
 * the descriptor to keep open while the run lasts (-1 on failure). */
#define COMET_LOCK_FILE ".comet-lock"
comet_status comet_dir_lock(const char *dir, int *fd, comet_error *err);
void comet_dir_unlock(int fd);

/* How a failed open, create or rename with this errno counts: an unusable
 * path (COMET_EINPUT) or an I/O failure (COMET_EIO: disk full, quota, too
 * many open files, a device error). */
comet_status comet_errno_status(int errnum);

#endif
