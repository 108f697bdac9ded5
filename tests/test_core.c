/* Core utilities: error rendering, the growable buffer, and sets of
 * output files committed all-or-nothing (comet/files.h). */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "comet/comet.h"
#include "comet/files.h"
#include "tests.h"

static void test_error_format(void **state)
{
    (void)state;
    comet_error err;
    char line[512];
    comet_error_set(&err, COMET_EINPUT, "gpt.yaml", 12, 7, "strategy.tp",
                    "%d does not divide heads (%d)", 6, 96);
    assert_string_equal(comet_error_format(&err, line, sizeof line),
                        "gpt.yaml:12:7: strategy.tp: 6 does not divide heads (96)");
    comet_error_set(&err, COMET_EINPUT, NULL, 0, 0, "--tp", "bad");
    assert_string_equal(comet_error_format(&err, line, sizeof line), "--tp: bad");
    comet_error_set(&err, COMET_EIO, "x.yaml", 0, 0, NULL, "cannot read");
    assert_string_equal(comet_error_format(&err, line, sizeof line), "x.yaml: cannot read");
    /* control characters are escaped: an error is always one line */
    comet_error_set(&err, COMET_EINPUT, "a\nb.yaml", 1, 2, "strategy.t\tp", "got \"1\n2\x1b[31m\"");
    assert_string_equal(comet_error_format(&err, line, sizeof line),
                        "a\\nb.yaml:1:2: strategy.t\\tp: got \"1\\n2\\x1b[31m\"");
    /* truncation never overruns */
    char tiny[8];
    comet_error_format(&err, tiny, sizeof tiny);
    assert_int_equal(strlen(tiny), 7);
}

static void test_buf(void **state)
{
    (void)state;
    comet_buf b;
    comet_buf_init(&b);
    for (int i = 0; i < 1000; i++)
        comet_buf_printf(&b, "%d,", i % 10);
    assert_int_equal(b.len, 2000);
    assert_memory_equal(b.data, "0,1,2,", 6);
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    comet_buf_printf(&b, "%s", big);
    assert_int_equal(b.len, 2000 + 1999);
    assert_int_equal(b.data[b.len], '\0');
    comet_buf_free(&b);
}

/* ---- sets of files ---------------------------------------------------------------- */

/* The names in dir, sorted, one per line. */
static void names_in(const char *dir, char *out, size_t cap)
{
    char *names[64];
    int n = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && n < 64)
            names[n++] = strdup(e->d_name);
    closedir(d);
    for (int i = 1; i < n; i++) /* insertion sort: a handful of names */
        for (int k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0; k--) {
            char *t = names[k];
            names[k] = names[k - 1];
            names[k - 1] = t;
        }
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        strncat(out, names[i], cap - strlen(out) - 1);
        strncat(out, "\n", cap - strlen(out) - 1);
        free(names[i]);
    }
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[512];
    comet_error err;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(comet_file_write(path, text, strlen(text), &err), COMET_OK);
}

static void expect_content(const char *dir, const char *name, const char *text)
{
    char path[512], got[256] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = '\0';
    fclose(f);
    assert_string_equal(got, text);
}

/* A set replacing a and b, creating c and removing d, in a fresh folder
 * holding a, b and d (content "old a" ...). */
static void begin_set(comet_files *set, const char *dir)
{
    put(dir, "a", "old a");
    put(dir, "b", "old b");
    put(dir, "d", "old d");
    comet_error err;
    const char *new_files[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, new_files[i]);
        FILE *f;
        assert_int_equal(comet_files_begin(set, path, &f, &err), COMET_OK);
        fprintf(f, "new %s", new_files[i]);
        assert_int_equal(comet_files_end(set, false, &err), COMET_OK);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/d", dir);
    assert_int_equal(comet_files_remove(set, path, &err), COMET_OK);
}

/* rename(2), except into a file named c: the disk is full there */
static int rename_failing_at_c(const char *from, const char *to)
{
    size_t n = strlen(to);
    if (n >= 2 && strcmp(to + n - 2, "/c") == 0) {
        errno = ENOSPC;
        return -1;
    }
    return rename(from, to);
}

/* A commit is all-or-nothing with respect to the earlier files too: the
 * third rename fails after two files were replaced, and both earlier
 * files come back, the removal does not happen, and no temporary or
 * backup is left. Without the failure the whole new set is in place. */
static void test_files_commit_restores_earlier(void **state)
{
    (void)state;
    char dir[] = "/tmp/comet-files-XXXXXX", names[1024], cmd[600];
    assert_non_null(mkdtemp(dir));
    comet_files set;
    comet_error err;
    comet_files_init(&set);
    begin_set(&set, dir);
    set.rename_into_place = rename_failing_at_c;
    assert_int_equal(comet_files_commit(&set, &err), COMET_EIO);
    char want[600];
    snprintf(want, sizeof want, "%s/c: cannot write: %s", dir, strerror(ENOSPC));
    char line[700];
    assert_string_equal(comet_error_format(&err, line, sizeof line), want);
    names_in(dir, names, sizeof names);
    assert_string_equal(names, "a\nb\nd\n");
    expect_content(dir, "a", "old a");
    expect_content(dir, "b", "old b");
    expect_content(dir, "d", "old d");
    assert_int_equal(set.n, 0);

    comet_files_init(&set);
    begin_set(&set, dir);
    assert_int_equal(comet_files_commit(&set, &err), COMET_OK);
    names_in(dir, names, sizeof names);
    assert_string_equal(names, "a\nb\nc\n");
    expect_content(dir, "a", "new a");
    expect_content(dir, "b", "new b");
    expect_content(dir, "c", "new c");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* A destination that is a directory is found before anything moves: the
 * earlier files are untouched and every temporary is removed. */
static void test_files_commit_checks_first(void **state)
{
    (void)state;
    char dir[] = "/tmp/comet-files-XXXXXX", names[1024], cmd[600], path[512], line[700];
    assert_non_null(mkdtemp(dir));
    comet_files set;
    comet_error err;
    comet_files_init(&set);
    begin_set(&set, dir);
    snprintf(path, sizeof path, "%s/c", dir);
    assert_int_equal(mkdir(path, 0777), 0);
    assert_int_equal(comet_file_check_destination(path, &err), COMET_EINPUT);
    assert_int_equal(comet_files_commit(&set, &err), COMET_EINPUT);
    char want[600];
    snprintf(want, sizeof want, "%s: cannot write: %s", path, strerror(EISDIR));
    assert_string_equal(comet_error_format(&err, line, sizeof line), want);
    names_in(dir, names, sizeof names);
    assert_string_equal(names, "a\nb\nc\nd\n");
    expect_content(dir, "a", "old a");
    expect_content(dir, "d", "old d");
    snprintf(path, sizeof path, "%s/a", dir);
    assert_int_equal(comet_file_check_destination(path, &err), COMET_OK);
    snprintf(path, sizeof path, "%s/none", dir);
    assert_int_equal(comet_file_check_destination(path, &err), COMET_OK);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

void suite_core(test_tally *t)
{
    const struct CMUnitTest core[] = {
        cmocka_unit_test(test_error_format),
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_files_commit_restores_earlier),
        cmocka_unit_test(test_files_commit_checks_first),
    };
    RUN_GROUP(t, core);
}
