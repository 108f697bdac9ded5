/* CLI helpers shared by the subcommands: rendering errors as one line,
 * strict flag parsing, and output to stdout or to a file written
 * atomically by the library (comet_file_write, comet/files.h), so a reader
 * never sees a half-written result and a planted link is never written
 * through. */
#define _DEFAULT_SOURCE /* flock */
#include "cli.h"
#include "comet/files.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cli_report_error(const char *command, const comet_error *err)
{
    char line[1024];
    comet_error_format(err, line, sizeof line);
    fprintf(stderr, "comet %s: %s\n", command, line);
    return err->status == COMET_EINPUT ? CLI_USAGE : CLI_FAIL;
}

/* Write all of text to an open stream; 0 on success. */
static int write_all(FILE *f, const char *text, size_t len)
{
    return fwrite(text, 1, len, f) != len || fflush(f) != 0;
}

comet_status cli_write_output(const char *path, const char *text, size_t len, comet_error *err)
{
    if (!path || strcmp(path, "-") == 0) {
        if (write_all(stdout, text, len))
            return comet_error_set(err, COMET_EIO, "<stdout>", 0, 0, NULL, "write failed: %s",
                                   strerror(errno));
        return COMET_OK;
    }
    return comet_file_write(path, text, len, err);
}

/* The process id a lock file holds ("12345\n"), or 0 when it holds none
 * yet (its owner took the lock and has not written it). */
static long lock_owner(int fd)
{
    char text[32];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    char *end;
    long pid = strtol(text, &end, 10);
    return end != text && pid > 0 ? pid : 0;
}

comet_status cli_lock_dir(const char *dir, int *fd_out, comet_error *err)
{
    *fd_out = -1;
    char path[4200];
    if (snprintf(path, sizeof path, "%s/%s", dir, CLI_LOCK_FILE) >= (int)sizeof path)
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
                               who, CLI_LOCK_FILE);
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

void cli_unlock_dir(int fd)
{
    if (fd >= 0)
        close(fd); /* the lock goes with the descriptor; the file stays, harmless */
}

comet_status cli_check_output(const char *path, cli_output_kind kind, const char *flag,
                              comet_error *err)
{
    if (!path || (kind == CLI_OUT_FILE && strcmp(path, "-") == 0))
        return COMET_OK;
    struct stat st;
    if (kind != CLI_OUT_PREFIX && stat(path, &st) == 0) {
        if (kind == CLI_OUT_FILE && S_ISDIR(st.st_mode))
            return comet_error_set(err, COMET_EINPUT, path, 0, 0, flag,
                                   "cannot write: is a directory");
        if (kind == CLI_OUT_DIR && !S_ISDIR(st.st_mode))
            return comet_error_set(err, COMET_EINPUT, path, 0, 0, flag,
                                   "cannot create the directory: a file has its name");
        if (kind == CLI_OUT_DIR && access(path, W_OK | X_OK) != 0)
            return comet_error_set(err, COMET_EINPUT, path, 0, 0, flag, "cannot write: %s",
                                   strerror(errno));
        return COMET_OK; /* a file to replace, or a device to write to */
    }
    if (kind != CLI_OUT_PREFIX && errno != ENOENT)
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, flag, "cannot write: %s",
                               strerror(errno));
    /* it will be created: its directory must be there and writable */
    char parent[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else if (snprintf(parent, sizeof parent, "%.*s", slash == path ? 1 : (int)(slash - path),
                      path) >= (int)sizeof parent)
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, flag, "path too long");
    int e = 0;
    if (stat(parent, &st) != 0)
        e = errno;
    else if (!S_ISDIR(st.st_mode))
        e = ENOTDIR;
    else if (access(parent, W_OK | X_OK) != 0)
        e = errno;
    if (e)
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, flag, "cannot write: %s",
                               strerror(e));
    return COMET_OK;
}

comet_status cli_parse_int(const char *flag, const char *text, int64_t min, int64_t max,
                           int64_t *out, comet_error *err)
{
    char *end = NULL;
    errno = 0;
    /* digits with an optional minus sign, nothing else (no spaces, no '+') */
    bool plain = text && (isdigit((unsigned char)text[0]) ||
                          (text[0] == '-' && isdigit((unsigned char)text[1])));
    long long v = plain ? strtoll(text, &end, 10) : 0;
    if (!plain || *end || errno == ERANGE)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag,
                               "expected an integer, got \"%s\"", text ? text : "");
    if (v < min || v > max)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag,
                               "%lld is out of range [%lld, %lld]", v, (long long)min,
                               (long long)max);
    *out = (int64_t)v;
    return COMET_OK;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cli_threads(int64_t requested)
{
    if (requested > 0)
        return (int)requested;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (int)cores : 1;
}
