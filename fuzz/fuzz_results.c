/* libFuzzer target for saved sweep results (comet report): any bytes, read
 * as results.csv or results.jsonl, must give rows or a stated problem and a
 * whole report page, never a crash, a leak or undefined behaviour. The
 * first byte picks the name (and so the format), the rest is the file.
 * Built by `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comet/report.h"
#include "comet/results.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *name = data[0] & 1 ? "fuzz.jsonl" : "fuzz.csv";
    comet_results *r = malloc(sizeof *r);
    if (!r)
        return 0;
    comet_error err;
    comet_error_clear(&err);
    if (comet_results_parse((const char *)data + 1, size - 1, name, r, &err) == COMET_OK) {
        if (!r->problem[0] && r->n_rows == 0)
            abort(); /* no rows must come with a reason */
        comet_page *p = comet_page_new("fuzz");
        comet_report_page_sweep(p, r, NULL);
        comet_buf html;
        comet_buf_init(&html);
        if (p)
            comet_page_html(&html, p);
        if (p && !html.failed && (!html.data || !strstr(html.data, "</html>")))
            abort(); /* the page is always whole */
        comet_buf_free(&html);
        comet_page_free(p);
        comet_results_free(r);
    }
    free(r);
    return 0;
}
