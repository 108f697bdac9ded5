/* CLI helpers shared by the subcommands: rendering errors as one line,
 * output paths checked up front, and output to stdout or to a file
 * written atomically by the library (comet_file_write, comet/files.h), so
 * a reader never sees a half-written result and a planted link is never
 * written through. (Flags are parsed in args.c.) */
#include "cli.h"
#include "comet/api.h"
#include "comet/files.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool cli_is_file_arg(const char *arg)
{
    struct stat st;
    return strchr(arg, '/') || strstr(arg, ".yaml") || strstr(arg, ".yml") ||
           strstr(arg, ".json") || stat(arg, &st) == 0;
}

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

comet_status cli_load_system(const char *arg, comet_system *sys, comet_error *err)
{
    if (comet_preset_text("systems", arg))
        return comet_preset_system(arg, sys, err);
    comet_job *job = malloc(sizeof *job); /* large: it holds a source map */
    if (!job)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_job_init(job);
    comet_status st = comet_config_read_file(arg, job, err);
    if (!st && !job->has_system)
        st = comet_error_set(err, COMET_EINPUT, arg, 0, 0, NULL, "has no system: section");
    if (!st)
        *sys = job->system;
    free(job);
    return st;
}

comet_status cli_parse_collective(const char *flag, const char *value, comet_collective *out,
                                  comet_error *err)
{
    return comet_collective_parse_flag(flag, value, out, err);
}

/* The library builds it (comet/api.h); a command builds it once per run. */
comet_status cli_band_model(comet_band_model **out, comet_error *err)
{
    return comet_band_model_builtin(out, err);
}
