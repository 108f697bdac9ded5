/* Output files written safely (see comet/files.h): the one place comet
 * creates a file. A predictable temporary name opened with fopen would let
 * anyone who can write to the directory plant a symbolic link there and
 * have comet overwrite what it points to; a temporary created with
 * O_CREAT|O_EXCL under an unguessable name cannot be redirected. Files of
 * a set (the ranks of a Chakra export) are all written before any is
 * renamed, so a failure leaves either the whole set or nothing. */
#include "comet/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CREATE_ATTEMPTS 64

comet_status comet_errno_status(int errnum)
{
    switch (errnum) {
    case ENOENT:
    case ENOTDIR:
    case EISDIR:
    case EACCES:
    case EPERM:
    case EROFS:
    case ENAMETOOLONG:
    case ELOOP:
    case EEXIST:
    case EINVAL:
    case ETXTBSY:
        return COMET_EINPUT;
    default:
        return COMET_EIO;
    }
}

void comet_files_init(comet_files *set, bool sync)
{
    memset(set, 0, sizeof *set);
    set->sync = sync;
}

static const char *temporary_of(const char *entry)
{
    return entry;
}

static const char *destination_of(const char *entry)
{
    return entry + strlen(entry) + 1;
}

/* Eight characters no one can guess ahead of time: the clock in
 * nanoseconds, the process, the set's address and the attempt, mixed
 * (splitmix64). Uniqueness comes from O_EXCL, not from these. */
static void random_suffix(const comet_files *set, int attempt, char out[9])
{
    static const char digits[] = "abcdefghijklmnopqrstuvwxyz012345";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 40) ^
                 (uint64_t)(uintptr_t)set ^ ((uint64_t)attempt * 0x9e3779b97f4a7c15ull) ^
                 (uint64_t)set->n * 0xbf58476d1ce4e5b9ull;
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    for (int i = 0; i < 8; i++, x >>= 5)
        out[i] = digits[x & 31];
    out[8] = '\0';
}

comet_status comet_files_begin(comet_files *set, const char *path, FILE **out, comet_error *err)
{
    *out = NULL;
    if (set->open)
        return comet_error_set(err, COMET_EINTERNAL, path, 0, 0, NULL,
                               "a file of the set is still open");
    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 8;
        char **grown = realloc(set->entries, cap * sizeof *grown);
        if (!grown)
            return comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
        set->entries = grown;
        set->cap = cap;
    }
    size_t len = strlen(path);
    const size_t tmp_len = len + strlen(".tmp.") + 8;
    char *entry = malloc(tmp_len + 1 + len + 1);
    if (!entry)
        return comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
    memcpy(entry + tmp_len + 1, path, len + 1);
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < CREATE_ATTEMPTS; attempt++) {
        char suffix[9];
        random_suffix(set, attempt, suffix);
        snprintf(entry, tmp_len + 1, "%s.tmp.%s", path, suffix);
        fd = open(entry, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(entry);
        }
        free(entry);
        return comet_error_set(err, comet_errno_status(e), path, 0, 0, NULL, "cannot write: %s",
                               strerror(e));
    }
    set->entries[set->n++] = entry;
    set->open = f;
    *out = f;
    return COMET_OK;
}

comet_status comet_files_end(comet_files *set, bool failed, comet_error *err)
{
    FILE *f = set->open;
    if (!f || set->n == 0)
        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL, "no file is open");
    set->open = NULL;
    const char *path = destination_of(set->entries[set->n - 1]);
    int e = errno;
    bool bad = ferror(f) != 0;
    if (!bad && fflush(f) != 0) {
        bad = true;
        e = errno;
    }
    if (!bad && set->sync && fsync(fileno(f)) != 0 && errno != EINVAL) {
        bad = true; /* EINVAL: a file system that cannot sync, nothing lost */
        e = errno;
    }
    if (fclose(f) != 0 && !bad) {
        bad = true;
        e = errno;
    }
    if (bad)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "write failed: %s",
                               strerror(e));
    if (failed)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "write failed");
    return COMET_OK;
}

static void empty(comet_files *set)
{
    for (size_t i = 0; i < set->n; i++)
        free(set->entries[i]);
    free(set->entries);
    set->entries = NULL;
    set->n = set->cap = 0;
}

void comet_files_abandon(comet_files *set)
{
    if (set->open) {
        fclose(set->open);
        set->open = NULL;
    }
    for (size_t i = 0; i < set->n; i++)
        unlink(temporary_of(set->entries[i]));
    empty(set);
}

comet_status comet_files_commit(comet_files *set, comet_error *err)
{
    if (set->open) {
        comet_files_abandon(set);
        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                               "a file of the set was not finished");
    }
    for (size_t i = 0; i < set->n; i++) {
        const char *entry = set->entries[i];
        if (rename(temporary_of(entry), destination_of(entry)) == 0)
            continue;
        int e = errno;
        comet_status st = comet_error_set(err, comet_errno_status(e), destination_of(entry), 0,
                                          0, NULL, "cannot write: %s", strerror(e));
        for (size_t k = 0; k < i; k++)
            unlink(destination_of(set->entries[k]));
        for (size_t k = i; k < set->n; k++)
            unlink(temporary_of(set->entries[k]));
        empty(set);
        return st;
    }
    empty(set);
    return COMET_OK;
}

comet_status comet_file_produce(const char *path, bool sync, bool (*produce)(FILE *, void *),
                                void *ctx, comet_error *err)
{
    comet_files set;
    comet_files_init(&set, sync);
    FILE *f;
    comet_status st = comet_files_begin(&set, path, &f, err);
    if (!st)
        st = comet_files_end(&set, !produce(f, ctx), err);
    if (!st)
        return comet_files_commit(&set, err);
    comet_files_abandon(&set);
    return st;
}

typedef struct text {
    const char *data;
    size_t len;
} text;

static bool write_text(FILE *f, void *ctx)
{
    const text *t = ctx;
    return t->len == 0 || fwrite(t->data, 1, t->len, f) == t->len;
}

comet_status comet_file_write(const char *path, const char *data, size_t len, comet_error *err)
{
    text t = {data, len};
    return comet_file_produce(path, true, write_text, &t, err);
}
