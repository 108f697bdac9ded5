/* Output files written safely (see comet/files.h): the one place comet
 * creates a file. A predictable temporary name opened with fopen would let
 * anyone who can write to the directory plant a symbolic link there and
 * have comet overwrite what it points to; a temporary created with
 * O_CREAT|O_EXCL under an unguessable name cannot be redirected. Files of
 * a set (the ranks of a Chakra export) are all written before any is
 * renamed, and the files they replace are kept under a second link until
 * the last rename, so a failure leaves either the whole new set or the
 * whole earlier one. Every file is synced before its rename. Single files
 * (comet_file_produce: the CLI's outputs, Chakra traces) also resolve a
 * symbolic link at their destination first, so every output follows one
 * rule for links. An output directory written over a long run (a sweep's)
 * is locked against a second run (comet_dir_lock). */
#define _XOPEN_SOURCE 700 /* realpath */
#define _DEFAULT_SOURCE   /* flock */
#include "comet/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
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

void comet_files_init(comet_files *set)
{
    memset(set, 0, sizeof *set);
    set->rename_into_place = rename;
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

/* A fresh name PATH.TAG.XXXXXXXX made by `make` (which fails with EEXIST
 * when the name is taken, as open with O_EXCL and link do): make's result
 * (>= 0) with the name in *name, or -1 with errno set and *name NULL. */
static int make_unique(const comet_files *set, const char *path, const char *tag,
                       int (*make)(const char *name, const char *path), char **name)
{
    size_t cap = strlen(path) + 1 + strlen(tag) + 1 + 8 + 1;
    *name = malloc(cap);
    if (!*name) {
        errno = ENOMEM;
        return -1;
    }
    int made = -1;
    for (int attempt = 0; made < 0 && attempt < CREATE_ATTEMPTS; attempt++) {
        char suffix[9];
        random_suffix(set, attempt, suffix);
        snprintf(*name, cap, "%s.%s.%s", path, tag, suffix);
        made = make(*name, path);
        if (made < 0 && errno != EEXIST)
            break;
    }
    if (made < 0) {
        int e = errno;
        free(*name);
        *name = NULL;
        errno = e;
    }
    return made;
}

static int create_exclusive(const char *name, const char *path)
{
    (void)path;
    return open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
}

static int link_earlier(const char *name, const char *path)
{
    return link(path, name); /* a symbolic link is linked itself, not followed */
}

/* Room for one more entry, zeroed, bound for a copy of `path`. */
static comet_status add_entry(comet_files *set, const char *path, comet_file_entry **out,
                              comet_error *err)
{
    if (set->open)
        return comet_error_set(err, COMET_EINTERNAL, path, 0, 0, NULL,
                               "a file of the set is still open");
    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 8;
        comet_file_entry *grown = realloc(set->entries, cap * sizeof *grown);
        if (!grown)
            return comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
        set->entries = grown;
        set->cap = cap;
    }
    comet_file_entry *e = &set->entries[set->n];
    memset(e, 0, sizeof *e);
    e->destination = strdup(path);
    if (!e->destination)
        return comet_error_set(err, COMET_ENOMEM, path, 0, 0, NULL, "out of memory");
    set->n++;
    *out = e;
    return COMET_OK;
}

comet_status comet_files_begin(comet_files *set, const char *path, FILE **out, comet_error *err)
{
    *out = NULL;
    comet_file_entry *entry = NULL;
    comet_status st = add_entry(set, path, &entry, err);
    if (st)
        return st;
    int fd = make_unique(set, path, "tmp", create_exclusive, &entry->temporary);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(entry->temporary);
        }
        free(entry->temporary);
        free(entry->destination);
        set->n--;
        return comet_error_set(err, comet_errno_status(e), path, 0, 0, NULL, "cannot write: %s",
                               strerror(e));
    }
    set->open = f;
    *out = f;
    return COMET_OK;
}

comet_status comet_files_remove(comet_files *set, const char *path, comet_error *err)
{
    comet_file_entry *entry = NULL;
    return add_entry(set, path, &entry, err);
}

comet_status comet_file_check_destination(const char *path, comet_error *err)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL, "cannot write: %s",
                               strerror(EISDIR));
    return COMET_OK;
}

comet_status comet_files_end(comet_files *set, bool failed, comet_error *err)
{
    FILE *f = set->open;
    if (!f || set->n == 0)
        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL, "no file is open");
    set->open = NULL;
    const char *path = set->entries[set->n - 1].destination;
    int e = errno;
    bool bad = ferror(f) != 0;
    if (!bad && fflush(f) != 0) {
        bad = true;
        e = errno;
    }
    if (!bad && fsync(fileno(f)) != 0 && errno != EINVAL) {
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
    for (size_t i = 0; i < set->n; i++) {
        free(set->entries[i].temporary);
        free(set->entries[i].destination);
        free(set->entries[i].backup);
    }
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
        if (set->entries[i].temporary)
            unlink(set->entries[i].temporary);
    empty(set);
}

/* A second link to the file at the entry's destination, if there is one,
 * so the commit can put it back. */
static comet_status keep_earlier(const comet_files *set, comet_file_entry *e, comet_error *err)
{
    struct stat st;
    if (lstat(e->destination, &st) != 0) {
        int lost = errno;
        if (lost == ENOENT)
            return COMET_OK;
        return comet_error_set(err, comet_errno_status(lost), e->destination, 0, 0, NULL,
                               "cannot write: %s", strerror(lost));
    }
    if (make_unique(set, e->destination, "old", link_earlier, &e->backup) < 0) {
        int lost = errno;
        if (lost == EPERM || lost == EMLINK || lost == ENOTSUP || lost == EOPNOTSUPP)
            return COMET_OK; /* no hard link possible here: replaced without a way back */
        return comet_error_set(err, comet_errno_status(lost), e->destination, 0, 0, NULL,
                               "cannot keep the earlier file while replacing it: %s",
                               strerror(lost));
    }
    return COMET_OK;
}

/* The entry's new file moved into place, or its destination removed. */
static comet_status put_in_place(const comet_files *set, const comet_file_entry *e,
                                 comet_error *err)
{
    if (e->temporary ? set->rename_into_place(e->temporary, e->destination) == 0
                     : !e->backup || unlink(e->destination) == 0)
        return COMET_OK;
    int lost = errno;
    return comet_error_set(err, comet_errno_status(lost), e->destination, 0, 0, NULL,
                           e->temporary ? "cannot write: %s" : "cannot remove: %s",
                           strerror(lost));
}

comet_status comet_files_commit(comet_files *set, comet_error *err)
{
    if (set->open) {
        comet_files_abandon(set);
        return comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                               "a file of the set was not finished");
    }
    comet_status st = COMET_OK;
    for (size_t i = 0; !st && i < set->n; i++)
        if (set->entries[i].temporary)
            st = comet_file_check_destination(set->entries[i].destination, err);
    for (size_t i = 0; !st && i < set->n; i++)
        st = keep_earlier(set, &set->entries[i], err);
    size_t done = 0; /* entries whose change took place */
    while (!st && done < set->n && !(st = put_in_place(set, &set->entries[done], err)))
        done++;
    for (size_t i = 0; i < set->n; i++) {
        const comet_file_entry *e = &set->entries[i];
        if (st && i < done) { /* undone: the earlier file back, or the new one gone */
            if (e->backup)
                rename(e->backup, e->destination); /* if even this fails, it stays as .old */
            else if (e->temporary)
                unlink(e->destination);
            continue;
        }
        if (e->backup)
            unlink(e->backup);
        if (st && e->temporary)
            unlink(e->temporary);
    }
    empty(set);
    return st;
}

/* One file as a set of one, put at `path` itself. */
static comet_status produce_atomically(const char *path, bool (*produce)(FILE *, void *),
                                       void *ctx, comet_error *err)
{
    comet_files set;
    comet_files_init(&set);
    FILE *f;
    comet_status st = comet_files_begin(&set, path, &f, err);
    if (!st)
        st = comet_files_end(&set, !produce(f, ctx), err);
    if (!st)
        return comet_files_commit(&set, err);
    comet_files_abandon(&set);
    return st;
}

/* A device or a pipe is written in place: it cannot be half-written the
 * way a file can, and must not be replaced. */
static comet_status produce_in_place(const char *path, const char *target,
                                     bool (*produce)(FILE *, void *), void *ctx,
                                     comet_error *err)
{
    FILE *dev = fopen(target, "wb");
    if (!dev)
        return comet_error_set(err, comet_errno_status(errno), path, 0, 0, NULL,
                               "cannot write: %s", strerror(errno));
    bool failed = !produce(dev, ctx) || fflush(dev) != 0;
    int e = errno;
    if (fclose(dev) != 0 || failed)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "write failed: %s",
                               strerror(failed ? e : errno));
    return COMET_OK;
}

comet_status comet_file_produce(const char *path, bool (*produce)(FILE *, void *), void *ctx,
                                comet_error *err)
{
    /* A symbolic link is followed, so the file it names is replaced, not
     * the link; a dangling one is refused rather than replaced. */
    char target[4096];
    struct stat st;
    if (realpath(path, target) == NULL) {
        if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                                   "cannot write: dangling symbolic link");
        if (errno != ENOENT || snprintf(target, sizeof target, "%s", path) >= (int)sizeof target)
            return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL, "cannot write: %s",
                                   strerror(errno));
    } else if (stat(target, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL,
                                   "cannot write: is a directory");
        return produce_in_place(path, target, produce, ctx, err);
    }
    if (produce_atomically(target, produce, ctx, err) == COMET_OK)
        return COMET_OK;
    snprintf(err->file, sizeof err->file, "%s", path); /* as given, not where links lead */
    return err->status;
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
    return comet_file_produce(path, write_text, &t, err);
}

/* The process id a lock file holds ("12345\n"), or 0 when it holds none
 * yet (its owner took the lock and has not written it). */
static long lock_owner(int fd)
{
    char digits[32];
    ssize_t n = pread(fd, digits, sizeof digits - 1, 0);
    if (n <= 0)
        return 0;
    digits[n] = '\0';
    char *end;
    long pid = strtol(digits, &end, 10);
    return end != digits && pid > 0 ? pid : 0;
}

comet_status comet_dir_lock(const char *dir, int *fd_out, comet_error *err)
{
    *fd_out = -1;
    char path[4200];
    if (snprintf(path, sizeof path, "%s/%s", dir, COMET_LOCK_FILE) >= (int)sizeof path)
        return comet_error_set(err, COMET_EINPUT, dir, 0, 0, NULL, "path too long");
    /* O_NOFOLLOW: a link planted at the lock file's name is not written
     * through (its pid is written into the file) */
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = fd < 0 ? errno : EINVAL;
        if (fd >= 0)
            close(fd);
        return comet_error_set(err, comet_errno_status(e), path, 0, 0, NULL,
                               "cannot lock: %s", fd < 0 ? strerror(e) : "not a regular file");
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        long owner = lock_owner(fd);
        close(fd);
        if (e != EWOULDBLOCK)
            return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "cannot lock: %s",
                                   strerror(e));
        char who[64] = "another comet process";
        if (owner > 0)
            snprintf(who, sizeof who, "comet process %ld", owner);
        return comet_error_set(err, COMET_EINPUT, dir, 0, 0, NULL,
                               "is in use by %s (locked through %s); wait for it to finish or "
                               "choose another output directory",
                               who, COMET_LOCK_FILE);
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        int e = errno;
        close(fd);
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "cannot write: %s",
                               strerror(e));
    }
    *fd_out = fd;
    return COMET_OK;
}

void comet_dir_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* the lock goes with the descriptor; the file stays, harmless */
}
