/* Golden files for the tests: text a test produces is compared with
 * tests/golden/NAME, and a difference is shown at the first byte that
 * differs. COMET_UPDATE_GOLDEN=1 rewrites the file instead, after a
 * deliberate change (review the diff before committing it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

void test_golden(const char *name, const char *text)
{
    char path[512];
    const char *dir = getenv("COMET_TESTS_DIR");
    snprintf(path, sizeof path, "%s/golden/%s", dir ? dir : "tests", name);
    if (getenv("COMET_UPDATE_GOLDEN")) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        return;
    }
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("missing golden file %s (COMET_UPDATE_GOLDEN=1 writes it)", path);
    static char want[1 << 16];
    size_t n = fread(want, 1, sizeof want - 1, f);
    want[n] = '\0';
    fclose(f);
    if (strcmp(want, text) != 0) {
        size_t i = 0;
        while (want[i] && want[i] == text[i])
            i++;
        fail_msg("%s differs from the golden file at byte %zu: got \"%.60s\", want \"%.60s\"",
                 name, i, text + i, want + i);
    }
}
