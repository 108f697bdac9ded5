/* Core utilities: error rendering and the growable buffer. */
#include <string.h>

#include "comet/comet.h"
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

void suite_core(test_tally *t)
{
    const struct CMUnitTest core[] = {
        cmocka_unit_test(test_error_format),
        cmocka_unit_test(test_buf),
    };
    RUN_GROUP(t, core);
}
