/* CLI helpers shared by the subcommands: rendering errors as one line,
 * strict flag parsing, and atomic output files (temporary file + rename,
 * so a reader never sees a half-written result). */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_report_error(const char *command, const comet_error *err)
{
    char line[1024];
    comet_error_format(err, line, sizeof line);
    fprintf(stderr, "comet %s: %s\n", command, line);
    return err->status == COMET_EINPUT ? CLI_USAGE : CLI_FAIL;
}

comet_status cli_write_output(const char *path, const char *text, size_t len, comet_error *err)
{
    if (!path || strcmp(path, "-") == 0) {
        if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
            return comet_error_set(err, COMET_EIO, "<stdout>", 0, 0, NULL, "write failed: %s",
                                   strerror(errno));
        return COMET_OK;
    }
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return comet_error_set(err, COMET_EINPUT, path, 0, 0, NULL, "path too long");
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "cannot write: %s",
                               strerror(errno));
    size_t wrote = fwrite(text, 1, len, f);
    int flushed = fflush(f);
    int synced = fsync(fileno(f));
    int closed = fclose(f);
    if (wrote != len || flushed || synced || closed || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "cannot write: %s", strerror(e));
    }
    return COMET_OK;
}

comet_status cli_parse_int(const char *flag, const char *text, int64_t min, int64_t max,
                           int64_t *out, comet_error *err)
{
    char *end = NULL;
    errno = 0;
    long long v = text ? strtoll(text, &end, 10) : 0;
    if (!text || !*text || *end || errno == ERANGE)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag,
                               "expected an integer, got \"%s\"", text ? text : "");
    if (v < min || v > max)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, flag,
                               "%lld is out of range [%lld, %lld]", v, (long long)min,
                               (long long)max);
    *out = (int64_t)v;
    return COMET_OK;
}
