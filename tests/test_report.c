/* Reports: readable quantities, golden SVG of small charts, element counts
 * that follow the data, saved sweep results read back from CSV and JSON
 * lines alike, a readable page for each kind of bad input (empty file,
 * older version, one point, nothing feasible), the simulated timeline, and
 * a real browser: headless Chromium loads each kind of report (estimate,
 * search, simulate, sweep, study) without console errors, sorts a table
 * by a heading's clicks, filters rows, follows a Pareto point to its row
 * and drill-down, and leaves a screenshot of each.
 * Set COMET_UPDATE_GOLDEN=1 to rewrite tests/golden after a deliberate
 * change to the drawing. */
#define _XOPEN_SOURCE 700 /* mkdtemp, realpath */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "comet/chart.h"
#include "comet/comet.h"
#include "comet/page.h"
#include "comet/results.h"
#include "comet/simulate.h"
#include "comet/sweep.h"
#include "tests.h"

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_quantities(void **state)
{
    (void)state;
    char q[64];
    assert_string_equal(comet_format_quantity(1.234, COMET_QTY_SECONDS, 0, q, sizeof q), "1.23 s");
    assert_string_equal(comet_format_quantity(0.0456, COMET_QTY_SECONDS, 0, q, sizeof q),
                        "45.6 ms");
    assert_string_equal(comet_format_quantity(45.6 * 1073741824.0, COMET_QTY_BYTES, 0, q, sizeof q),
                        "45.6 GiB");
    assert_string_equal(comet_format_quantity(312e12, COMET_QTY_FLOP_PER_S, 0, q, sizeof q),
                        "312 TFLOP/s");
    assert_string_equal(comet_format_quantity(1.79e6, COMET_QTY_MONEY, 0, q, sizeof q), "$1.79 M");
    assert_string_equal(comet_format_quantity(0.618, COMET_QTY_FRACTION, 0, q, sizeof q), "61.8 %");
    assert_string_equal(comet_format_quantity(1.2, COMET_QTY_RATIO, 0, q, sizeof q), "1.20×");
    assert_string_equal(comet_format_quantity(8, COMET_QTY_NONE, 0, q, sizeof q), "8");
    assert_string_equal(comet_format_quantity(300e9, COMET_QTY_BYTES_PER_S, 0, q, sizeof q),
                        "300 GB/s");
    /* the prefix follows the reference, so ticks of one axis agree */
    assert_string_equal(comet_format_quantity(0.5, COMET_QTY_SECONDS, 20.0, q, sizeof q), "0.5 s");
    assert_string_equal(comet_format_quantity(NAN, COMET_QTY_SECONDS, 0, q, sizeof q), "–");
    assert_true(comet_unit_scale(COMET_QTY_BYTES, 80.0 * 1073741824.0) == 1073741824.0);
    /* settings read as people wrote them: binary or decimal sizes, no zeros */
    assert_string_equal(comet_format_setting(141e9, COMET_QTY_BYTES, q, sizeof q), "141 GB");
    assert_string_equal(comet_format_setting(80.0 * 1073741824.0, COMET_QTY_BYTES, q, sizeof q),
                        "80 GiB");
    assert_string_equal(comet_format_setting(1099511627776.0, COMET_QTY_BYTES, q, sizeof q),
                        "1 TiB");
    assert_string_equal(comet_format_setting(4e12, COMET_QTY_BYTES_PER_S, q, sizeof q), "4 TB/s");
    assert_string_equal(comet_format_setting(6.25e9, COMET_QTY_BYTES_PER_S, q, sizeof q),
                        "6.25 GB/s");
    assert_string_equal(comet_format_setting(624e12, COMET_QTY_FLOP_PER_S, q, sizeof q),
                        "624 TFLOP/s");
}

/* ---- golden SVG ------------------------------------------------------------ */

static void stacked_fixture(comet_chart *c)
{
    comet_chart_init(c, COMET_CHART_STACKED, "mem", "Memory per NPU");
    snprintf(c->x_label, sizeof c->x_label, "memory per NPU");
    c->x_unit = COMET_QTY_BYTES;
    comet_chart_series(c, "weights");
    comet_chart_series(c, "optimizer");
    comet_chart_series(c, "activations");
    int hbm = comet_chart_cat(c, "HBM");
    int exp = comet_chart_cat(c, "expansion <CXL>");
    double gib = 1073741824.0;
    comet_chart_set(c, hbm, 0, 10 * gib);
    comet_chart_set(c, hbm, 1, 30 * gib);
    comet_chart_set(c, hbm, 2, 25 * gib);
    comet_chart_set(c, exp, 1, 120 * gib);
    c->limits[hbm] = 80 * gib;
    c->limits[exp] = 256 * gib;
}

static void test_stacked_golden(void **state)
{
    (void)state;
    comet_chart c;
    stacked_fixture(&c);
    comet_buf b;
    comet_buf_init(&b);
    comet_chart_svg(&b, &c, true);
    /* four non-zero segments, two rows, two capacity marks, escaped text */
    assert_int_equal(count(b.data, "class=\"bar\""), 4);
    assert_int_equal(count(b.data, "class=\"bar-row\""), 2);
    assert_int_equal(count(b.data, "class=\"limit\""), 2);
    assert_non_null(strstr(b.data, "expansion &lt;CXL&gt;"));
    assert_non_null(strstr(b.data, "memory per NPU (GiB)"));
    assert_non_null(strstr(b.data, "65.0 GiB")); /* HBM total */
    test_golden("stacked.svg", b.data);
    b.len = 0;
    comet_chart_csv(&b, &c);
    assert_string_equal(b.data, "schema_version,category,weights (B),optimizer (B),"
                                "activations (B),limit (B)\n"
                                "1,HBM,1.073741824e+10,3.221225472e+10,2.68435456e+10,"
                                "8.589934592e+10\n"
                                "1,expansion <CXL>,,1.288490189e+11,,2.748779069e+11\n");
    comet_buf_free(&b);
    comet_chart_free(&c);
}

static void test_heatmap_scatter_gantt_golden(void **state)
{
    (void)state;
    comet_chart h;
    comet_chart_init(&h, COMET_CHART_HEATMAP, "hm", "Best throughput");
    snprintf(h.x_label, sizeof h.x_label, "nvlink");
    snprintf(h.y_label, sizeof h.y_label, "hbm");
    snprintf(h.value_label, sizeof h.value_label, "tokens/s");
    h.value_unit = COMET_QTY_TOKENS_PER_S;
    for (int x = 0; x < 3; x++) {
        char name[16];
        snprintf(name, sizeof name, "%d GB/s", 150 << x);
        comet_chart_series(&h, name);
    }
    comet_chart_cat(&h, "40 GiB");
    comet_chart_cat(&h, "80 GiB");
    comet_chart_set(&h, 0, 1, 1000);
    comet_chart_set(&h, 0, 2, 1500);
    comet_chart_set(&h, 1, 0, 1200);
    comet_chart_set(&h, 1, 1, 1800);
    comet_chart_set(&h, 1, 2, 2000);
    comet_buf b;
    comet_buf_init(&b);
    comet_chart_svg(&b, &h, true);
    assert_int_equal(count(b.data, "class=\"cell\""), 5);
    assert_int_equal(count(b.data, "class=\"cell infeasible\""), 1);
    assert_non_null(strstr(b.data, "2.00 k tokens/s"));
    test_golden("heatmap.svg", b.data);

    comet_chart s;
    comet_chart_init(&s, COMET_CHART_SCATTER, "sc", "Step time against cost");
    s.x_unit = COMET_QTY_MONEY;
    s.y_unit = COMET_QTY_SECONDS;
    snprintf(s.x_label, sizeof s.x_label, "cost");
    snprintf(s.y_label, sizeof s.y_label, "step time");
    comet_chart_series(&s, "design");
    comet_chart_series(&s, "front");
    comet_chart_point_add(&s, 1e6, 10.0, 0, 1, "a");
    comet_chart_point_add(&s, 2e6, 6.0, 0, 1, "b");
    comet_chart_point_add(&s, 2.5e6, 8.0, 0, 0, "c");
    comet_chart_point_add(&s, 3e6, 5.0, 0, 1, "d");
    b.len = 0;
    comet_chart_svg(&b, &s, true);
    assert_int_equal(count(b.data, "class=\"point"), 4);
    assert_int_equal(count(b.data, "class=\"point front\""), 3);
    assert_non_null(strstr(b.data, "cost ($M)"));
    test_golden("scatter.svg", b.data);

    comet_chart g;
    comet_chart_init(&g, COMET_CHART_GANTT, "tl", "Timeline");
    g.x_unit = COMET_QTY_SECONDS;
    snprintf(g.x_label, sizeof g.x_label, "time");
    comet_chart_series(&g, "forward");
    comet_chart_series(&g, "backward");
    comet_chart_cat(&g, "stage 0 compute");
    comet_chart_cat(&g, "stage 1 compute");
    comet_chart_point_add(&g, 0.0, 0.010, 0, 0, "microbatch 0");
    comet_chart_point_add(&g, 0.010, 0.020, 1, 0, "microbatch 0");
    comet_chart_point_add(&g, 0.020, 0.040, 1, 1, "microbatch 0");
    comet_chart_point_add(&g, 0.040, 0.060, 0, 1, "microbatch 0");
    b.len = 0;
    comet_chart_svg(&b, &g, true);
    assert_int_equal(count(b.data, "class=\"span\""), 4);
    assert_int_equal(count(b.data, "class=\"lane\""), 2);
    assert_non_null(strstr(b.data, "time (ms)"));
    test_golden("gantt.svg", b.data);
    comet_buf_free(&b);
    comet_chart_free(&h);
    comet_chart_free(&s);
    comet_chart_free(&g);
}

/* True when text is well-formed UTF-8 (what an SVG file must be). */
static bool valid_utf8(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        int more = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2
                 : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (more < 0)
            return false;
        p++;
        for (int i = 0; i < more; i++, p++)
            if ((*p & 0xC0) != 0x80)
                return false;
    }
    return true;
}

/* Long labels are cut on characters, never inside one: strategy labels
 * hold "·" (two bytes), and an SVG file must be valid UTF-8. */
static void test_labels_cut_on_characters(void **state)
{
    (void)state;
    for (int shift = 0; shift < 4; shift++) {
        comet_chart c;
        comet_chart_init(&c, COMET_CHART_STACKED, "cut", "Cut labels");
        comet_chart_series(&c, "forward");
        char label[COMET_CHART_NAME_LEN];
        snprintf(label, sizeof label, "%.*stp 4 · pp 2 · dp 8 · mb 2 · v 24 · sp · zero 3 · flash",
                 shift, "xxx");
        comet_chart_set(&c, comet_chart_cat(&c, label), 0, 1.0);
        comet_buf b;
        comet_buf_init(&b);
        comet_chart_svg(&b, &c, true);
        assert_true(valid_utf8(b.data));
        assert_non_null(strstr(b.data, "…"));
        comet_buf_free(&b);
        comet_chart_free(&c);
    }
}

static void test_page_escapes_and_sorts(void **state)
{
    (void)state;
    comet_page *p = comet_page_new("a <b> & \"c\"");
    assert_non_null(p);
    comet_page_section(p, "</section><script>alert(1)</script>");
    comet_page_fact(p, "k", "%d", 42);
    comet_table *t = comet_page_table(p, "t", "Table");
    comet_table_col(t, "name", COMET_QTY_NONE);
    comet_table_col(t, "time", COMET_QTY_SECONDS);
    long r = comet_table_row(t);
    comet_table_text(t, r, 0, "x,y");
    comet_table_num(t, r, 1, 0.25);
    comet_table_drill_add(t, r, "time", "compute", 0.2, COMET_QTY_SECONDS);
    comet_table_drill_add(t, r, "time", "comm", 0.05, COMET_QTY_SECONDS);
    long r2 = comet_table_row(t); /* a row without a drill-down */
    comet_table_text(t, r2, 0, "z");
    /* a scatter point linked to row r, its tooltip with the exact values */
    comet_chart *c = comet_page_chart(p, COMET_CHART_SCATTER, "sc", "Scatter");
    c->x_unit = COMET_QTY_MONEY;
    c->y_unit = COMET_QTY_SECONDS;
    comet_chart_series(c, "design");
    comet_chart_point_add(c, 1234567.0, 13.62231106, 0, 0, "p");
    comet_chart_point_link(c, "t", r);
    comet_chart_point_add(c, 2e6, 2.0, 0, 0, "q");
    comet_buf b;
    comet_buf_init(&b);
    comet_page_html(&b, p);
    assert_non_null(strstr(b.data, "<tr id=\"row-t-0\" data-drill=\"1\">"));
    assert_non_null(strstr(b.data, "<tr id=\"row-t-1\">"));
    assert_int_equal(count(b.data, "<template id=\"drill-t-"), 1);
    const char *drill = strstr(b.data, "<template id=\"drill-t-0\">");
    assert_non_null(drill);
    /* the group's bars against its largest value: 0.05 of 0.2 is 25 % */
    assert_non_null(strstr(drill, "<caption>time</caption>"));
    assert_non_null(strstr(drill, "<td data-v=\"0.05\">50.0 ms</td><td class=\"mini\">"
                                  "<span style=\"width:25.0%\">"));
    assert_int_equal(count(b.data, "data-link=\"row-t-0\""), 1);
    assert_int_equal(count(b.data, "data-link=\"row-"), 1); /* q has no row */
    assert_non_null(strstr(b.data, "<title>p: $1.23 M ($1.234567 M), 13.6 s (13.62231106 s)"
                                   "</title>"));
    assert_non_null(strstr(b.data, "<title>q: $2.00 M, 2.00 s</title>"));
    assert_null(strstr(b.data, "<script>alert"));
    assert_non_null(strstr(b.data, "a &lt;b&gt; &amp; &quot;c&quot;"));
    assert_non_null(strstr(b.data, "<td data-v=\"0.25\">250 ms</td>"));
    assert_int_equal(count(b.data, "<script>"), 1);
    assert_non_null(strstr(b.data, "</html>\n"));
    b.len = 0;
    comet_table_csv(&b, t);
    assert_string_equal(b.data, "schema_version,name,time (s)\n1,\"x,y\",0.25\n1,z,\n");
    comet_buf_free(&b);
    comet_page_free(p);
}

/* ---- saved results --------------------------------------------------------- */

/* The study's CSV and JSON lines, as comet sweep writes them. */
static void sweep_files(const char *text, comet_buf *csv, comet_buf *jsonl)
{
    static comet_study st;
    comet_error err;
    assert_int_equal(comet_study_read_text(text, strlen(text), "s.yaml", &st, &err), COMET_OK);
    comet_sweep_csv_header(csv, &st);
    for (uint64_t i = 0; i < comet_study_points(&st); i++) {
        comet_sweep_row row;
        assert_int_equal(comet_sweep_point(&st, i, &row, &err), COMET_OK);
        comet_sweep_csv_row(csv, &st, &row);
        comet_sweep_jsonl_row(jsonl, &st, &row);
    }
}

static comet_page *page_of(const char *text, const char *name, comet_results *res)
{
    comet_error err;
    assert_int_equal(comet_results_parse(text, strlen(text), name, res, &err), COMET_OK);
    comet_page *p = comet_page_new("sweep");
    comet_report_page_sweep(p, res, NULL);
    return p;
}

static void test_results_csv_and_jsonl_agree(void **state)
{
    (void)state;
    comet_buf csv, jsonl;
    comet_buf_init(&csv);
    comet_buf_init(&jsonl);
    sweep_files(test_small_study, &csv, &jsonl);
    static comet_results a, b;
    comet_error err;
    assert_int_equal(comet_results_parse(csv.data, csv.len, "r.csv", &a, &err), COMET_OK);
    assert_int_equal(comet_results_parse(jsonl.data, jsonl.len, "r.jsonl", &b, &err), COMET_OK);
    assert_string_equal(a.problem, "");
    assert_string_equal(b.problem, "");
    assert_int_equal(a.n_rows, 6);
    assert_int_equal(b.n_rows, 6);
    assert_int_equal(a.skipped, 0);
    assert_int_equal(a.study.n_axes, 3); /* the topology axis has one value */
    assert_string_equal(a.study.axes[1].name, "network.infiniband.bandwidth");
    assert_int_equal(a.study.axes[1].kind, COMET_AXIS_DIM_BANDWIDTH);
    assert_int_equal(a.study.axes[1].n, 3);
    assert_string_equal(b.study.axes[1].name, "network.infiniband.bandwidth");
    for (size_t i = 0; i < 6; i++) {
        const comet_results_row *x = &a.rows[i], *y = &b.rows[i];
        assert_int_equal(x->index, i);
        assert_int_equal(x->status, y->status);
        assert_close(x->result.step_time, y->result.step_time, 1e-9);
        assert_close(x->result.mem_total[COMET_TIER_HBM], y->result.mem_total[COMET_TIER_HBM],
                     1e-9);
        assert_int_equal(x->strategy.tp, y->strategy.tp);
        assert_int_equal(x->strategy.microbatch, y->strategy.microbatch);
        assert_int_equal(x->strategy.recompute, y->strategy.recompute);
        assert_true(x->result.step_time > 0.0);
    }
    comet_page *p = comet_page_new("sweep");
    comet_report_page_sweep(p, &a, NULL);
    comet_buf html;
    comet_buf_init(&html);
    comet_page_html(&html, p);
    /* one heatmap of 2 x 3 cells, a point per design, a bar per axis */
    assert_int_equal(count(html.data, "class=\"chart chart-heatmap\""), 1);
    assert_int_equal(count(html.data, "<g class=\"cell"), 6);
    assert_int_equal(count(html.data, "<circle class=\"point"), 6);
    assert_int_equal(count(html.data, "class=\"chart chart-bars\""), 1);
    assert_int_equal(comet_page_n_notices(p), 0);
    /* the heatmap's axes by choice: bandwidth across, HBM down */
    comet_page *chosen = comet_page_new("sweep");
    comet_report_page_sweep(chosen, &a, (const int[2]){1, 0});
    const comet_chart *hm = comet_page_chart_at(chosen, 0);
    assert_int_equal(hm->kind, COMET_CHART_HEATMAP);
    assert_string_equal(hm->x_label, "network.infiniband.bandwidth");
    assert_int_equal(hm->n_series, 3);
    assert_int_equal(hm->n_cats, 2);
    comet_page_free(chosen);
    comet_buf_free(&html);
    comet_page_free(p);
    comet_results_free(&a);
    comet_results_free(&b);
    comet_buf_free(&csv);
    comet_buf_free(&jsonl);
}

/* An npus axis and the design's NPU count share the column name "npus":
 * both are read, the axis as an axis. */
static void test_results_with_an_npus_axis(void **state)
{
    (void)state;
    comet_buf csv, jsonl;
    comet_buf_init(&csv);
    comet_buf_init(&jsonl);
    sweep_files("study:\n  name: n\n  models: [megatron-22b]\n  system: a100-80g-selene\n"
                "  global_batch: 32\n  axes:\n    npus: [16, 32]\n"
                "    hbm_capacity: [\"40 GiB\", \"80 GiB\"]\n  search: {max_microbatch: 2}\n",
                &csv, &jsonl);
    static comet_results r;
    comet_error err;
    assert_int_equal(comet_results_parse(csv.data, csv.len, "n.csv", &r, &err), COMET_OK);
    assert_string_equal(r.problem, "");
    assert_int_equal(r.study.n_axes, 2);
    assert_int_equal(r.study.axes[0].kind, COMET_AXIS_NPUS);
    assert_int_equal(r.n_rows, 4);
    assert_int_equal(r.rows[2].npus, 32);
    char label[160];
    assert_string_equal(comet_results_design_label(&r, &r.rows[2], label, sizeof label),
                        "NPUs 32 · HBM 40 GiB");
    comet_results_free(&r);
    comet_buf_free(&csv);
    comet_buf_free(&jsonl);
}

/* An index or NPU count that is not a whole number from 0 to 2^53 (1e300,
 * -1, 8.5, nan) leaves its line out; converting one to an integer was
 * undefined behaviour (found by fuzz/fuzz_results.c). */
static void test_results_out_of_range_counts(void **state)
{
    (void)state;
    static const char csv[] = /* the header an older comet wrote, still read */
        "index,status,design_cost,hbm_capacity,npus,model,step_time_s,tokens_per_s,"
        "hbm_total_bytes\n"
        "0,ok,100,4e10,8,m,1,1,1\n"
        "1e300,ok,100,4e10,8,m,1,1,1\n"
        "2,ok,100,4e10,1e118,m,1,1,1\n"
        "-1,ok,100,4e10,8,m,1,1,1\n"
        "4,ok,100,4e10,8.5,m,1,1,1\n"
        "5,ok,100,4e10,nan,m,1,1,1\n"
        "9007199254740992,ok,100,4e10,16,m,1,1,1\n";
    static const char jsonl[] =
        "{\"index\": 0, \"status\": \"ok\", \"design_cost\": 100, \"npus\": 8, "
        "\"model\": \"m\", \"axes\": {\"hbm_capacity\": 4e10}}\n"
        "{\"index\": 1e300, \"status\": \"ok\", \"design_cost\": 100, \"npus\": 8, "
        "\"model\": \"m\", \"axes\": {\"hbm_capacity\": 4e10}}\n"
        "{\"index\": 2, \"status\": \"ok\", \"design_cost\": 100, \"npus\": 1e118, "
        "\"model\": \"m\", \"axes\": {\"hbm_capacity\": 4e10}}\n";
    static comet_results r;
    comet_error err;
    assert_int_equal(comet_results_parse(csv, strlen(csv), "c.csv", &r, &err), COMET_OK);
    assert_int_equal(r.n_rows, 2);
    assert_int_equal(r.skipped, 5);
    assert_non_null(strstr(r.first_skipped, "line 3"));
    assert_int_equal(r.rows[0].index, 0);
    assert_int_equal(r.rows[0].npus, 8);
    assert_int_equal(r.rows[1].index, 9007199254740992ull);
    assert_int_equal(r.rows[1].npus, 16);
    comet_results_free(&r);
    assert_int_equal(comet_results_parse(jsonl, strlen(jsonl), "j.jsonl", &r, &err), COMET_OK);
    assert_int_equal(r.n_rows, 1);
    assert_int_equal(r.skipped, 2);
    assert_non_null(strstr(r.first_skipped, "line 2"));
    assert_int_equal(r.rows[0].npus, 8);
    comet_results_free(&r);
}

/* Each bad input gives a page that says what is missing; never an error. */
static void expect_notice(const char *text, const char *name, const char *says)
{
    static comet_results res;
    comet_page *p = page_of(text, name, &res);
    comet_buf html;
    comet_buf_init(&html);
    comet_page_html(&html, p);
    if (!strstr(html.data, says))
        fail_msg("%s: the report does not say \"%s\"", name, says);
    assert_true(comet_page_n_notices(p) >= 1);
    assert_non_null(strstr(html.data, "</html>\n"));
    comet_buf_free(&html);
    comet_page_free(p);
    comet_results_free(&res);
}

static void test_bad_results_make_readable_pages(void **state)
{
    (void)state;
    expect_notice("", "empty.csv", "empty.csv is empty");
    expect_notice("\n\n", "blank.jsonl", "blank.jsonl is empty");
    /* an older results file: no status or design cost columns */
    expect_notice("index,hbm_capacity,npus,model,step_time_s\n0,1,16,m,2.0\n", "old.csv",
                  "has no column status, design_cost_usd");
    expect_notice("{\"index\": 0, \"step_time_s\": 1}\n", "old.jsonl", "older comet");
    expect_notice("\x01\x02\x00\x03", "bin.csv", "");

    comet_buf csv, jsonl;
    comet_buf_init(&csv);
    comet_buf_init(&jsonl);
    sweep_files("study:\n  name: one\n  models: [megatron-22b]\n  system: a100-80g-selene\n"
                "  npus: 16\n  global_batch: 16\n",
                &csv, &jsonl);
    expect_notice(csv.data, "one.csv", "single design point");
    expect_notice(csv.data, "one.csv", "A heatmap needs two swept axes");
    csv.len = jsonl.len = 0;
    /* 40 GiB of HBM and a 405B model on 16 NPUs: nothing fits */
    sweep_files("study:\n  name: none\n  models: [llama3-405b]\n  system: a100-80g-selene\n"
                "  npus: 16\n  global_batch: 16\n  axes:\n    hbm_capacity: [\"16 GiB\", \"32 GiB\"]\n"
                "  search: {offload: false}\n",
                &csv, &jsonl);
    expect_notice(csv.data, "none.csv", "None of the 2 designs of llama3-405b");
    expect_notice(jsonl.data, "none.jsonl", "None of the 2 designs of llama3-405b");
    /* the axis column "hbm_capacity_bytes" reads back as the axis
     * hbm_capacity; a line of a newer schema_version is left out, and says so */
    static comet_results res;
    comet_error err;
    assert_true(strncmp(csv.data, "schema_version,index,status,design_cost_usd,"
                                  "hbm_capacity_bytes,npus,", 68) == 0);
    assert_int_equal(comet_results_parse(csv.data, csv.len, "none.csv", &res, &err), COMET_OK);
    assert_int_equal(res.study.n_axes, 1);
    assert_string_equal(res.study.axes[0].name, "hbm_capacity");
    assert_int_equal(res.study.axes[0].kind, COMET_AXIS_HBM_CAPACITY);
    assert_int_equal(res.n_rows, 2);
    comet_results_free(&res);
    char *second = strchr(csv.data, '\n') + 1;
    assert_true(second[0] == '1' && second[1] == ',');
    second[0] = '9';
    expect_notice(csv.data, "newer.csv", "schema_version is not one this comet reads");
    assert_true(strncmp(jsonl.data, "{\"schema_version\": 1, ", 22) == 0);
    jsonl.data[19] = '9';
    expect_notice(jsonl.data, "newer.jsonl", "schema_version is not one this comet reads");
    comet_buf_free(&csv);
    comet_buf_free(&jsonl);
}

/* ---- the simulated timeline ------------------------------------------------ */

static void test_timeline_adds_up(void **state)
{
    (void)state;
    comet_model m;
    comet_system sys;
    comet_error err;
    assert_int_equal(comet_preset_model("megatron-22b", &m, &err), COMET_OK);
    assert_int_equal(comet_preset_system("a100-80g-selene", &sys, &err), COMET_OK);
    comet_strategy s;
    comet_strategy_defaults(&s);
    s.tp = 8;
    s.pp = 4;
    s.microbatch = 1;
    s.global_batch = 8;
    comet_sim_timeline tl;
    comet_sim_step_options o = {.timeline = &tl};
    static comet_sim_step_result r;
    assert_int_equal(comet_sim_step(&m, &sys, &s, &o, &r, &err), COMET_OK);
    assert_int_equal(tl.stages, 4);
    for (int stage = 0; stage < 4; stage++) {
        double busy = 0.0;
        int fwd = 0, bwd = 0;
        for (size_t i = 0; i < tl.n; i++) {
            const comet_sim_span *sp = &tl.spans[i];
            if (sp->stage != stage || sp->stream != 0)
                continue;
            busy += sp->end - sp->start;
            fwd += strcmp(tl.kind_names[sp->kind], "forward") == 0;
            bwd += strcmp(tl.kind_names[sp->kind], "backward") == 0;
        }
        /* one forward and one backward span per microbatch on every stage,
         * covering exactly the time the compute stream was busy */
        assert_int_equal(fwd, 8);
        assert_int_equal(bwd, 8);
        assert_close(busy, r.compute_stream_busy[stage], 1e-9);
    }
    comet_page *p = comet_page_new("sim");
    comet_report_page_simulate(p, &m, &sys, &s, &r, &tl, NULL);
    const comet_chart *gantt = comet_page_chart_at(p, 1);
    assert_non_null(gantt);
    assert_int_equal(gantt->kind, COMET_CHART_GANTT);
    assert_int_equal(gantt->n_points, tl.n);
    comet_page_free(p);
    comet_sim_timeline_free(&tl);
}

/* ---- a real browser -------------------------------------------------------- */

static const char *chromium(void)
{
    const char *env = getenv("COMET_CHROMIUM");
    static const char *const paths[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
    if (env && access(env, X_OK) == 0)
        return env;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (access(paths[i], X_OK) == 0)
            return paths[i];
    return NULL;
}

static char *slurp_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    comet_buf b;
    comet_buf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        comet_buf_append(&b, chunk, n);
    fclose(f);
    return b.data;
}

/* The numbers (data-v) in column `col` of the page's first sortable table,
 * row by row as the DOM holds them; NAN where a cell has none. */
static int column_values(const char *html, int col, double *out, int cap)
{
    const char *t = strstr(html, "<table class=\"sortable\"");
    const char *end = t ? strstr(t, "</tbody>") : NULL;
    if (!t || !end || !(t = strstr(t, "<tbody>")))
        return 0;
    int n = 0;
    for (const char *r = t; n < cap && (r = strstr(r + 1, "<tr")) && r < end;) {
        const char *c = r;
        for (int k = 0; k <= col && c; k++)
            c = strstr(c + 1, "<td");
        const char *next = strstr(r + 1, "<tr");
        if (!c || (next && c > next) || c > end)
            return -1; /* a row without that column */
        const char *v = strstr(c, "data-v=\"");
        out[n++] = v && v < strchr(c, '>') ? strtod(v + 8, NULL) : NAN;
    }
    return n;
}

/* Whether the numbers are in order (ascending, or descending when `down`),
 * blanks last; *distinct counts the changes, so a constant column shows. */
static bool in_order(const double *v, int n, bool down, int *distinct)
{
    *distinct = 0;
    for (int i = 1; i < n; i++) {
        if (isnan(v[i]))
            continue;
        if (isnan(v[i - 1]) || (down ? v[i] > v[i - 1] : v[i] < v[i - 1]))
            return false;
        *distinct += v[i] != v[i - 1];
    }
    return true;
}

typedef struct report_kind {
    const char *name;     /* the screenshot's name, and the report's */
    const char *command;  /* run in the scratch folder with the binary for %s */
    const char *page;     /* the report it writes */
    const char *fragment; /* what a reader clicks (html.c's script reads it) */
    int sort_col;         /* the column checked in order after the clicks, -1: no table */
    bool down;            /* clicked twice: descending */
} report_kind;

#define JOB "--model megatron-22b --system a100-80g-selene --global-batch 16"
static const report_kind report_kinds[] = {
    {"estimate", "%s estimate " JOB " --tp 8 --pp 2 --dp 1 --report estimate.html",
     "estimate.html", "", -1, false},
    {"search", "%s search " JOB " --npus 16 --top 12 -j 1 --report search.html", "search.html",
     "sort=11&sort=11", 11, true},
    {"simulate", "%s simulate " JOB " --tp 2 --pp 4 --dp 2 --flows --report simulate.html",
     "simulate.html", "sort=2", 2, false},
    {"sweep", "%s sweep study.yaml -o sweep --quiet -j 1 --report sweep.html", "sweep.html",
     "point=0&filter=40%20GiB&sort=5&sort=5", 5, true},
    {"study", "%s study study.yaml -o study --quiet -j 1", "study/report.html", "sort=8", 8,
     false},
    /* the sweep's results again, through comet report: the first point's
     * row is picked, then a filter hides it, which closes its drill-down */
    {"sweep-filtered", "%s report sweep/results.csv -o sweep-filtered.html",
     "sweep-filtered.html", "point=0&filter=80%20GiB", -1, false},
};

/* One Chromium launch per kind of report: the page's DOM after its script
 * ran and the clicks of the URL's fragment, and a screenshot kept under
 * the binary's build folder (build/report-screenshots/KIND.png, CI keeps
 * it as an artefact). */
static void test_browser_explores_each_report(void **state)
{
    (void)state;
    if (getenv("COMET_SANITIZED")) {
        /* what it checks is the page's script; the release run drives it,
         * and the other report tests run the same C under the sanitizers */
        TEST_SKIP("the browser test runs in the release test run only");
    }
    const char *browser = chromium();
    if (!browser) {
        TEST_SKIP("chromium not installed: the browser test needs /usr/bin/chromium "
                  "(Debian package chromium; .ci/run installs it)");
    }
    char dir[] = "/tmp/comet-report-XXXXXX", bin[4096], shots[4200], cmd[16384], path[4400];
    assert_non_null(mkdtemp(dir));
    const char *b = getenv("COMET_BIN");
    assert_non_null(realpath(b ? b : "build/comet", bin));
    snprintf(shots, sizeof shots, "%s", bin);
    *strrchr(shots, '/') = '\0';
    strcat(shots, "/report-screenshots");
    mkdir(shots, 0755);
    snprintf(path, sizeof path, "%s/study.yaml", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(test_small_study, f);
    fclose(f);
    /* headless, offline, no first-run work: the flags the machine notes give */
    const char *flags = "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                        "--disable-background-networking --disable-component-update "
                        "--disable-sync --enable-logging=stderr --v=0 --hide-scrollbars "
                        "--window-size=900,3000";
    for (size_t k = 0; k < sizeof report_kinds / sizeof report_kinds[0]; k++) {
        const report_kind *rk = &report_kinds[k];
        char run[8192];
        snprintf(run, sizeof run, rk->command, bin);
        snprintf(cmd, sizeof cmd, "cd %s && %s >/dev/null 2>&1", dir, run);
        if (system(cmd) != 0)
            fail_msg("%s: the report command failed: %s", rk->name, run);
        snprintf(cmd, sizeof cmd,
                 "cd %s && timeout 120 %s %s --user-data-dir=%s/profile --dump-dom "
                 "--screenshot=%s/%s.png 'file://%s/%s#%s' >dom.html 2>console.txt",
                 dir, browser, flags, dir, shots, rk->name, dir, rk->page, rk->fragment);
        assert_int_equal(system(cmd), 0);
        snprintf(path, sizeof path, "%s/dom.html", dir);
        char *dom = slurp_file(path);
        snprintf(path, sizeof path, "%s/console.txt", dir);
        char *console = slurp_file(path);
        snprintf(path, sizeof path, "%s/%s", dir, rk->page);
        char *html = slurp_file(path);
        assert_non_null(dom);
        assert_non_null(html);
        /* the script ran to its end, and nothing was logged to the console */
        if (!strstr(dom, "data-ready=\"1\""))
            fail_msg("%s: the page's script did not run to its end", rk->name);
        if (console && strstr(console, ":CONSOLE"))
            fail_msg("%s: the page logged to the console:\n%s", rk->name,
                     strstr(console, ":CONSOLE"));
        assert_true(count(dom, "<svg class=\"chart") >= 2);
        if (rk->sort_col >= 0) {
            /* the clicked column is in order now, and was not as written */
            double v[64];
            int n = column_values(dom, rk->sort_col, v, 64), distinct;
            if (n < 3)
                fail_msg("%s: %d rows in the first table", rk->name, n);
            if (!in_order(v, n, rk->down, &distinct) || distinct < 1)
                fail_msg("%s: column %d is not sorted after the clicks", rk->name, rk->sort_col);
            assert_int_equal(column_values(html, rk->sort_col, v, 64), n);
            if (in_order(v, n, rk->down, &distinct))
                fail_msg("%s: column %d was sorted already: the check proves nothing",
                         rk->name, rk->sort_col);
            assert_int_equal(count(dom, "<input type=\"search\" class=\"filter\""),
                             count(html, "<table class=\"sortable\""));
        }
        struct stat st;
        snprintf(path, sizeof path, "%s/%s.png", shots, rk->name);
        assert_int_equal(stat(path, &st), 0);
        assert_true(st.st_size > 20000); /* a real picture, not a blank page */
        if (strcmp(rk->name, "sweep") == 0) {
            /* every chart, with as many cells, points and bars as the data */
            assert_int_equal(count(dom, "class=\"chart chart-heatmap\""), 1);
            assert_int_equal(count(dom, "<g class=\"cell"), 6);
            assert_int_equal(count(dom, "class=\"chart chart-scatter\""), 1);
            assert_int_equal(count(dom, "<circle class=\"point"), 6);
            assert_int_equal(count(dom, "class=\"chart chart-bars\""), 1);
            assert_int_equal(count(dom, "class=\"chart chart-stacked\""), 2);
            /* every design a row; "40 GiB" filters out the three 80 GiB ones */
            assert_int_equal(count(dom, "<tr id=\"row-designs-0-"), 6);
            assert_int_equal(count(dom, "<tr id=\"row-designs-0-") -
                                 count(dom, "hidden=\"\""), 3);
            /* the first linked point's click selected its row, showed its
             * drill-down (time and memory) and marked the point */
            const char *link = strstr(dom, "data-link=\"");
            assert_non_null(link);
            char id[64];
            assert_int_equal(sscanf(link, "data-link=\"%63[^\"]\"", id), 1);
            char want[96];
            snprintf(want, sizeof want, "<tr id=\"%s\"", id);
            const char *row = strstr(dom, want);
            assert_non_null(row);
            const char *close = strchr(row, '>');
            assert_non_null(strstr(row, "class=\"selected\""));
            assert_true(strstr(row, "class=\"selected\"") < close);
            assert_int_equal(count(dom, "class=\"selected\""), 1);
            const char *panel = strstr(dom, "<div class=\"drill-panel\"");
            assert_non_null(panel);
            assert_non_null(strstr(panel, "where the step time goes"));
            assert_non_null(strstr(panel, "memory per NPU: hbm"));
            assert_int_equal(count(dom, " picked\""), 1);
        }
        if (strcmp(rk->name, "sweep-filtered") == 0) {
            /* the picked row (the first point's, a 40 GiB design) is hidden
             * by the filter "80 GiB": nothing stays selected, the point is
             * not ringed, and the drill-down panel is closed and empty */
            assert_int_equal(count(dom, "<tr id=\"row-designs-0-"), 6);
            assert_int_equal(count(dom, " hidden=\"\"><td"), 3);
            const char *link = strstr(dom, "data-link=\"");
            assert_non_null(link);
            char id[64], want[96];
            assert_int_equal(sscanf(link, "data-link=\"%63[^\"]\"", id), 1);
            snprintf(want, sizeof want, "<tr id=\"%s\"", id);
            const char *row = strstr(dom, want), *end = row ? strchr(row, '>') : NULL;
            assert_non_null(end);
            const char *hidden = strstr(row, " hidden=\"\"");
            if (!hidden || hidden > end)
                fail_msg("sweep-filtered: the picked row %s is not hidden by the filter", id);
            assert_int_equal(count(dom, "\"selected\""), 0);
            assert_int_equal(count(dom, " picked\""), 0);
            const char *panel = strstr(dom, "<div class=\"drill-panel\"");
            assert_non_null(panel);
            end = strstr(panel, "</div>");
            assert_non_null(end);
            hidden = strstr(panel, " hidden=\"\"></div>");
            if (hidden != end - strlen(" hidden=\"\">"))
                fail_msg("sweep-filtered: the drill-down panel is still open: %.200s", panel);
        }
        free(dom);
        free(console);
        free(html);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* comet search --report: the page's table holds every strategy that fits
 * (as many rows as the search's feasible count, which --json gives),
 * while --json keeps the top k; the best 1000 rows have drill-downs. Past
 * COMET_SEARCH_MAX_KEEP the table holds the best that many and the page
 * says how many were left out. */
static void test_search_report_keeps_every_fit(void **state)
{
    (void)state;
    char dir[] = "/tmp/comet-search-XXXXXX", bin[4096], cmd[16384], path[4400];
    assert_non_null(mkdtemp(dir));
    const char *b = getenv("COMET_BIN");
    assert_non_null(realpath(b ? b : "build/comet", bin));
    const char *job = "--model megatron-22b --system a100-80g-selene -j 2";
    snprintf(cmd, sizeof cmd,
             "cd %s && %s search %s --npus 8 --gbs 8 --top 2 --json -o s.json --report s.html "
             ">/dev/null 2>&1 && %s search %s --npus 128 --gbs 128 --top 2 --report big.html "
             ">/dev/null 2>&1",
             dir, bin, job, bin, job);
    assert_int_equal(system(cmd), 0);
    snprintf(path, sizeof path, "%s/s.json", dir);
    char *json = slurp_file(path);
    snprintf(path, sizeof path, "%s/s.html", dir);
    char *html = slurp_file(path);
    snprintf(path, sizeof path, "%s/big.html", dir);
    char *big = slurp_file(path);
    assert_non_null(json);
    assert_non_null(html);
    assert_non_null(big);
    const char *f = strstr(json, "\"feasible\": ");
    assert_non_null(f);
    int feasible = atoi(f + strlen("\"feasible\": "));
    assert_int_equal(feasible, 1328);
    assert_int_equal(count(json, "{\"rank\": "), 2);
    assert_int_equal(count(html, "<tr id=\"row-top-"), feasible);
    assert_int_equal(count(html, "<template id=\"drill-top-"), 1000);
    assert_non_null(strstr(html, "<caption>Every strategy that fits (1328), best first"));
    assert_null(strstr(html, "are left out"));
    /* 71753 fit (DualPipe among them): the best 20000 are kept, and the page says so */
    assert_int_equal(count(big, "<tr id=\"row-top-"), COMET_SEARCH_MAX_KEEP);
    assert_non_null(strstr(big, "<caption>The best 20000 strategies that fit"));
    assert_non_null(strstr(big, "The table lists the best 20000 of the 71753 strategies that "
                                "fit; the other 51753 are left out: a page holds at most that "
                                "many rows"));
    /* rows stay in rank order as written: the step times never fall */
    double v[64];
    int distinct, n = column_values(big, 11, v, 64);
    assert_int_equal(n, 64);
    assert_true(in_order(v, n, false, &distinct));
    free(json);
    free(html);
    free(big);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* A saved result's count read back from a hostile file: inf, NaN, 1e300
 * or a fraction is refused (converting it to int64 was undefined
 * behaviour under UBSan), and the field keeps its value. */
static void test_result_counts_refuse_non_integers(void **state)
{
    (void)state;
    comet_result r;
    memset(&r, 0, sizeof r);
    assert_true(comet_result_set_field(&r, "npus", 64.0));
    assert_int_equal(r.npus, 64);
    const double bad[] = {INFINITY, -INFINITY, NAN, 1e300, -1e300, 9223372036854775808.0, 2.5};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_false(comet_result_set_field(&r, "npus", bad[i]));
        assert_false(comet_result_set_field(&r, "microbatches", bad[i]));
        assert_int_equal(r.npus, 64);
    }
    assert_true(comet_result_set_field(&r, "microbatches", -9223372036854775808.0));
    assert_true(r.microbatches == INT64_MIN);
    /* a real field takes any double, as written */
    assert_true(comet_result_set_field(&r, "step_time_s", 1e300));
    assert_true(r.step_time == 1e300);
    comet_strategy s;
    comet_strategy_defaults(&s);
    assert_false(comet_strategy_set_field(&s, "zero", "4294967296"));
    assert_true(comet_strategy_set_field(&s, "zero", "2"));
    assert_int_equal(s.zero_stage, 2);
}

void suite_report(test_tally *t)
{
    const struct CMUnitTest report[] = {
        cmocka_unit_test(test_quantities),
        cmocka_unit_test(test_result_counts_refuse_non_integers),
        cmocka_unit_test(test_stacked_golden),
        cmocka_unit_test(test_heatmap_scatter_gantt_golden),
        cmocka_unit_test(test_labels_cut_on_characters),
        cmocka_unit_test(test_page_escapes_and_sorts),
        cmocka_unit_test(test_results_csv_and_jsonl_agree),
        cmocka_unit_test(test_results_with_an_npus_axis),
        cmocka_unit_test(test_results_out_of_range_counts),
        cmocka_unit_test(test_bad_results_make_readable_pages),
        cmocka_unit_test(test_timeline_adds_up),
        cmocka_unit_test(test_search_report_keeps_every_fit),
        cmocka_unit_test(test_browser_explores_each_report),
    };
    RUN_GROUP(t, report);
}
