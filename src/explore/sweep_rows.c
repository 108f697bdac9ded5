/* The results files of a sweep, results.csv and results.jsonl: each row is
 * appended as one line with a flush, so after a crash or a Ctrl-C both
 * files hold a valid prefix (at worst a torn last line). Resuming drops a
 * torn line, keeps the rows both files hold, and checks that the CSV
 * header is this study's, so a sweep continues exactly where it stopped
 * (a file of an older comet, without the version column, keeps its
 * header and gets rows without the version). */
#define _XOPEN_SOURCE 700 /* getline, truncate */
#include "sweep_rows.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comet/files.h"
#include "comet/sweep.h"

/* Complete lines of a file: the length up to the last '\n', and how many
 * lines that is. A missing file has none. */
static comet_status complete_lines(const char *path, long *bytes, uint64_t *lines,
                                   comet_error *err)
{
    *bytes = 0;
    *lines = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return errno == ENOENT ? COMET_OK
                               : comet_error_set(err, COMET_EIO, path, 0, 0, NULL,
                                                 "cannot read: %s", strerror(errno));
    long pos = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        pos++;
        if (c == '\n') {
            *bytes = pos;
            (*lines)++;
        }
    }
    fclose(f);
    return COMET_OK;
}

/* Keep the first `lines` lines of a file (dropping a torn last line). */
static comet_status keep_lines(const char *path, uint64_t lines, comet_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "cannot read: %s",
                               strerror(errno));
    long pos = 0;
    uint64_t seen = 0;
    int c;
    while (seen < lines && (c = fgetc(f)) != EOF) {
        pos++;
        if (c == '\n')
            seen++;
    }
    fclose(f);
    if (truncate(path, pos) != 0)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "cannot truncate: %s",
                               strerror(errno));
    return COMET_OK;
}

/* The header line results.csv starts with, for this study (malloc'd). */
static char *csv_header(const comet_sweep_format *f, const comet_study *study)
{
    comet_buf b;
    comet_buf_init(&b);
    f->csv_header(&b, study);
    return b.data;
}

/* Where to start: 0 for a fresh sweep, else the rows both files hold. */
static comet_status prepare(const char *dir, bool resume, bool force,
                            const comet_sweep_format *format, const comet_study *study,
                            const char *csv, const char *jsonl, uint64_t *start,
                            bool *unversioned, comet_error *err)
{
    *start = 0;
    *unversioned = false;
    long csv_bytes, jsonl_bytes;
    uint64_t csv_lines, jsonl_lines;
    if (complete_lines(csv, &csv_bytes, &csv_lines, err) ||
        complete_lines(jsonl, &jsonl_bytes, &jsonl_lines, err))
        return err->status;
    bool exists = access(csv, F_OK) == 0 || access(jsonl, F_OK) == 0;
    if (!resume) {
        if (exists && !force)
            return comet_error_set(err, COMET_EINPUT, dir, 0, 0, NULL,
                                   "already holds sweep results; use --resume to continue or "
                                   "--force to start over");
        remove(csv);
        remove(jsonl);
        return COMET_OK;
    }
    if (!exists || csv_lines == 0) {
        /* nothing to resume: a fresh start (no stray JSON rows kept) */
        remove(csv);
        remove(jsonl);
        return COMET_OK;
    }
    char *header = csv_header(format, study);
    FILE *f = fopen(csv, "rb");
    char *line = NULL;
    size_t cap = 0;
    bool same = f && getline(&line, &cap, f) > 0 && header && strcmp(line, header) == 0;
    for (int which = 0; !same && line && format->csv_header_older; which++) {
        comet_buf older;
        comet_buf_init(&older);
        bool more = format->csv_header_older(&older, study, which);
        same = more && older.data && strcmp(line, older.data) == 0;
        *unversioned = same;
        comet_buf_free(&older);
        if (!more)
            break;
    }
    if (f)
        fclose(f);
    free(line);
    free(header);
    if (!same)
        return comet_error_set(err, COMET_EINPUT, csv, 1, 1, NULL,
                               "was written for a different study (its columns differ); "
                               "use --force to start over");
    /* with no whole row yet (a stop before the first), the header goes
     * too: sweep_rows_open writes it again for a start at 0 */
    uint64_t rows = csv_lines - 1 < jsonl_lines ? csv_lines - 1 : jsonl_lines;
    if (keep_lines(csv, rows > 0 ? rows + 1 : 0, err) || keep_lines(jsonl, rows, err))
        return err->status;
    *start = rows;
    return COMET_OK;
}

comet_status sweep_rows_append(FILE *f, const char *path, const char *text, size_t len,
                               comet_error *err)
{
    if (fwrite(text, 1, len, f) != len || fflush(f) != 0)
        return comet_error_set(err, COMET_EIO, path, 0, 0, NULL, "write failed: %s",
                               strerror(errno));
    return COMET_OK;
}

comet_status sweep_rows_append_csv(sweep_rows *rows, const char *line, comet_error *err)
{
    const char *comma = rows->unversioned ? strchr(line, ',') : NULL;
    if (comma)
        line = comma + 1;
    return sweep_rows_append(rows->csv, rows->csv_path, line, strlen(line), err);
}

/* A results file to append rows to; a symbolic link at its name is
 * refused (ELOOP), not written through. */
static FILE *open_for_append(const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "ab") : NULL;
    if (fd >= 0 && !f)
        close(fd);
    return f;
}

comet_status sweep_rows_open(sweep_rows *rows, const char *dir, bool resume, bool force,
                             const comet_sweep_format *format, const comet_study *study,
                             uint64_t *start, comet_error *err)
{
    snprintf(rows->csv_path, sizeof rows->csv_path, "%s/%s", dir, "results.csv");
    snprintf(rows->jsonl_path, sizeof rows->jsonl_path, "%s/%s", dir, "results.jsonl");
    comet_status st =
        prepare(dir, resume, force, format, study, rows->csv_path, rows->jsonl_path, start,
                &rows->unversioned, err);
    if (st)
        return st;
    rows->csv = open_for_append(rows->csv_path);
    rows->jsonl = open_for_append(rows->jsonl_path);
    if (!rows->csv || !rows->jsonl)
        return comet_error_set(err, comet_errno_status(errno),
                               rows->csv ? rows->jsonl_path : rows->csv_path, 0, 0, NULL,
                               "cannot write: %s", strerror(errno));
    if (*start == 0) {
        char *header = csv_header(format, study);
        st = header ? sweep_rows_append(rows->csv, rows->csv_path, header, strlen(header), err)
                    : comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        free(header);
    }
    return st;
}

void sweep_rows_close(sweep_rows *rows)
{
    if (rows->csv)
        fclose(rows->csv);
    if (rows->jsonl)
        fclose(rows->jsonl);
    rows->csv = rows->jsonl = NULL;
}
