/* End-to-end checks of the comet binary: the default job runs, outputs are
 * what they claim (table, JSON, CSV, -o file), and bad input of every kind
 * gives exactly one clear line on stderr and exit code 2. */
#define _XOPEN_SOURCE 700 /* realpath, mkdtemp */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "comet/chakra.h"
#include "comet/comet.h"
#include "comet/allocate.h"
#include "comet/knobs.h"
#include "tests.h"
#include "../cli/args.h"

typedef struct cli_run {
    int status;
    char out[65536];
    char err[4096];
} cli_run;

static char workdir[256];
static char binary[4096];
static char examples[4096];

static void slurp(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* A file of the work folder, by its name there. */
static void slurp_in_workdir(const char *name, char *buf, size_t cap)
{
    char path[3 * 4096];
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    slurp(path, buf, cap);
}

/* Run comet with args in workdir, after the shell commands in `before`
 * (e.g. limits set with ulimit). */
static void run_after(cli_run *r, const char *before, const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd %s && %s %s %s >out.txt 2>err.txt", workdir, before, binary,
             args);
    int st = system(cmd);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    char path[512];
    snprintf(path, sizeof path, "%s/out.txt", workdir);
    slurp(path, r->out, sizeof r->out);
    snprintf(path, sizeof path, "%s/err.txt", workdir);
    slurp(path, r->err, sizeof r->err);
}

static void run(cli_run *r, const char *args)
{
    run_after(r, "", args);
}

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int lines(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

static int setup(void **state)
{
    (void)state;
    const char *bin = getenv("COMET_BIN");
    if (!realpath(bin ? bin : "build/comet", binary) || !realpath("examples", examples))
        return -1;
    snprintf(workdir, sizeof workdir, "/tmp/comet-cli-XXXXXX");
    return mkdtemp(workdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", workdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The error must be exactly this one line, with exit code 2. */
static void expect_error(const char *args, const char *line)
{
    cli_run r;
    run(&r, args);
    char want[1024];
    snprintf(want, sizeof want, "%s\n", line);
    if (r.status != 2 || strcmp(r.err, want) != 0)
        fail_msg("comet %s\n  exit %d, stderr: %s  expected exit 2, stderr: %s", args, r.status,
                 r.err, want);
    assert_int_equal(lines(r.err), 1);
    assert_string_equal(r.out, "");
}

static void test_default_job(void **state)
{
    (void)state;
    cli_run r;
    run(&r, "estimate");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "gpt3-175b on a100-80g-selene, 64 NPUs"));
    assert_non_null(strstr(r.out, "pipeline bubble"));
    assert_non_null(strstr(r.out, "fits in memory"));
    assert_string_equal(r.err, "");
}

/* args (with -o file) succeed silently and leave file holding expected. */
static void expect_written(const char *args, const char *file, const char *expected)
{
    cli_run r;
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "");
    char path[512];
    static char text[65536];
    snprintf(path, sizeof path, "%s/%s", workdir, file);
    slurp(path, text, sizeof text);
    assert_string_equal(text, expected);
}

static void test_json_and_csv(void **state)
{
    (void)state;
    cli_run r;
    run(&r, "estimate --model gpt3-175b --system a100-80g-selene --tp 8 --pp 8 --gbs 64 "
              "--recompute selective --sp --json");
    assert_int_equal(r.status, 0);
    assert_true(r.out[0] == '{');
    assert_non_null(strstr(r.out, "\"step_time_s\": "));
    assert_non_null(strstr(r.out, "\"feasible\": true"));
    run(&r, "estimate --tp 8 --pp 8 --gbs 64 --csv");
    assert_int_equal(r.status, 0);
    assert_int_equal(lines(r.out), 2);
    assert_int_equal(strncmp(r.out, "schema_version,model,system,tp,pp,dp,", 37), 0);
    assert_non_null(strstr(r.out, ",mfu_fraction,hfu_fraction,"));
    assert_non_null(strstr(r.out, ",cost_usd,cost_usd_per_mtoken_s,"));
    assert_int_equal(strncmp(strchr(r.out, '\n'), "\n1,gpt3-175b,", 13), 0);
}

/* The step time's uncertainty band (include/comet/band.h) in every form an
 * estimate takes: a line under the step time with its note, the JSON's
 * step_time_band, a whisker on the HTML report's breakdown bar and band
 * columns in its plot CSV; and in a search's JSON, one per ranked strategy.
 * The default job's band is drawn from Korthikanti's 9 rows on
 * a100-80g-selene (8 of them fitted): 13.442 to 14.030 s around 13.622 s. */
static void test_estimate_band(void **state)
{
    (void)state;
    cli_run r;
    run(&r, "estimate");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "step time 13.622 s"));
    assert_non_null(strstr(r.out, "\n80 % band 13.442 to 14.030 s (9 validation rows: "
                                  "a100-80g-selene, megatron)\n  note: 8 of the 9 rows are ones a "
                                  "preset was fit to"));
    run(&r, "estimate --json");
    assert_non_null(strstr(r.out, "\"step_time_band\": {\"low\": 13.441"));
    assert_non_null(strstr(r.out, "\"rows\": 9, \"basis\": \"a100-80g-selene, megatron\""));
    run(&r, "estimate --report band.html --plots bandplots");
    assert_int_equal(r.status, 0);
    static char text[1 << 20];
    char path[512];
    snprintf(path, sizeof path, "%s/band.html", workdir);
    slurp(path, text, sizeof text);
    assert_non_null(strstr(text, "<g class=\"band\""));
    assert_non_null(strstr(text, "80 % band: 13.4 s to 14.0 s"));
    snprintf(path, sizeof path, "%s/bandplots/breakdown.csv", workdir);
    slurp(path, text, sizeof text);
    assert_non_null(strstr(text, ",limit (s),band low (s),band high (s)\n"));
    /* a GPU no row ran on: every row's band, and a note naming the GPU */
    run(&r, "estimate --system b200-dgx --model llama2-70b --tp 8 --dp 8 --gbs 64 "
            "--flash-attention --recompute full");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "validation rows: every validation row"));
    assert_non_null(strstr(r.out, "note: no validation row on a GPU of 2250 TFLOP/s"));
    run(&r, "search --npus 8 --gbs 8 --model megatron-22b --top 3 --json");
    assert_int_equal(r.status, 0);
    int bands = 0;
    for (const char *p = r.out; (p = strstr(p, "\"step_time_band\"")); p++)
        bands++;
    assert_int_equal(bands, 3);
    run(&r, "search --npus 8 --gbs 8 --model megatron-22b --top 3 --report sband.html");
    assert_int_equal(r.status, 0);
    snprintf(path, sizeof path, "%s/sband.html", workdir);
    slurp(path, text, sizeof text);
    assert_non_null(strstr(text, "band low"));
    assert_non_null(strstr(text, "<g class=\"band\""));
}

/* comet validate: a built-in table as CSV (the header, then one line per
 * row with the measured and predicted step time and the signed error),
 * written atomically with -o; a bad key in a table file is one line
 * naming file:line:col and the row's key; a bad format names the flag. */
/* comet allocate: the example's table, the same bytes through -o, CSV and
 * a report, and bad input as one line with exit status 2. */
static void test_allocate(void **state)
{
    (void)state;
    cli_run r;
    char args[8192];
    snprintf(args, sizeof args, "allocate %s/allocate/selene-fixed.yaml --no-sweep", examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, "allocation selene-fixed: budget 325 GB/s per NPU"));
    assert_non_null(strstr(r.out, "\nequal            162 GB/s     162 GB/s     325 GB/s"));
    static char table[65536];
    snprintf(table, sizeof table, "%s", r.out);
    snprintf(args, sizeof args, "allocate %s/allocate/selene-fixed.yaml --no-sweep -o a.txt",
             examples);
    expect_written(args, "a.txt", table);
    snprintf(args, sizeof args,
             "allocate %s/allocate/selene-fixed.yaml --csv --report a.html --plots p", examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_int_equal(lines(r.out), 1 + 4 + 2 * COMET_ALLOC_SWEEP);
    static char html[1 << 20];
    slurp_in_workdir("a.html", html, sizeof html);
    assert_non_null(strstr(html, "Step time across the budget"));
    slurp_in_workdir("p/budget.csv", html, sizeof html);
    assert_true(lines(html) >= COMET_ALLOC_SWEEP);
    write_file("low.yaml", "allocate:\n"
                           "  system: a100-80g-selene\n"
                           "  budget: \"30 GB/s\"\n"
                           "  dimensions:\n"
                           "    nvlink: {min: \"25 GB/s\"}\n"
                           "    infiniband: {min: \"12.5 GB/s\"}\n"
                           "  workloads: [{model: gpt3-175b, npus: 64, global_batch: 64}]\n");
    expect_error("allocate low.yaml", "comet allocate: low.yaml:3:11: allocate.budget: 30 GB/s "
                                      "is below the sum of the dimensions' minimums, 37.5 GB/s");
    expect_error("allocate", "comet allocate: needs an allocation file (see 'comet allocate "
                             "--help')");
}

/* comet deeppool: the ResNet-152 example's plan, the same bytes through
 * -o, JSON and a report with the strong-scaling chart, and bad input as
 * one line with exit status 2. */
static void test_deeppool(void **state)
{
    (void)state;
    cli_run r;
    char args[8192];
    snprintf(args, sizeof args, "deeppool %s/deeppool/resnet152.yaml", examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, "deeppool deeppool: resnet152 on 256 GPUs of h100-80g-dgx, "
                                  "global batch 256"));
    assert_non_null(strstr(r.out, "burst over data parallel: "));
    static char table[65536];
    snprintf(table, sizeof table, "%s", r.out);
    snprintf(args, sizeof args, "deeppool %s/deeppool/resnet152.yaml -o d.txt", examples);
    expect_written(args, "d.txt", table);
    write_file("scale.yaml", "deeppool:\n"
                             "  model: resnet50\n"
                             "  system: h100-80g-dgx\n"
                             "  global_batch: 128\n"
                             "  gpus: 32\n"
                             "  scaling: [8, 16, 32]\n");
    run(&r, "deeppool scale.yaml --json --report d.html --plots dp");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"scaling\":[{\"gpus\":8,"));
    static char html[1 << 20];
    slurp_in_workdir("d.html", html, sizeof html);
    assert_non_null(strstr(html, "Strong scaling at a fixed global batch"));
    slurp_in_workdir("dp/scaling.csv", html, sizeof html);
    assert_true(lines(html) >= 1 + 2 * 3);
    write_file("small.yaml", "deeppool:\n"
                             "  model: resnet50\n"
                             "  system: h100-80g-dgx\n"
                             "  global_batch: 16\n"
                             "  gpus: 32\n");
    expect_error("deeppool small.yaml", "comet deeppool: small.yaml:5:9: deeppool.gpus: 32 GPUs "
                                        "but a global batch of 16: data parallelism needs at "
                                        "least one sample per GPU (global_batch >= gpus)");
    expect_error("deeppool", "comet deeppool: needs a deeppool file (see 'comet deeppool "
                             "--help')");
}

static void test_validate(void **state)
{
    (void)state;
    cli_run r;
    run(&r, "validate korthikanti2022 --format csv");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_int_equal(lines(r.out), 10);
    assert_int_equal(strncmp(r.out, "schema_version,table,id,system,framework,model,gpus,"
                                    "strategy,stated_kind,stated_value,flops,peak_flops,"
                                    "measured_step_s,status,predicted_step_s,error_pct,", 125), 0);
    const char *row = strstr(r.out, "\n1,korthikanti2022,k22-175b-selective,a100-80g-selene,"
                                    "megatron,gpt3-175b,64,");
    assert_non_null(row);
    double measured, predicted, error;
    const char *ok = strstr(row, ",step_time,13.75,,,13.75,ok,");
    assert_non_null(ok);
    assert_int_equal(sscanf(ok, ",step_time,13.75,,,%lf,ok,%lf,%lf", &measured, &predicted,
                            &error), 3);
    assert_true(measured == 13.75);
    assert_close(predicted, 13.622, 1e-3);
    assert_close(error, 100.0 * (predicted - measured) / measured, 1e-6);
    expect_written("validate korthikanti2022 --format csv -o v.csv", "v.csv", r.out);
    run(&r, "validate");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "hopper (presets/validation/hopper.yaml)"));
    assert_non_null(strstr(r.out, "korthikanti2022 (presets/validation/korthikanti2022.yaml)"));
    write_file("bad-table.yaml", "validation:\n"
                                 "  rows:\n"
                                 "    - id: x\n"
                                 "      source: s\n"
                                 "      model: gpt3-175b\n"
                                 "      system: h100-80g-dgx\n"
                                 "      strategy: {tp: 8, interleaved: 2}\n"
                                 "      measured: {step_time: \"1 s\"}\n");
    expect_error("validate bad-table.yaml",
                 "comet validate: bad-table.yaml:7:25: validation.rows[0].strategy.interleaved: "
                 "unknown key (did you mean \"interleave\"?)");
    expect_error("validate korthikanti2022 --format xml",
                 "comet validate: --format: expected text, md, csv or json, got \"xml\"");
    expect_error("validate nosuch",
                 "comet validate: unknown validation table \"nosuch\" (known: cnn-steps, "
                 "h100-steps, h200-steps, hopper, korthikanti2022)");
}

static void test_output_file(void **state)
{
    (void)state;
    cli_run r;
    run(&r, "estimate --json");
    expect_written("estimate --json -o result.json", "result.json", r.out);
}

static void test_strategy_file_errors_point_at_the_key(void **state)
{
    (void)state;
    write_file("gpt.yaml", "model: gpt3-175b\nsystem: a100-80g-selene\nstrategy:\n  pp: 8\n"
                           "  global_batch: 64\n  tp: 5\n");
    expect_error("estimate gpt.yaml", "comet estimate: gpt.yaml:6:7: strategy.tp: 5 does not "
                                      "divide heads (96)");
    /* the position survives other inputs read after the file */
    write_file("strat.yaml", "strategy:\n  pp: 8\n  global_batch: 64\n  tp: 5\n");
    expect_error("estimate strat.yaml --model gpt3-175b",
                 "comet estimate: strat.yaml:4:7: strategy.tp: 5 does not divide heads (96)");
    expect_error("estimate --model gpt3-175b strat.yaml --system h100-80g-dgx",
                 "comet estimate: strat.yaml:4:7: strategy.tp: 5 does not divide heads (96)");
    /* the same mistake made on the command line names the flag */
    expect_error("estimate gpt.yaml --tp 7",
                 "comet estimate: --tp: 7 does not divide heads (96)");
    /* context parallelism that does not split the sequence (2048): the
     * ring's 2 cp chunks, Ulysses' cp parts; in a file, the key */
    expect_error("estimate gpt.yaml --tp 8 --cp 3",
                 "comet estimate: --cp: ring context parallelism splits the sequence into 2*cp "
                 "= 6 chunks, which does not divide seq (2048)");
    expect_error("simulate gpt.yaml --tp 8 --cp 3 --cp-comm ulysses",
                 "comet simulate: --cp: 3 does not divide seq (2048)");
    write_file("cp.yaml", "strategy:\n  tp: 8\n  cp: 3\n");
    expect_error("estimate --model gpt3-175b cp.yaml",
                 "comet estimate: cp.yaml:3:7: strategy.cp: ring context parallelism splits the "
                 "sequence into 2*cp = 6 chunks, which does not divide seq (2048)");
    /* a strategy preset given alone is the strategy run, not the default's */
    cli_run r;
    run(&r, "estimate --strategy llama3-405b-128k --json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"cp\": 16"));
    assert_non_null(strstr(r.out, "\"npus\": 16384"));
}

static void test_bad_flags(void **state)
{
    (void)state;
    expect_error("estimate --tp abc", "comet estimate: --tp: expected an integer, got \"abc\"");
    expect_error("estimate --tp -3", "comet estimate: --tp: -3 is out of range [1, 262144]");
    expect_error("estimate --dp 1000000",
                 "comet estimate: --dp: 1000000 is out of range [1, 262144]");
    expect_error("estimate --tp 8 --pp 8 --gbs 65536 --dp 8192",
                 "comet estimate: --dp: tp*pp*dp = 524288 NPUs is past comet's limit of 262144");
    expect_error("estimate --recompute most",
                 "comet estimate: --recompute: expected none, selective or full, got \"most\"");
    expect_error("sweep nosuch",
                 "comet sweep: nosuch: no such study file, and no built-in study by that name "
                 "(built in: dlrm, fred, gpt3-175b-h100, gpt3-selene, oversubscription-h100, roce, "
                 "transformer-1t)");
    expect_error("study nosuch",
                 "comet study: nosuch: no such study file, and no built-in study by that name "
                 "(built in: dlrm, fred, gpt3-175b-h100, gpt3-selene, oversubscription-h100, roce, "
                 "transformer-1t)");
    expect_error("study missing.yaml", "comet study: missing.yaml: cannot read: No such file or "
                                       "directory");
    expect_error("study --frobnicate",
                 "comet study: unknown option \"--frobnicate\" (see 'comet study --help')");
    expect_error("report", "comet report: which results? usage: comet report "
                           "RESULTS.csv|RESULTS.jsonl");
    expect_error("report nothing.csv", "comet report: nothing.csv: cannot read: No such file or "
                                       "directory");
    expect_error("estimate --report", "comet estimate: --report: needs a value");
    expect_error("study dlrm --heatmap npus,hbm",
                 "comet study: --heatmap: no axis \"hbm\" (axes: npus, hbm_capacity, "
                 "expansion_capacity, network.infiniband.bandwidth)");
    expect_error("estimate --frobnicate 3",
                 "comet estimate: unknown option \"--frobnicate\" (see 'comet estimate --help')");
    expect_error("estimate --model gpt5",
                 "comet estimate: unknown model preset \"gpt5\" (known: deepseek-v3, dlrm, gpt3-175b, "
                 "inception-v3, llama2-70b, llama3-405b, megatron-1t, megatron-22b, mixtral-8x22b, "
                 "mixtral-8x7b, qwen3-235b-a22b, resnet152, resnet50, transformer-17b, "
                 "transformer-1t, turing-530b, vgg16)");
}

/* Paths the user got wrong are bad input (exit 2) and are named. */
static void test_bad_paths(void **state)
{
    (void)state;
    char line[512];
    snprintf(line, sizeof line, "comet estimate: %s: cannot read: Is a directory", workdir);
    char args[600];
    snprintf(args, sizeof args, "estimate %s", workdir);
    expect_error(args, line);
    snprintf(line, sizeof line, "comet estimate: %s: cannot write: is a directory", workdir);
    snprintf(args, sizeof args, "estimate -o %s", workdir);
    expect_error(args, line);
    expect_error("estimate -o /nonexistent/x.json",
                 "comet estimate: /nonexistent/x.json: cannot write: No such file or directory");
    expect_error("estimate -o ''", "comet estimate: -o: needs a value");
    expect_error("estimate --tp ' 8'", "comet estimate: --tp: expected an integer, got \" 8\"");
    expect_error("estimate --tp +8", "comet estimate: --tp: expected an integer, got \"+8\"");
    expect_error("estimate --tp", "comet estimate: --tp: needs a value");
    expect_error("estimate --offload ,",
                 "comet estimate: --offload: expected none or a list of optimizer, weights, "
                 "activations, gradients");
    write_file("only-strategy.yaml", "strategy:\n  tp: 8\n");
    expect_error("estimate --system only-strategy.yaml",
                 "comet estimate: only-strategy.yaml: has no system: section");
    /* a multi-line value stays on one escaped line */
    write_file("nl.yaml", "strategy:\n  tp: \"1\\n2\"\n");
    cli_run r;
    run(&r, "estimate nl.yaml");
    assert_int_equal(r.status, 2);
    assert_int_equal(lines(r.err), 1);
    assert_non_null(strstr(r.err, "1\\n2"));
}

/* Names with commas and quotes are quoted in CSV, escaped in JSON. */
static void test_output_quoting(void **state)
{
    (void)state;
    write_file("named.yaml", "model:\n  preset: gpt3-175b\n  name: 'a,b\"c'\n");
    cli_run r;
    run(&r, "estimate named.yaml --tp 8 --pp 8 --gbs 64 --csv");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\n1,\"a,b\"\"c\",a100-80g-selene,8,8,1,"));
    run(&r, "estimate named.yaml --tp 8 --pp 8 --gbs 64 --json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"model\": \"a,b\\\"c\","));
}

static void test_bad_files(void **state)
{
    (void)state;
    write_file("neg.yaml", "model:\n  preset: gpt3-175b\n  layers: -4\n");
    cli_run r;
    run(&r, "estimate neg.yaml");
    assert_int_equal(r.status, 2);
    assert_int_equal(lines(r.err), 1);
    assert_non_null(strstr(r.err, "neg.yaml:3:11: model.layers: "));

    write_file("huge.yaml", "model:\n  preset: gpt3-175b\n  layers: 65536\n  hidden: 1048576\n"
                            "  heads: 128\n");
    run(&r, "estimate huge.yaml");
    assert_int_equal(r.status, 2);
    assert_int_equal(lines(r.err), 1);
    assert_non_null(strstr(r.err, "huge.yaml:"));
    assert_non_null(strstr(r.err, "parameters"));

    write_file("typo.yaml", "strategy:\n  tp: 8\n  pipeline: 8\n");
    run(&r, "estimate typo.yaml");
    assert_int_equal(r.status, 2);
    assert_int_equal(lines(r.err), 1);
    assert_non_null(strstr(r.err, "typo.yaml:3:3: strategy.pipeline: unknown key"));

    run(&r, "estimate missing.yaml");
    assert_int_equal(r.status, 2);
    assert_int_equal(lines(r.err), 1);
    assert_non_null(strstr(r.err, "missing.yaml"));

    write_file("bad.json", "{\"strategy\": {\"tp\": 8, \"pp\": \"eight\"}}");
    run(&r, "estimate bad.json");
    assert_int_equal(r.status, 2);
    assert_int_equal(lines(r.err), 1);
    assert_non_null(strstr(r.err, "bad.json:1:30: strategy.pp: "));
}

static void test_no_fit_is_a_result(void **state)
{
    (void)state;
    cli_run r;
    /* gpt3-175b on 8 NPUs cannot hold 2.6 TB of training state */
    run(&r, "estimate --tp 8 --pp 1 --gbs 8");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "HBM: "));
    assert_non_null(strstr(r.out, "GiB needed, 80.0 GiB available"));
}

/* A CNN described as a layer list, by its layers' shapes, runs with no
 * code of its own. */
static void test_layer_list_example(void **state)
{
    (void)state;
    cli_run r;
    char args[4200];
    snprintf(args, sizeof args, "estimate %s/resnet50.yaml", examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "resnet50 on a100-80g-selene, 64 NPUs, 25.6 M parameters"));
    assert_non_null(strstr(r.out, " samples/s "));
    assert_non_null(strstr(r.out, "fits in memory"));
    snprintf(args, sizeof args, "estimate %s/resnet50.yaml --dp 32 --json", examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"npus\": 32,"));
    /* the preset built from its layers' shapes: torchvision's 60,192,808 */
    run(&r, "estimate --model resnet152 --system h100-80g-dgx --dp 8 --gbs 256");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "resnet152 on h100-80g-dgx, 8 NPUs, 60.2 M parameters"));
    assert_non_null(strstr(r.out, "fits in memory"));
}

static void test_search(void **state)
{
    (void)state;
    cli_run r;
    run(&r, "search --model gpt3-175b --system a100-80g-selene --npus 64 --gbs 64 --top 3 -j 2");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "gpt3-175b on a100-80g-selene: 64 NPUs, global batch 64, "
                                  "ranked by time"));
    assert_non_null(strstr(r.out, "\n   3 "));
    assert_null(strstr(r.out, "\n   4 "));
    assert_non_null(strstr(r.out, " points enumerated in "));
    assert_non_null(strstr(r.out, "best strategy:\ngpt3-175b on a100-80g-selene, 64 NPUs"));
    /* the same ranking at 1 and 2 threads, in machine-readable form */
    cli_run one, two;
    run(&one, "search --npus 64 --gbs 64 --top 5 -j 1 --csv");
    run(&two, "search --npus 64 --gbs 64 --top 5 -j 2 --csv");
    assert_int_equal(one.status, 0);
    assert_string_equal(one.out, two.out);
    assert_int_equal(lines(one.out), 6);
    assert_int_equal(strncmp(one.out, "schema_version,rank,model,system,tp,pp,dp,", 42), 0);
    assert_int_equal(strncmp(strchr(one.out, '\n'), "\n1,1,", 5), 0);
    run(&r, "search --npus 64 --gbs 64 --top 2 --json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"top\": [\n{\"rank\": 1, \"score\": "));
    /* bad input */
    expect_error("search --gbs 64", "comet search: --npus: is required: how many NPUs to search "
                                    "over");
    expect_error("search --npus 64 --gbs 64 --tp 8",
                 "comet search: unknown option \"--tp\" (see 'comet search --help')");
    expect_error("search --npus 64 --gbs 64 --objective speed",
                 "comet search: --objective: expected time, throughput or cost, got \"speed\"");
    expect_error("search --npus 0 --gbs 64", "comet search: --npus: 0 is out of range [1, 262144]");
}

static void test_simulate_collective(void **state)
{
    (void)state;
    cli_run r;
    char args[4400];
    snprintf(args, sizeof args,
             "simulate --system %s/astra-ring8.yaml --collective all-reduce --size '1 GiB' "
             "--splits 4 --endpoint-delay '10 ns' --local-mem-bw '1600 GB/s' --astra-rounding",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "simulated   36.790164 ms  (4 chunks, "));
    snprintf(args, sizeof args,
             "simulate --system %s/net-16k.yaml --collective all-reduce --size '1 GiB' --json",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"npus\": 16384,"));
    expect_error("simulate --size '1 GiB'",
                 "comet simulate: unknown option \"--size\" (see 'comet simulate --help')");
    expect_error("simulate --collective all-reduce --size 1",
                 "comet simulate: --size: needs a unit, e.g. \"80 GiB\" (units: B, KB, MB, GB, "
                 "TB, PB, EB, KiB, MiB, GiB, TiB)");
    expect_error("simulate --collective multicast --size '1 GiB' --npus 8",
                 "comet simulate: --collective: expected all-reduce, reduce-scatter, all-gather, "
                 "all-to-all, broadcast, reduce, gather, scatter or barrier, got \"multicast\"");
    /* a broadcast on a switch of 8 at 4 chunks is one chain of 32 pieces
     * and 6 steps more (docs/collectives.md): 38 steps of a piece at
     * 210 GB/s and 2 us, the simulator's chunks following each other
     * down the chain as the estimate's do */
    run(&r, "simulate --collective broadcast --size '1 GiB' --npus 8 --json");
    assert_int_equal(r.status, 0);
    const char *bt = strstr(r.out, "\"time_s\": ");
    assert_non_null(bt);
    double broadcast = strtod(bt + 10, NULL);
    assert_true(fabs(broadcast / (38.0 * (2e-6 + 1073741824.0 / (32.0 * 210e9))) - 1.0) < 1e-9);
    const char *ba = strstr(r.out, "\"analytic_s\": ");
    assert_non_null(ba);
    assert_true(fabs(broadcast / strtod(ba + 14, NULL) - 1.0) < 1e-9);
    expect_error("simulate --collective all-reduce --size '1 GiB'",
                 "comet simulate: --npus: is needed: system a100-80g-selene grows to fit (its "
                 "outermost dimension is auto)");
    /* three dimensions of 2^24 NPUs multiplied to 2^72 (UBSan: signed
     * overflow); the reader stops at the dimension that passes 2^30 */
    write_file("wide.yaml", "system:\n  name: wide\n  compute: {matrix: {fp16: \"1 TFLOPS\"}}\n"
                            "  hbm: {capacity: \"1 GiB\", bandwidth: \"1 GB/s\"}\n"
                            "  network:\n"
                            "    - {size: 16777216, bandwidth: \"1 GB/s\"}\n"
                            "    - {size: 16777216, bandwidth: \"1 GB/s\"}\n"
                            "    - {size: 16777216, bandwidth: \"1 GB/s\"}\n");
    expect_error("simulate --system wide.yaml --collective all-reduce --size '1 GiB'",
                 "comet simulate: wide.yaml:7:14: system.network[1].size: the dimensions up to "
                 "this one hold more than 1073741824 NPUs, comet's limit");
}

/* --flows: the collective as flows on the fabric. On the example's 8-NPU
 * ring, one chunk of 1 GiB is the closed form exactly; two at once take
 * twice as long (no latency in that file); the 2:1 fat tree of the README;
 * the flags that need --flows, and a span that does not divide. */
static void test_simulate_flows(void **state)
{
    (void)state;
    cli_run r;
    char args[13000];
    snprintf(args, sizeof args,
             "simulate --system %s/astra-ring8.yaml --collective all-reduce --size '1 GiB' "
             "--flows --splits 1",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "flows       35.007000 ms  (224 flows, "));
    assert_non_null(strstr(r.out, "analytical  35.007000 ms  (flows +0.0%)"));
    snprintf(args, sizeof args,
             "simulate --system %s/astra-ring8.yaml --collective all-reduce --size '1 GiB' "
             "--flows --splits 1 --concurrent 2 --json",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"concurrent\": 2, \"time_s\": 0.070007,"));
    snprintf(args, sizeof args,
             "simulate --system %s/fat-tree-2to1.yaml --collective all-to-all --size '256 MiB' "
             "--span 1,128 --flows --splits 1",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "161 switches, 4160 links"));
    assert_non_null(strstr(r.out, "flows       11.617195 ms  (130048 flows, "));
    assert_non_null(strstr(r.out, "ib tier 1: ib switch 0 -> ib switch 32"));
    /* the Chakra replay with its collectives as flows: the example's one
     * all-reduce as flows, its 4 chunks one at a time on the ring (the
     * system file's one active chunk), then its endpoint delays and
     * reduction passes (the system file's); alone on the fabric, sharing
     * its links with nothing, the run without --flows to the ns */
    snprintf(args, sizeof args,
             "simulate --chakra %s/chakra/step --astra-network %s/astra/ring8.yml "
             "--astra-system %s/astra/system.json --flows",
             examples, examples, examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "finished after 56790164 ns (56.790164 ms)\n"
                                  "collectives on the fabric: 1, 1 as flows sharing its links "
                                  "(896 flows)\n"));
    snprintf(args, sizeof args,
             "simulate --chakra %s/chakra/step --astra-network %s/astra/ring8.yml --max-flows 10",
             examples, examples);
    expect_error(args, "comet simulate: --max-flows: needs --flows (it bounds the flows the "
                       "collectives start)");
    /* the hot links over time: a Chrome trace of counters and a report */
    snprintf(args, sizeof args,
             "simulate --system %s/astra-ring8.yaml --collective all-reduce --size '1 GiB' "
             "--flows --splits 1 --trace flows.json --report flows.html",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    static char text[1 << 16];
    char path[512];
    snprintf(path, sizeof path, "%s/flows.json", workdir);
    slurp(path, text, sizeof text);
    assert_non_null(strstr(text, "{\"name\": \"ring port: npu 0 -> npu 1\", \"ph\": \"C\", "
                                 "\"pid\": 1, \"ts\": 0.500000, \"args\": {\"utilization %\": "
                                 "100.0000}}"));
    snprintf(path, sizeof path, "%s/flows.html", workdir);
    slurp(path, text, sizeof text);
    assert_non_null(strstr(text, "Most utilized links"));
    assert_non_null(strstr(text, "utilization over time"));
    expect_error("simulate --collective all-reduce --size '1 GiB' --npus 8 --span 8",
                 "comet simulate: --span: needs --flows with --collective (it sets up the "
                 "flow-level simulation)");
    expect_error("simulate --collective all-reduce --size '1 GiB' --npus 8 --flows --congestion",
                 "comet simulate: --flows: takes --splits, --span, --concurrent, --one-group, "
                 "--scheduler and --max-flows, not the per-dimension simulator's options");
    /* Themis inside the flows, the example of docs/fabric.md: (63/64) S/B */
    snprintf(args, sizeof args,
             "simulate --system %s/two-switches.yaml --collective all-reduce --size '1 GiB' "
             "--splits 16 --flows --scheduler themis --json",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"scheduler\": \"themis\""));
    const char *tt = strstr(r.out, "\"time_s\": ");
    assert_non_null(tt);
    assert_close(strtod(tt + 10, NULL), 63.0 / 64.0 * 1073741824.0 / 100e9, 1e-6);
    snprintf(args, sizeof args,
             "simulate --system %s/astra-ring8.yaml --collective all-reduce --size '1 GiB' "
             "--flows --span 3",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "comet simulate: --span: expected one NPU count per dimension "
                                  "(1), comma-separated, each dividing its dimension's size (ring "
                                  "has 8), got \"3\""));
}

/* The training step on the fabric, seen: TP 4 x DP 4 x PP 2 on nodes of
 * 8 whose scale-out is a fat tree at 8:1 (a leaf per node, one uplink).
 * The step's Chrome trace gets a counter track per hot link (the leaves'
 * uplinks and their way down, 100 % while the gradients and the sends
 * queue on them) in a process after the stages', and the report a
 * section on the links with its charts (as files with --plots). */
static void test_simulate_step_links(void **state)
{
    (void)state;
    write_file("ft8.yaml", "system:\n  preset: a100-80g-selene\n  collective_chunks: 1\n"
                           "  network:\n"
                           "    - {name: nvlink, size: 8, topology: switch, bandwidth: \"300 GB/s\","
                           " latency: \"2 us\"}\n"
                           "    - {name: ib, size: 4, topology: fat_tree, radix: 9, "
                           "oversubscription: 8, routing: spray, bandwidth: \"25 GB/s\", "
                           "latency: \"2 us\"}\n");
    cli_run r;
    run(&r, "simulate --model megatron-22b --system ft8.yaml --tp 4 --pp 2 --dp 4 --gbs 32 "
            "--flows --trace step.json --report step.html --plots step-plots");
    assert_int_equal(r.status, 0);
    /* the output names the most utilized links: the tree's uplink first */
    assert_non_null(strstr(r.out, "most utilized link ib tier 1: ib switch 0 -> ib switch 4  "));
    static char text[1 << 22];
    slurp_in_workdir("step.json", text, sizeof text);
    assert_non_null(strstr(text, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 2, "
                                 "\"args\": {\"name\": \"fabric links (utilization of the "
                                 "flows)\"}}"));
    assert_non_null(strstr(text, "{\"name\": \"ib tier 1: ib switch 0 -> ib switch 4\", "
                                 "\"ph\": \"C\", \"pid\": 2, \"ts\": 0.000000, "
                                 "\"args\": {\"utilization %\": 0.0000}}"));
    assert_non_null(strstr(text, "\"ph\": \"C\", \"pid\": 2, \"ts\": "));
    assert_non_null(strstr(text, "\"args\": {\"utilization %\": 100.0000}}"));
    assert_non_null(strstr(text, "\n]}\n"));
    slurp_in_workdir("step.html", text, sizeof text);
    assert_non_null(strstr(text, "The fabric's links"));
    assert_non_null(strstr(text, "Most utilized links"));
    assert_non_null(strstr(text, "ib tier 1: ib switch 0 -&gt; ib switch 4"));
    assert_non_null(strstr(text, "Bytes carried per tier"));
    assert_non_null(strstr(text, "utilization over time"));
    slurp_in_workdir("step-plots/hot-links-table.csv", text, sizeof text);
    assert_non_null(strstr(text, "schema_version,link,carried (B),utilization (fraction)\n1,ib tier 1: "));
    /* without --flows the step goes on this uneven fabric by itself, and
     * says why; --no-flows keeps it off (no links, the trace as before) */
    run(&r, "simulate --model megatron-22b --system ft8.yaml --tp 4 --pp 2 --dp 4 --gbs 32");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "simulated step (compute one NPU per pipeline stage, transfers "
                                  "every NPU's on the fabric: ib is a fat tree oversubscribed "
                                  "8:1)\n"));
    run(&r, "simulate --model megatron-22b --system ft8.yaml --tp 4 --pp 2 --dp 4 --gbs 32 "
            "--no-flows --trace plain.json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "simulated step (one NPU per pipeline stage)\n"));
    slurp_in_workdir("plain.json", text, sizeof text);
    assert_null(strstr(text, "fabric links"));
    expect_error("simulate --model megatron-22b --system ft8.yaml --tp 4 --pp 2 --dp 4 --gbs 32 "
                 "--flows --no-flows",
                 "comet simulate: --no-flows: keeps the step off the fabric; --flows puts it "
                 "there: use one of them");
    /* on switches alone every NPU sees the same network: one per stage */
    run(&r, "simulate --model megatron-22b --system a100-80g-selene --tp 4 --pp 2 --dp 4 "
            "--gbs 32 --json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"fabric\": {\"npus\": 0, \"why\": \"every NPU sees the "
                                  "same network\"}"));
}

/* --max-size: nccl-tests' table over sizes. Two NPUs on NVLink under
 * NCCL's protocol model, 100 GB/s, one chunk (docs/collectives.md): 1 KiB
 * by LL in 7.8 us + 1024 / 50e9 = 7.82048 us, 1 MiB by Simple in 15.2 us +
 * 2^20 / 100e9 = 25.68576 us; busbw = algbw on 2 NPUs. */
static void test_simulate_collective_sizes(void **state)
{
    (void)state;
    write_file("proto2.yaml", "system:\n  preset: a100-80g-selene\n  collective_chunks: 1\n"
                              "  network:\n"
                              "    - {size: 2, bandwidth: \"100 GB/s\", protocols: nccl_nvlink}\n");
    cli_run r;
    run(&r, "simulate --system proto2.yaml --collective all-reduce --npus 2 --size '1 KiB' "
            "--max-size '1 MiB' --step-factor 1024 --json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "{\"bytes\": 1024, \"time_s\": 7.82048e-06, \"analytic_s\": "
                                  "7.82048e-06, \"algbw_Bps\": 130938254.4, \"busbw_Bps\": "
                                  "130938254.4, \"chunks\": 1, \"protocols\": [\"LL\"]}"));
    assert_non_null(strstr(r.out, "{\"bytes\": 1048576, \"time_s\": 2.568576e-05"));
    assert_non_null(strstr(r.out, "\"protocols\": [\"Simple\"]}\n]}"));
    run(&r, "simulate --system proto2.yaml --collective all-reduce --npus 2 --size '1 KiB' "
            "--max-size '1 MiB' --step-factor 1024");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "           1024           7.82         0.13         0.13       1  LL\n"));
    assert_non_null(strstr(r.out, "        1048576          25.69        40.82        40.82       1  Simple\n"));
    expect_error("simulate --system proto2.yaml --collective all-reduce --size '1 MiB' "
                 "--max-size '1 KiB'",
                 "comet simulate: --max-size: must be at least --size (1.04858e+06 B), got 1024 B");
    expect_error("simulate --system proto2.yaml --collective all-reduce --size '1 MiB' "
                 "--step-factor 4",
                 "comet simulate: --step-factor: needs --max-size (it spaces the rows of a table "
                 "over sizes)");
}

/* A step of a million microbatches (125 s and 9.6 GB before it ran out of
 * memory) is simulated through its steady state in bounded memory; one
 * that cannot fit the task limit is refused with the flag that raises it. */
/* Physical quantities outside their sane range are refused where they are
 * written, naming the flag or the file, line, column and key: a bandwidth of
 * 1e-320 B/s once stalled the simulation ("0 of 4 chunks done", exit 1), a
 * delay of 1e300 ns gave a result of 7.6e298 ms, and a network bandwidth of
 * 1e-320 GB/s was blamed on the trace ("comm_size gives a time of inf s"). */
static void test_quantities_out_of_range(void **state)
{
    (void)state;
    const char *allreduce = "simulate --collective all-reduce --size '1 MiB' --npus 64";
    char args[512];
    snprintf(args, sizeof args, "%s --local-mem-bw '1e-320 B/s'", allreduce);
    expect_error(args, "comet simulate: --local-mem-bw: 1e-320 B/s is outside the sane range "
                       "1 KB/s to 10 PB/s");
    snprintf(args, sizeof args, "%s --local-mem-bw '20000 TB/s'", allreduce);
    expect_error(args, "comet simulate: --local-mem-bw: 20000 TB/s is outside the sane range "
                       "1 KB/s to 10 PB/s");
    snprintf(args, sizeof args, "%s --endpoint-delay '1e300 ns'", allreduce);
    expect_error(args, "comet simulate: --endpoint-delay: 1e300 ns is outside the sane range "
                       "1 ps to 1000 s");
    snprintf(args, sizeof args, "%s --endpoint-delay '1.7e308 s'", allreduce);
    expect_error(args, "comet simulate: --endpoint-delay: 1.7e308 s is outside the sane range "
                       "1 ps to 1000 s");
    snprintf(args, sizeof args, "%s --endpoint-delay '0.0005 ns'", allreduce);
    expect_error(args, "comet simulate: --endpoint-delay: 0.0005 ns is outside the sane range "
                       "1 ps to 1000 s");
    expect_error("simulate --collective all-reduce --size '2e6 TB' --npus 64",
                 "comet simulate: --size: 2e6 TB is outside the sane range 1 B to 1 EB");
    /* the bounds themselves are accepted */
    cli_run r;
    snprintf(args, sizeof args, "%s --endpoint-delay '1000 s' --local-mem-bw '1 KB/s'",
             allreduce);
    run(&r, args);
    assert_int_equal(r.status, 0);

    /* ASTRA-sim's files write bare numbers in fixed units (GB/s, ns, TFLOPS) */
    write_file("tiny.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 1e-320 ]\n"
                           "latency: [ 500 ]\n");
    expect_error("simulate --chakra step --astra-network tiny.yml",
                 "comet simulate: tiny.yml:3:14: bandwidth[0]: 1e-320 GB/s is outside the sane "
                 "range 1 KB/s to 10 PB/s");
    write_file("slow.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\n"
                           "latency: [ 1e13 ]\n");
    expect_error("simulate --chakra step --astra-network slow.yml",
                 "comet simulate: slow.yml:4:12: latency[0]: 1e13 ns is outside the sane "
                 "range 1 ps to 1000 s");
    write_file("ring.yml", "topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\n"
                           "latency: [ 0 ]\n");
    write_file("bw.json", "{\n  \"local-mem-bw\": 1e-320\n}\n");
    expect_error("simulate --chakra step --astra-network ring.yml --astra-system bw.json",
                 "comet simulate: bw.json:2:19: local-mem-bw: 1e-320 GB/s is outside the sane "
                 "range 1 KB/s to 10 PB/s");
    write_file("delay.json", "{\"endpoint-delay\": 1e14}\n");
    expect_error("simulate --chakra step --astra-network ring.yml --astra-system delay.json",
                 "comet simulate: delay.json:1:20: endpoint-delay: 1e14 ns is outside the sane "
                 "range 1 ps to 1000 s");
    write_file("perf.json", "{\"roofline-enabled\": 1, \"peak-perf\": 1e-9}\n");
    expect_error("simulate --chakra step --astra-network ring.yml --astra-system perf.json",
                 "comet simulate: perf.json:1:38: peak-perf: 1e-9 TFLOPS is outside the sane "
                 "range 1 MFLOPS to 10 EFLOPS");
    write_file("mem.json", "{\"memory-type\": \"PER_NPU_MEMORY_EXPANSION\", "
                           "\"remote-mem-latency\": 0, \"remote-mem-bw\": 2e7}\n");
    expect_error("simulate --chakra step --astra-network ring.yml --astra-memory mem.json",
                 "comet simulate: mem.json:1:87: remote-mem-bw: 2e7 GB/s is outside the sane "
                 "range 1 KB/s to 10 PB/s");
}

static void test_simulate_huge_step(void **state)
{
    (void)state;
    cli_run r;
    run(&r, "simulate --tp 8 --pp 8 --dp 1 --gbs 1048576 --mb 1");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "           51 of 1048576 microbatches simulated, the rest "
                                  "extrapolated from the steady state ("));
    run(&r, "simulate --tp 8 --pp 8 --dp 1 --gbs 1048576 --mb 1 --json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"microbatches\": 1048576, \"simulated_microbatches\": 51, "));
    expect_error("simulate --tp 8 --pp 8 --dp 1 --gbs 1048576 --mb 1 --max-tasks 100",
                 "comet simulate: one round of 1 microbatch needs more than 100 tasks, the "
                 "simulator's limit (raise it: comet simulate --max-tasks)");
    expect_error("simulate --max-tasks 0",
                 "comet simulate: --max-tasks: 0 is out of range [1, 200000000]");
    /* comet export needs every task of the step: refused before building */
    expect_error("export --chakra big --tp 8 --pp 8 --dp 1 --gbs 1048576 --mb 1",
                 "comet export: the step needs 624951304 tasks, past the limit of 8000000 a step "
                 "graph may hold (fewer microbatches, layers or stages fit)");
}

/* An ASTRA-sim experiment through the CLI: 20 ms of compute, then a
 * dependent 1 GiB all-reduce on Ring(8) with ASTRA-sim's files. */
static void test_simulate_chakra(void **state)
{
    (void)state;
    uint64_t dep = 1;
    comet_et_node n[2] = {{.id = 1, .type = COMET_ET_COMPUTE, .duration_micros = 20000},
                          {.id = 2, .type = COMET_ET_COLLECTIVE, .comm_type = COMET_ET_ALL_REDUCE,
                           .comm_size = 1073741824.0, .n_deps = 1, .deps = &dep}};
    for (int r = 0; r < 8; r++) {
        char path[512];
        snprintf(path, sizeof path, "%s/step.%d.et", workdir, r);
        comet_error err = {0};
        assert_int_equal(comet_et_write(path, "0.0.4", n, 2, &err), COMET_OK);
    }
    cli_run r;
    char args[13000];
    snprintf(args, sizeof args,
             "simulate --chakra step --astra-network %s/astra/ring8.yml --astra-system "
             "%s/astra/system.json --astra-memory %s/astra/memory.json",
             examples, examples, examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "finished after 56790164 ns"));
    assert_non_null(strstr(r.out, "     7         56790164         36790164      20.000000"));
    snprintf(args, sizeof args,
             "simulate --chakra step --astra-network %s/astra/ring8.yml --astra-comm-group empty "
             "--json",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"ranks\": 8, \"nodes\": 16,"));
    expect_error("simulate --chakra nowhere --astra-network nowhere.yml",
                 "comet simulate: nowhere.yml: cannot read: No such file or directory");
    snprintf(args, sizeof args, "simulate --chakra nowhere --astra-network %s/astra/ring8.yml",
             examples);
    expect_error(args, "comet simulate: no trace files nowhere.0.et, nowhere.1.et, ...");
    expect_error("simulate --chakra step",
                 "comet simulate: --astra-network: is required with --chakra (ASTRA-sim's "
                 "network YAML)");
    /* read limits: 16 nodes in 8 ranks, the 11th is in rank 5; the flag is named */
    snprintf(args, sizeof args, "simulate --chakra step --astra-network %s/astra/ring8.yml "
             "--max-trace-nodes 10", examples);
    expect_error(args, "comet simulate: step.5.et: --max-trace-nodes: the trace has more than "
                       "10 nodes over all ranks, past the read limit; raise the limit to read it");
    snprintf(args, sizeof args, "simulate --chakra step --astra-network %s/astra/ring8.yml "
             "--max-trace-memory \"1 KiB\"", examples);
    /* the reader's first array of nodes (256 of 104 bytes) passes 1 KiB in rank 0 */
    expect_error(args, "comet simulate: step.0.et: --max-trace-memory: the trace has more than "
                       "1024 bytes in the reader's memory (nodes, dependencies, names and the "
                       "message being decoded), past the read limit; raise the limit to read it");
    /* one dependency per rank: the 6th is in rank 5 */
    snprintf(args, sizeof args, "simulate --chakra step --astra-network %s/astra/ring8.yml "
             "--max-trace-deps 5", examples);
    expect_error(args, "comet simulate: step.5.et: --max-trace-deps: the trace has more than "
                       "5 dependencies over all ranks, past the read limit; raise the limit to "
                       "read it");
    snprintf(args, sizeof args, "simulate --chakra step --astra-network %s/astra/ring8.yml "
             "--max-trace-nodes 16 --max-trace-deps 8 --max-trace-bytes 0 "
             "--max-trace-memory \"1 MiB\" --json",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"ranks\": 8, \"nodes\": 16,"));
    snprintf(args, sizeof args, "simulate --chakra step --astra-network %s/astra/ring8.yml "
             "--max-trace-bytes lots", examples);
    run(&r, args);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--max-trace-bytes"));
    snprintf(args, sizeof args, "simulate --chakra step --astra-network %s/astra/ring8.yml "
             "--max-trace-nodes -1", examples);
    expect_error(args, "comet simulate: --max-trace-nodes: -1 is out of range [0, "
                       "9223372036854775807]");
    /* a directory given as a rank's trace */
    char folder[512];
    snprintf(folder, sizeof folder, "%s/folder.0.et", workdir);
    assert_int_equal(mkdir(folder, 0700), 0);
    snprintf(args, sizeof args, "simulate --chakra folder --astra-network %s/astra/ring8.yml",
             examples);
    expect_error(args, "comet simulate: folder.0.et: cannot read: Is a directory");
}

/* comet export writes traces that comet simulate --chakra runs to the step
 * comet simulate gives directly (13.519 s for the default job). */
static void test_export_chakra(void **state)
{
    (void)state;
    cli_run r;
    run(&r, "export --chakra gpt3");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "wrote gpt3.0.et ... gpt3.63.et (64 ranks, "));
    run(&r, "simulate --chakra gpt3 --astra-network gpt3.network.yml --astra-system "
            "gpt3.system.json --astra-memory gpt3.memory.json --astra-comm-group gpt3.groups.json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "finished after 13518"));
    run(&r, "simulate");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "simulated  13.519 s"));
    expect_error("export", "comet export: --chakra: is required (the trace prefix, e.g. out/gpt3)");
    expect_error("export --chakra x --json",
                 "comet export: unknown option \"--json\" (see 'comet export --help')");
    expect_error("export --chakra x --tp 7", "comet export: --tp: 7 does not divide heads (96)");
}

/* The names in workdir/sub, sorted, one per line. */
static void list_dir(const char *sub, char *out, size_t cap)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cd %s/%s && ls -A | sort", workdir, sub);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    pclose(p);
}

#define SMALL_EXPORT "--model megatron-22b --tp 2 --pp 2 --gbs 2" /* 4 ranks of 28 KB */

/* Run shell commands in workdir/sub (created first); they must succeed. */
static void shell_in(const char *sub, const char *commands)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/%s && cd %s/%s && %s", workdir, sub, workdir, sub,
             commands);
    assert_int_equal(system(cmd), 0);
}

/* A link planted at the temporary name comet once used (PREFIX.N.et.tmp)
 * is neither followed nor removed; a failed export, mid-way through the
 * ranks or when renaming them, leaves no file of its own, and a failure
 * while writing leaves an earlier export whole. */
static void test_export_writes_safely(void **state)
{
    (void)state;
    char names[4096];
    shell_in("safe", "echo precious > victim && ln -s victim x.0.et.tmp && "
                     "ln -s victim x.network.yml.tmp");
    cli_run r;
    run(&r, "export --chakra safe/x " SMALL_EXPORT);
    assert_int_equal(r.status, 0);
    list_dir("safe", names, sizeof names);
    assert_string_equal(names, "victim\nx.0.et\nx.0.et.tmp\nx.1.et\nx.2.et\nx.3.et\n"
                               "x.groups.json\nx.memory.json\nx.network.yml\n"
                               "x.network.yml.tmp\nx.system.json\n");
    char path[600], text[64];
    snprintf(path, sizeof path, "%s/safe/victim", workdir);
    slurp(path, text, sizeof text);
    assert_string_equal(text, "precious\n");

    /* the disk fills after the side files (a file size limit of 10 KB,
     * the signal ignored so the write fails): exit 1, the earlier export
     * untouched, no temporaries */
    snprintf(path, sizeof path, "%s/safe/x.0.et", workdir);
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);
    run_after(&r, "trap '' XFSZ; ulimit -f 20;", "export --chakra safe/x " SMALL_EXPORT);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "comet export: safe/x.0.et: write failed: File too large\n"));
    list_dir("safe", names, sizeof names);
    assert_string_equal(names, "victim\nx.0.et\nx.0.et.tmp\nx.1.et\nx.2.et\nx.3.et\n"
                               "x.groups.json\nx.memory.json\nx.network.yml\n"
                               "x.network.yml.tmp\nx.system.json\n");
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(after.st_ino, before.st_ino);

    /* a new prefix, and rank 2 cannot be put in place (a directory holds
     * its name): exit 2 naming it, found before any file is written */
    shell_in("safe", "mkdir y.2.et");
    run(&r, "export --chakra safe/y " SMALL_EXPORT);
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, "comet export: safe/y.2.et: cannot write: Is a directory\n");
    list_dir("safe", names, sizeof names);
    assert_string_equal(names, "victim\nx.0.et\nx.0.et.tmp\nx.1.et\nx.2.et\nx.3.et\n"
                               "x.groups.json\nx.memory.json\nx.network.yml\n"
                               "x.network.yml.tmp\nx.system.json\ny.2.et\n");
    /* a prefix in a directory that is not there, or under a file: bad input */
    expect_error("export --chakra nodir/x " SMALL_EXPORT,
                 "comet export: nodir/x: --chakra: cannot write: No such file or directory");
    expect_error("export --chakra safe/victim/x " SMALL_EXPORT,
                 "comet export: safe/victim/x: --chakra: cannot write: Not a directory");
}

/* A failed export leaves the earlier export under its prefix as it was:
 * a side file's name taken by a directory is found before the work (exit
 * 2, nothing written), and the earlier files keep their content. */
static void test_export_failure_keeps_earlier_set(void **state)
{
    (void)state;
    char names[4096], before[4096], after[4096], path[600];
    shell_in("ex3", "true");
    cli_run r;
    run(&r, "export --chakra ex3/p " SMALL_EXPORT " --gbs 4");
    assert_int_equal(r.status, 0);
    snprintf(path, sizeof path, "%s/ex3/p.network.yml", workdir);
    slurp(path, before, sizeof before);
    assert_true(strlen(before) > 100);
    shell_in("ex3", "rm p.groups.json && mkdir -p p.groups.json/x");
    run(&r, "export --chakra ex3/p " SMALL_EXPORT " --gbs 8");
    assert_int_equal(r.status, 2);
    assert_string_equal(r.err, "comet export: ex3/p.groups.json: cannot write: Is a directory\n");
    list_dir("ex3", names, sizeof names);
    assert_string_equal(names, "p.0.et\np.1.et\np.2.et\np.3.et\np.groups.json\np.memory.json\n"
                               "p.network.yml\np.system.json\n");
    slurp(path, after, sizeof after);
    assert_string_equal(after, before);
}

/* Exporting fewer ranks to a prefix removes the ranks the earlier, larger
 * export left (regular files named exactly PREFIX.N.et from the new count
 * on), so the set runs as it is; other names stay. */
static void test_export_fewer_ranks_removes_stale(void **state)
{
    (void)state;
    char names[4096];
    shell_in("ex4", "echo keep > p.08.et && echo keep > p.x.et");
    cli_run r;
    run(&r, "export --chakra ex4/p --model megatron-22b --tp 2 --pp 4 --gbs 8");
    assert_int_equal(r.status, 0);
    list_dir("ex4", names, sizeof names);
    assert_string_equal(names, "p.0.et\np.08.et\np.1.et\np.2.et\np.3.et\np.4.et\np.5.et\n"
                               "p.6.et\np.7.et\np.groups.json\np.memory.json\np.network.yml\n"
                               "p.system.json\np.x.et\n");
    run(&r, "export --chakra ex4/p --model megatron-22b --tp 1 --pp 2 --gbs 8");
    assert_int_equal(r.status, 0);
    list_dir("ex4", names, sizeof names);
    assert_string_equal(names, "p.0.et\np.08.et\np.1.et\np.groups.json\np.memory.json\n"
                               "p.network.yml\np.system.json\np.x.et\n");
    run(&r, "simulate --chakra ex4/p --astra-network ex4/p.network.yml --astra-system "
            "ex4/p.system.json --astra-comm-group ex4/p.groups.json");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
}

/* The removal of stale ranks stops at the first gap (as docs/chakra.md
 * says): ranks past it stay, and comet simulate --chakra, counting ranks
 * up to the first missing name, reads only the new ones. */
static void test_export_stale_ranks_stop_at_gap(void **state)
{
    (void)state;
    char names[4096];
    shell_in("ex5", "true");
    cli_run r;
    run(&r, "export --chakra ex5/p --model megatron-22b --tp 2 --pp 4 --gbs 8");
    assert_int_equal(r.status, 0);
    shell_in("ex5", "rm p.5.et");
    run(&r, "export --chakra ex5/p --model megatron-22b --tp 1 --pp 2 --gbs 8");
    assert_int_equal(r.status, 0);
    list_dir("ex5", names, sizeof names);
    assert_string_equal(names, "p.0.et\np.1.et\np.6.et\np.7.et\np.groups.json\n"
                               "p.memory.json\np.network.yml\np.system.json\n");
    run(&r, "simulate --chakra ex5/p --astra-network ex5/p.network.yml --astra-system "
            "ex5/p.system.json --astra-comm-group ex5/p.groups.json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "2 ranks"));
}

/* Whether workdir/sub holds a name with ".tmp." in it. */
static bool has_temporary(const char *sub)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", workdir, sub);
    DIR *d = opendir(path);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL)
        found = strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return found;
}

/* SIGTERM during an export, once it has made a temporary: exit 130, one
 * line on stderr, no temporary or backup left, and the earlier (smaller)
 * export under the prefix untouched. */
static void test_export_sigterm_leaves_nothing(void **state)
{
    (void)state;
    char names[4096], before[4096], rank0[600], earlier[65536], after[65536];
    shell_in("sig", "true");
    cli_run r;
    run(&r, "export --chakra sig/p " SMALL_EXPORT);
    assert_int_equal(r.status, 0);
    list_dir("sig", before, sizeof before);
    snprintf(rank0, sizeof rank0, "%s/sig/p.0.et", workdir);
    memset(earlier, 0, sizeof earlier);
    memset(after, 0, sizeof after);
    slurp(rank0, earlier, sizeof earlier);
    /* the default GPT-3 job: 64 ranks, about a second of writing */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char errpath[600];
        snprintf(errpath, sizeof errpath, "%s/sig-err.txt", workdir);
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        int null = open("/dev/null", O_WRONLY);
        if (fd < 0 || null < 0 || chdir(workdir) != 0)
            _exit(99);
        dup2(null, 1);
        dup2(fd, 2);
        execl(binary, binary, "export", "--chakra", "sig/p", (char *)NULL);
        _exit(98);
    }
    int polls = 0, status = 0;
    struct timespec tick = {0, 200000}; /* 0.2 ms */
    while (!has_temporary("sig") && waitpid(pid, &status, WNOHANG) == 0 && polls < 200000) {
        nanosleep(&tick, NULL);
        polls++;
    }
    assert_true(has_temporary("sig")); /* caught mid-way, before the commit */
    assert_int_equal(kill(pid, SIGTERM), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 130);
    char errpath[600], errtext[4096];
    snprintf(errpath, sizeof errpath, "%s/sig-err.txt", workdir);
    slurp(errpath, errtext, sizeof errtext);
    assert_string_equal(errtext, "comet export: interrupted; none of its files was left, and an "
                                 "earlier export under sig/p stays as it was\n");
    list_dir("sig", names, sizeof names);
    assert_string_equal(names, before); /* no *.tmp.*, no *.old.*, no new rank */
    assert_false(has_temporary("sig"));
    slurp(rank0, after, sizeof after); /* 28 KB of 4 ranks: all of it */
    assert_memory_equal(earlier, after, sizeof earlier);
}

/* version and help take no options but --help: an extra word is refused
 * like every other command's unknown flag (exit 2, one line). */
static void test_version_help_refuse_flags(void **state)
{
    (void)state;
    expect_error("version --bogus",
                 "comet version: unknown option \"--bogus\" (version takes none; see 'comet help')");
    expect_error("help --bogus",
                 "comet help: unknown option \"--bogus\" (help takes none; see 'comet help')");
    expect_error("--version x",
                 "comet --version: unknown option \"x\" (--version takes none; see 'comet help')");
    /* alone, they still work */
    const char *plain[][2] = {{"version", "comet " COMET_VERSION " ("},
                              {"help", "usage: comet <command> [options]"},
                              {"version --help", "usage: comet <command> [options]"}};
    for (int i = 0; i < 3; i++) {
        cli_run r;
        run(&r, plain[i][0]);
        assert_int_equal(r.status, 0);
        assert_string_equal(r.err, "");
        assert_non_null(strstr(r.out, plain[i][1]));
    }
}

/* The flag parser itself (cli/args.c), on a table with a flag of each
 * kind: what lands where, the order late flags act in, and each wording
 * and --help rule the commands use. */
typedef struct demo_args {
    bool verbose;
    const char *out;
    int64_t count;
    double size;
    char log[256];      /* the calls, positionals and between, in order */
} demo_args;

static void demo_log(demo_args *d, const char *what, const char *text)
{
    size_t n = strlen(d->log);
    snprintf(d->log + n, sizeof d->log - n, "%s%s=%s", n ? " " : "", what, text ? text : "-");
}

static comet_status demo_call(const cli_arg *f, const char *value, void *dest, comet_error *err)
{
    (void)err;
    demo_log(dest, f->name, value);
    return COMET_OK;
}

static comet_status demo_positional(const char *arg, void *dest, comet_error *err)
{
    if (strcmp(arg, "bad") == 0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL, "bad positional");
    demo_log(dest, "file", arg);
    return COMET_OK;
}

static comet_status demo_between(void *dest, int positionals, int lates, comet_error *err)
{
    (void)err;
    char counts[32];
    snprintf(counts, sizeof counts, "%d/%d", positionals, lates);
    demo_log(dest, "between", counts);
    return COMET_OK;
}

static const cli_arg demo_flags[] = {
    CLI_ARG_HELP_FLAGS,
    {.name = "--verbose", .alias = "-v", .kind = CLI_ARG_SWITCH,
     .offset = offsetof(demo_args, verbose)},
    {.name = "-o", .alias = "--output", .kind = CLI_ARG_TEXT, .offset = offsetof(demo_args, out)},
    {.name = "--count", .kind = CLI_ARG_INT, .offset = offsetof(demo_args, count), .min = 1,
     .max = 10},
    {.name = "--size", .kind = CLI_ARG_QUANTITY, .offset = offsetof(demo_args, size),
     .unit = COMET_UNIT_BYTES},
    {.name = "--mark", .kind = CLI_ARG_CALL, .call = demo_call},
    {.name = "--late", .kind = CLI_ARG_CALL, .value = true, .late = true, .call = demo_call},
};

static cli_args_spec demo_spec(cli_help_rule help)
{
    return (cli_args_spec){.command = "demo",
                           .flags = demo_flags,
                           .n_flags = sizeof demo_flags / sizeof demo_flags[0],
                           .help = help,
                           .positional = demo_positional,
                           .between = demo_between};
}

/* Parse a command line of words (NULL-ended, the command's name first). */
static comet_status demo_parse(const cli_args_spec *spec, const char *const *words,
                               demo_args *d, bool *help, comet_error *err)
{
    char *argv[32];
    int argc = 0;
    while (words[argc]) {
        argv[argc] = (char *)words[argc];
        argc++;
    }
    memset(d, 0, sizeof *d);
    comet_error_clear(err);
    *help = false;
    return cli_args_parse(spec, argc, argv, d, help, err);
}

static void expect_parse_error(const cli_args_spec *spec, const char *const *words,
                               const char *key, const char *message)
{
    demo_args d;
    bool help;
    comet_error err;
    assert_int_equal(demo_parse(spec, words, &d, &help, &err), COMET_EINPUT);
    assert_false(help);
    assert_string_equal(err.key, key);
    assert_string_equal(err.message, message);
}

static void test_args_each_kind(void **state)
{
    (void)state;
    cli_args_spec spec = demo_spec(CLI_HELP_OPTION);
    demo_args d;
    bool help;
    comet_error err;
    /* the late flag acts after the positionals and `between`, whatever
     * its place; a repeated flag acts again (the last value wins) */
    const char *words[] = {"demo", "--late", "L1", "a.yaml", "-v", "--output", "x.txt",
                           "--count", "3", "--size", "2 KiB", "--mark", "-o", "y.txt",
                           "--count", "7", "-", "--late", "L2", "", NULL};
    assert_int_equal(demo_parse(&spec, words, &d, &help, &err), COMET_OK);
    assert_false(help);
    assert_true(d.verbose);
    assert_string_equal(d.out, "y.txt");
    assert_int_equal(d.count, 7);
    assert_true(d.size == 2048.0);
    assert_string_equal(d.log, "file=a.yaml --mark=- file=- file= between=3/2 --late=L1 "
                               "--late=L2");
    /* nothing given: nothing set, `between` still runs */
    const char *none[] = {"demo", NULL};
    assert_int_equal(demo_parse(&spec, none, &d, &help, &err), COMET_OK);
    assert_false(d.verbose);
    assert_null(d.out);
    assert_int_equal(d.count, 0);
    assert_string_equal(d.log, "between=0/0");
    /* or one positional argument, where `single` puts it; a second is refused */
    spec.positional = NULL;
    spec.single = "demo file";
    spec.single_offset = offsetof(demo_args, out);
    const char *one[] = {"demo", "a.yaml", "-v", NULL};
    assert_int_equal(demo_parse(&spec, one, &d, &help, &err), COMET_OK);
    assert_string_equal(d.out, "a.yaml");
    assert_true(d.verbose);
    expect_parse_error(&spec, (const char *const[]){"demo", "a.yaml", "b.yaml", NULL}, "",
                       "one demo file at a time (got \"a.yaml\" and \"b.yaml\")");
}

static void test_args_errors(void **state)
{
    (void)state;
    cli_args_spec spec = demo_spec(CLI_HELP_OPTION);
    expect_parse_error(&spec, (const char *const[]){"demo", "--nope", "x", NULL}, "",
                       "unknown option \"--nope\" (see 'comet demo --help')");
    /* a missing or empty value; the error names the usual spelling */
    expect_parse_error(&spec, (const char *const[]){"demo", "--count", NULL}, "--count",
                       "needs a value");
    expect_parse_error(&spec, (const char *const[]){"demo", "--output", "", "a", NULL}, "-o",
                       "needs a value");
    /* a late flag's value is checked in the first pass, before `between` */
    expect_parse_error(&spec, (const char *const[]){"demo", "--late", NULL}, "--late",
                       "needs a value");
    /* bad values, in the words the commands have always used */
    expect_parse_error(&spec, (const char *const[]){"demo", "--count", "11", NULL}, "--count",
                       "11 is out of range [1, 10]");
    expect_parse_error(&spec, (const char *const[]){"demo", "--count", "+3", NULL}, "--count",
                       "expected an integer, got \"+3\"");
    demo_args d;
    bool help;
    comet_error err;
    assert_int_equal(demo_parse(&spec, (const char *const[]){"demo", "--size", "lots", NULL}, &d,
                                &help, &err),
                     COMET_EINPUT);
    assert_string_equal(err.key, "--size");
    /* a positional's own error stops the walk */
    expect_parse_error(&spec, (const char *const[]){"demo", "bad", "--nope", NULL}, "",
                       "bad positional");
    /* without a positional handler a word is an unknown option; the
     * wording's context and hint */
    spec.positional = NULL;
    spec.unknown_context = "with --chakra";
    expect_parse_error(&spec, (const char *const[]){"demo", "word", NULL}, "",
                       "unknown option \"word\" with --chakra (see 'comet demo --help')");
    spec.unknown_context = NULL;
    spec.unknown_hint = "demo takes none";
    expect_parse_error(&spec, (const char *const[]){"demo", "-", NULL}, "",
                       "unknown option \"-\" (demo takes none)");
    /* simulate --collective's wording for an unknown last argument */
    spec.unknown_hint = NULL;
    spec.trailing_unknown_needs_value = true;
    expect_parse_error(&spec, (const char *const[]){"demo", "--nope", NULL}, "--nope",
                       "needs a value");
    expect_parse_error(&spec, (const char *const[]){"demo", "word", "", NULL}, "word",
                       "is not an option");
    expect_parse_error(&spec, (const char *const[]){"demo", "--nope", "x", NULL}, "",
                       "unknown option \"--nope\" (see 'comet demo --help')");
}

/* Whether argv asks for help under a rule: 1 help, 0 parsed, -1 an error. */
static int demo_help(cli_help_rule rule, const char *const *words)
{
    cli_args_spec spec = demo_spec(rule);
    demo_args d;
    bool help;
    comet_error err;
    comet_status st = demo_parse(&spec, words, &d, &help, &err);
    if (help) {
        assert_int_equal(st, COMET_OK);
        assert_string_equal(d.log, ""); /* nothing acted */
    }
    return st ? -1 : help;
}

static void test_args_help_rules(void **state)
{
    (void)state;
    const char *const alone[] = {"demo", "-h", NULL};
    const char *const as_value[] = {"demo", "-o", "--help", NULL};
    const char *const after_error[] = {"demo", "--nope", "--help", NULL};
    const char *const before_error[] = {"demo", "--help", "--nope", NULL};
    /* as an option, before any error, but not as a flag's value */
    assert_int_equal(demo_help(CLI_HELP_OPTION, alone), 1);
    assert_int_equal(demo_help(CLI_HELP_OPTION, as_value), 0);
    assert_int_equal(demo_help(CLI_HELP_OPTION, after_error), 1);
    /* anywhere, a flag's value too */
    assert_int_equal(demo_help(CLI_HELP_ANYWHERE, as_value), 1);
    assert_int_equal(demo_help(CLI_HELP_ANYWHERE, after_error), 1);
    /* in order: an error before it wins */
    assert_int_equal(demo_help(CLI_HELP_IN_ORDER, after_error), -1);
    assert_int_equal(demo_help(CLI_HELP_IN_ORDER, before_error), 1);
    assert_int_equal(demo_help(CLI_HELP_IN_ORDER, as_value), 0);
    /* alone only: with anything else it is an unknown option */
    assert_int_equal(demo_help(CLI_HELP_ALONE, alone), 1);
    assert_int_equal(demo_help(CLI_HELP_ALONE, before_error), -1);
    cli_args_spec spec = demo_spec(CLI_HELP_ALONE);
    expect_parse_error(&spec, before_error, "",
                       "unknown option \"--help\" (see 'comet demo --help')");
    char *argv[] = {"demo", "-o", "--chakra", NULL};
    assert_true(cli_args_present(3, argv, "--chakra"));
    assert_false(cli_args_present(3, argv, "demo"));
}

/* The command list `comet help` prints comes from the table main
 * dispatches through: every command listed there runs (its --help prints
 * its usage; comet presets takes no --help and prints its usage line as
 * an error), in the order and with the summaries of today. */
static void test_help_lists_dispatched_commands(void **state)
{
    (void)state;
    cli_run r;
    run(&r, "help");
    assert_int_equal(r.status, 0);
    const char *list = strstr(r.out, "commands:\n");
    assert_non_null(list);
    const char *expected[] = {"study",     "estimate", "search",    "sweep",  "simulate",
                              "allocate",  "report",   "calibrate", "export", "validate",
                              "deeppool",  "partition", "presets", "version"};
    const char *line = list + strlen("commands:\n");
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        char name[32];
        assert_int_equal(sscanf(line, " %31s", name), 1);
        assert_string_equal(name, expected[i]);
        assert_memory_equal(line + 2 + 10, " ", 1); /* names padded to 10 columns */
        assert_true(line[2 + 11] != ' ');
        char args[64];
        snprintf(args, sizeof args, "%s --help", name);
        cli_run h;
        run(&h, args);
        bool presets = strcmp(name, "presets") == 0;
        assert_int_equal(h.status, presets ? 2 : 0);
        assert_non_null(strstr(presets ? h.err : h.out, "usage: comet "));
        assert_null(strstr(h.err, "unknown command"));
        line = strchr(line, '\n') + 1;
    }
    assert_true(line[0] == '\n'); /* nothing else listed */
    assert_non_null(strstr(r.out, "  presets    list the embedded presets, or print one: comet "
                                  "presets show NAME\n  version    print the version\n\n"));
}

/* Exit status 2, one line and nothing on stdout, for every kind of
 * unusable output path, found before any work: a path under a regular
 * file, in a missing directory, or a directory where a file goes. */
static void test_unusable_outputs_exit_2(void **state)
{
    (void)state;
    write_file("plain", "a regular file\n");
    expect_error("estimate -o plain/x.json",
                 "comet estimate: plain/x.json: cannot write: Not a directory");
    expect_error("estimate --report nodir/r.html",
                 "comet estimate: nodir/r.html: cannot write: No such file or directory");
    expect_error("estimate --plots plain/charts",
                 "comet estimate: plain/charts: --plots: cannot write: Not a directory");
    expect_error("estimate --plots plain",
                 "comet estimate: plain: --plots: cannot create the directory: a file has its "
                 "name");
    expect_error("search --npus 64 --gbs 64 -o nodir/top.txt",
                 "comet search: nodir/top.txt: cannot write: No such file or directory");
    expect_error("simulate --trace plain/t.json",
                 "comet simulate: plain/t.json: cannot write: Not a directory");
    char line[600], args[600];
    snprintf(line, sizeof line, "comet simulate: %s: cannot write: is a directory", workdir);
    snprintf(args, sizeof args, "simulate --trace %s", workdir);
    expect_error(args, line);
    expect_error("export --chakra plain/x", "comet export: plain/x: --chakra: cannot write: Not a "
                                            "directory");
    write_file("study.yaml", test_small_study);
    /* a sweep or study refuses before sweeping, and creates nothing */
    expect_error("sweep study.yaml -o never --plots plain/charts",
                 "comet sweep: plain/charts: --plots: cannot write: Not a directory");
    expect_error("study study.yaml -o never --report nodir/r.html",
                 "comet study: nodir/r.html: cannot write: No such file or directory");
    char never[400];
    snprintf(never, sizeof never, "%s/never", workdir);
    assert_int_equal(access(never, F_OK), -1);
    expect_error("sweep study.yaml -o plain/sub --quiet",
                 "comet sweep: plain/sub: cannot create: Not a directory");
    expect_error("presets show nosuch",
                 "comet presets: no preset named \"nosuch\" (see 'comet presets list')");
}

/* A sweep or study counts its designs before it starts (the product of the
 * axes' lengths), says how many, and refuses more than --max-designs with
 * the count, the limit and the flag, creating nothing. The small study has
 * 6 designs; 16.7 million once started silently and would run for days. */
static void test_sweep_design_limit(void **state)
{
    (void)state;
    write_file("study.yaml", test_small_study);
    expect_error("sweep study.yaml --max-designs -1",
                 "comet sweep: --max-designs: -1 is out of range [0, 9223372036854775807]");
    expect_error("sweep study.yaml --max-designs", "comet sweep: --max-designs: needs a value");
    expect_error("sweep study.yaml -o capped --max-designs 5",
                 "comet sweep: --max-designs: study small has 6 cluster designs, above the limit "
                 "of 5; raise it to run them all (--max-designs 6, or 0 for no limit)");
    expect_error("study study.yaml -o capped --max-designs 5 --quiet",
                 "comet study: --max-designs: study small has 6 cluster designs, above the limit "
                 "of 5; raise it to run them all (--max-designs 6, or 0 for no limit)");
    char capped[400];
    snprintf(capped, sizeof capped, "%s/capped", workdir);
    assert_int_equal(access(capped, F_OK), -1);
    /* at the limit it runs, and the first line on stderr gives the count */
    cli_run r;
    run(&r, "sweep study.yaml -o six -j 1 --max-designs 6");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "comet sweep small: sweeping 6 cluster designs into six/\n"
                               "comet: report written to six/report.html\n");
    run(&r, "sweep study.yaml -o none -j 1 --max-designs 0 --quiet");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "comet: report written to none/report.html\n");
    /* the default (100000) refuses 64^4 designs before reading anything else */
    char sizes[1024] = "[", rates[1024] = "[";
    for (int v = 1; v <= 64; v++) {
        const char *comma = v > 1 ? ", " : "";
        snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s\"%d GiB\"", comma, v);
        snprintf(rates + strlen(rates), sizeof rates - strlen(rates), "%s\"%d GB/s\"", comma, v);
    }
    strcat(sizes, "]");
    strcat(rates, "]");
    char huge[6000];
    snprintf(huge, sizeof huge,
             "study:\n  name: huge\n  models: [gpt3-175b]\n  system: a100-80g-selene\n"
             "  npus: 64\n  global_batch: 64\n  axes:\n    hbm_capacity: %s\n"
             "    expansion_capacity: %s\n    expansion_bandwidth: [\"64 GB/s\"]\n"
             "    hbm_bandwidth: %s\n    peak_compute: [\"100 TFLOPS\", \"200 TFLOPS\", "
             "\"300 TFLOPS\", \"400 TFLOPS\"]\n",
             sizes, sizes, rates);
    write_file("huge.yaml", huge);
    expect_error("sweep huge.yaml -o never",
                 "comet sweep: --max-designs: study huge has 1048576 cluster designs, above the "
                 "limit of 100000; raise it to run them all (--max-designs 1048576, or 0 for no "
                 "limit)");
}

/* A torus's shape swept through the binary: the summary names the shapes
 * as 4x4, results.csv and results.jsonl hold them so, and comet report
 * reads both files back into a page that shows them. */
static void test_sweep_shape_axis(void **state)
{
    (void)state;
    write_file("torus.yaml",
               "study:\n  name: torus\n  models: [dlrm]\n  npus: 16\n  global_batch: 65536\n"
               "  system:\n    preset: a100-80g-selene\n    network:\n"
               "      - {name: grid, size: 16, topology: torus, bandwidth: 100 GB/s,\n"
               "         cost_per_link: 100}\n"
               "  axes:\n    network:\n      grid: {shape: [[16], [4, 4]]}\n");
    cli_run r;
    run(&r, "sweep torus.yaml -o torus -j 1 --quiet");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "network.grid.shape"));
    assert_non_null(strstr(r.out, "fastest at 4x4"));
    char text[65536], path[600];
    snprintf(path, sizeof path, "%s/torus/results.csv", workdir);
    slurp(path, text, sizeof text);
    assert_non_null(strstr(text, "schema_version,index,status,design_cost_usd,network.grid.shape,npus,"));
    assert_non_null(strstr(text, "\n1,1,ok,403200,4x4,16,dlrm,"));
    snprintf(path, sizeof path, "%s/torus/results.jsonl", workdir);
    slurp(path, text, sizeof text);
    assert_non_null(strstr(text, "\"axes\": {\"network.grid.shape\": \"4x4\"}"));
    const char *files[] = {"results.csv", "results.jsonl"};
    for (int f = 0; f < 2; f++) {
        char args[256];
        snprintf(args, sizeof args, "report torus/%s -o torus/again%d.html", files[f], f);
        run(&r, args);
        assert_int_equal(r.status, 0);
        snprintf(path, sizeof path, "%s/torus/again%d.html", workdir, f);
        slurp(path, text, sizeof text);
        assert_non_null(strstr(text, ">4x4<"));
        assert_null(strstr(text, ">524292<")); /* the shape's code only sorts (data-v) */
    }
}

/* comet report: a file that holds no sweep results is bad input (2), not
 * an empty report; a good one reports (0); a write that fails once begun
 * is exit 1 and leaves no file behind. */
static void test_report_exit_codes(void **state)
{
    (void)state;
    write_file("garbage.csv", "\x01\x02\x7f binary\n");
    write_file("empty.csv", "");
    write_file("other.csv", "name,value\nx,1\n");
    expect_error("report empty.csv -o r.html",
                 "comet report: empty.csv is empty: the sweep wrote no results (it may have "
                 "stopped before its first design point).");
    expect_error("report other.csv -o r.html",
                 "comet report: other.csv has no column index, status, design_cost_usd, npus, "
                 "model, step_time_s, tokens_per_s, hbm_total_bytes: it was written by an older comet "
                 "or by another tool. Run the sweep again with this comet to report it.");
    cli_run r;
    run(&r, "report garbage.csv -o r.html");
    assert_int_equal(r.status, 2);
    assert_int_equal(lines(r.err), 1);
    assert_non_null(strstr(r.err, "comet report: garbage.csv "));
    char path[600];
    snprintf(path, sizeof path, "%s/r.html", workdir);
    assert_int_equal(access(path, F_OK), -1);

    write_file("study.yaml", test_small_study);
    run(&r, "sweep study.yaml -o rep -j 1 --quiet");
    assert_int_equal(r.status, 0);
    run(&r, "report rep/results.csv -o rep/again.html --plots rep/charts");
    assert_int_equal(r.status, 0);
    expect_error("report rep/results.csv --plots plain/charts",
                 "comet report: plain/charts: --plots: cannot write: Not a directory");
    expect_error("report rep/results.csv -o nodir/r.html",
                 "comet report: nodir/r.html: cannot write: No such file or directory");
    /* the disk fills once writing has begun (a 512-byte file size limit) */
    run_after(&r, "mkdir -p full && trap '' XFSZ && ulimit -f 1 &&",
              "report rep/results.csv -o full/r.html");
    assert_int_equal(r.status, 1);
    assert_string_equal(r.err, "comet report: full/r.html: write failed: File too large\n");
    char names[1024];
    list_dir("full", names, sizeof names);
    assert_string_equal(names, "");
    /* the same without the shell ignoring SIGXFSZ: comet ignores it itself,
     * so the limit is a failed write (exit 1), not a kill that leaves the
     * temporary behind */
    run_after(&r, "ulimit -f 1 &&", "report rep/results.csv -o full/r.html");
    assert_int_equal(r.status, 1);
    assert_string_equal(r.err, "comet report: full/r.html: write failed: File too large\n");
    list_dir("full", names, sizeof names);
    assert_string_equal(names, "");
}

/* A failure mid-way is exit 1: stdout that cannot take the output, a
 * sweep whose results file stops growing. */
static void test_failures_midway_exit_1(void **state)
{
    (void)state;
    static const char *const commands[][2] = {
        {"estimate", "comet estimate: <stdout>: write failed: No space left on device\n"},
        {"presets list", "comet presets: <stdout>: write failed: No space left on device\n"},
    };
    for (int i = 0; i < 2; i++) {
        char cmd[5000], path[600], err[256];
        snprintf(cmd, sizeof cmd, "cd %s && %s %s >/dev/full 2>err.txt", workdir, binary,
                 commands[i][0]);
        int st = system(cmd);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 1);
        snprintf(path, sizeof path, "%s/err.txt", workdir);
        slurp(path, err, sizeof err);
        assert_string_equal(err, commands[i][1]);
    }
    cli_run r;
    write_file("study.yaml", test_small_study);
    run_after(&r, "trap '' XFSZ && ulimit -f 1 &&", "sweep study.yaml -o cut -j 1 --quiet");
    assert_int_equal(r.status, 1);
    assert_string_equal(r.err, "comet sweep: cut/results.csv: write failed: File too large\n");
}

static void test_simulate_step(void **state)
{
    (void)state;
    cli_run r;
    run(&r, "simulate --trace step.json");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "gpt3-175b on a100-80g-selene, 64 NPUs, simulated step"));
    assert_non_null(strstr(r.out, "estimate   13.622 s   (simulated "));
    char path[512], text[256];
    snprintf(path, sizeof path, "%s/step.json", workdir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_int_equal(strncmp(text, "{\"displayTimeUnit\"", 18), 0);
    expect_error("simulate --tp 7", "comet simulate: --tp: 7 does not divide heads (96)");
    expect_error("simulate --offload optimizer --system a100-80g-selene",
                 "comet simulate: --offload: system a100-80g-selene has no expansion memory tier "
                 "to offload to");
    /* fp8 without an fp8 peak: the flag, or the key at its place in a file */
    expect_error("simulate --fp8 --system a100-80g-selene",
                 "comet simulate: --fp8: system a100-80g-selene gives no fp8 matrix peak "
                 "(compute.matrix.fp8)");
    write_file("fp8.yaml", "system: a100-80g-selene\nstrategy:\n  tp: 8\n  pp: 8\n"
                           "  global_batch: 64\n  fp8: true\n");
    expect_error("estimate fp8.yaml",
                 "comet estimate: fp8.yaml:6:8: strategy.fp8: system a100-80g-selene gives no fp8 "
                 "matrix peak (compute.matrix.fp8)");
    expect_error("search --npus 16 --gbs 64 --model megatron-22b --fp8",
                 "comet search: --fp8: system a100-80g-selene gives no fp8 matrix peak "
                 "(compute.matrix.fp8)");
    expect_error("estimate --model dlrm --system h100-80g-dgx --fp8",
                 "comet estimate: --fp8: fp8 applies to Transformer models only, not to the "
                 "layer list dlrm");
    run(&r, "estimate fp8.yaml --system h100-80g-dgx");
    assert_int_equal(r.status, 0);
    run(&r, "export --chakra fp8x --model megatron-22b --system h100-80g-dgx --tp 8 --pp 1 "
            "--dp 1 --gbs 8 --fp8");
    assert_int_equal(r.status, 0);
    write_file("exp.yaml", "system:\n  preset: a100-80g-selene\n  expansion: {capacity: \"512 GiB\","
                           " bandwidth: \"64 GB/s\"}\n");
    run(&r, "simulate exp.yaml --strategy gpt3-175b-selene --offload optimizer");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "simulated  15.1"));
}

/* The schedule and uneven-stage flags: their values reach the strategy
 * (the JSON report names them last), and each refusal is one line naming
 * the flag. */
static void test_schedule_flags(void **state)
{
    (void)state;
    cli_run r;
    run(&r, "estimate --json --model llama3-405b --tp 8 --pp 16 --dp 1 --gbs 16 "
            "--schedule zb-h1 --first-stage-layers 7 --last-stage-layers 7");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"ep\": 1, \"schedule\": \"zb-h1\", "
                                  "\"first_stage_layers\": 7, \"last_stage_layers\": 7, "
                                  "\"expert_tp\": 8, \"moe_dispatcher\": \"alltoall\", "
                                  "\"attention_kernel\": \"auto\", \"offload_gradients\": false}"));
    run(&r, "estimate --model llama3-405b --tp 8 --pp 16 --dp 1 --gbs 16 --schedule zb-h1");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "schedule zb-h1"));
    expect_error("estimate --model gpt3-175b --tp 8 --pp 8 --dp 1 --gbs 64 --interleave 2 "
                 "--schedule zb-h1",
                 "comet estimate: --schedule: zb-h1 runs one model chunk per stage, got "
                 "interleave 2 (interleave > 1 runs interleaved 1F1B)");
    expect_error("estimate --model gpt3-175b --tp 8 --pp 8 --dp 1 --gbs 64 --schedule zb-h3",
                 "comet estimate: --schedule: expected 1f1b, zb-h1 or dualpipe, got \"zb-h3\"");
    /* DualPipe: its refusals name the flag; 16 microbatches on 8 stages run */
    expect_error("estimate --model gpt3-175b --tp 8 --pp 8 --dp 1 --gbs 64 --interleave 2 "
                 "--schedule dualpipe",
                 "comet estimate: --schedule: dualpipe holds two model chunks per stage of its "
                 "own, got interleave 2 (it needs interleave 1)");
    expect_error("estimate --model gpt3-175b --tp 8 --pp 3 --dp 1 --gbs 64 --schedule dualpipe",
                 "comet estimate: --schedule: dualpipe pairs stage i with stage pp-1-i, so pp "
                 "must be even and at least 2, got pp 3");
    expect_error("estimate --model gpt3-175b --tp 8 --pp 8 --dp 1 --gbs 8 --schedule dualpipe",
                 "comet estimate: --schedule: dualpipe sends half the microbatches from each "
                 "end: it needs an even number of them, at least 2*pp (16), got 8 "
                 "(global_batch / (microbatch*dp))");
    run(&r, "estimate --model gpt3-175b --tp 8 --pp 8 --dp 1 --gbs 16 --schedule dualpipe");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "schedule dualpipe"));
    expect_error("estimate --model llama3-405b --tp 8 --pp 16 --dp 1 --gbs 16 "
                 "--first-stage-layers 200",
                 "comet estimate: --first-stage-layers: 200 exceeds the model's 126 layers");
    expect_error("estimate --model llama3-405b --tp 8 --pp 16 --dp 1 --gbs 16 "
                 "--first-stage-layers 100 --last-stage-layers 20",
                 "comet estimate: --last-stage-layers: first_stage_layers 100 and "
                 "last_stage_layers 20 leave 6 layers for 14 middle stages (each needs one)");
    expect_error("estimate --model llama3-405b --tp 8 --pp 8 --dp 1 --gbs 16 --interleave 2 "
                 "--last-stage-layers 7",
                 "comet estimate: --last-stage-layers: uneven stages run without "
                 "interleaving, got interleave 2");
    write_file("uneven.yaml", "strategy:\n  tp: 8\n  pp: 16\n  global_batch: 16\n"
                              "  first_stage_layers: 130\n");
    expect_error("estimate uneven.yaml --model llama3-405b",
                 "comet estimate: uneven.yaml:5:23: strategy.first_stage_layers: 130 exceeds "
                 "the model's 126 layers");
}

/* A value for every knob with a flag, together a strategy megatron-22b can
 * run on 8 NPUs of a DGX H100 node (fp8 needs its fp8 peak) with an
 * expansion tier: integers and
 * choices as written, booleans on or off, the order as a list. */
static const char *const knob_samples[COMET_KNOB_COUNT] = {
    [COMET_KNOB_TP] = "2", [COMET_KNOB_PP] = "2", [COMET_KNOB_DP] = "2",
    [COMET_KNOB_SP] = "on", [COMET_KNOB_GLOBAL_BATCH] = "16", [COMET_KNOB_MICROBATCH] = "2",
    [COMET_KNOB_INTERLEAVE] = "2", [COMET_KNOB_RECOMPUTE] = "full", [COMET_KNOB_ZERO] = "1",
    [COMET_KNOB_OFFLOAD_OPTIMIZER] = "on", [COMET_KNOB_OFFLOAD_WEIGHTS] = "off",
    [COMET_KNOB_OFFLOAD_ACTIVATIONS] = "on", [COMET_KNOB_OFFLOAD_GRADIENTS] = "on",
    [COMET_KNOB_OVERLAP_DP] = "off",
    [COMET_KNOB_OVERLAP_TP] = "on", [COMET_KNOB_GRAD_FP32] = "on",
    [COMET_KNOB_OPTIMIZER_STATE] = "remainders",
    [COMET_KNOB_FLASH_ATTENTION] = "on", [COMET_KNOB_FP8] = "on", [COMET_KNOB_CP] = "1",
    [COMET_KNOB_CP_COMM] = "ulysses", [COMET_KNOB_EP] = "1", [COMET_KNOB_ORDER] = "dp,tp,pp",
    [COMET_KNOB_EXPERT_TP] = "1", [COMET_KNOB_MOE_DISPATCHER] = "deepep",
    [COMET_KNOB_ATTENTION_KERNEL] = "auto",
    /* interleave 2 runs interleaved 1F1B on even stages (zb-h1 and uneven
     * stages are refused with it; test_schedule_flags sets them) */
    [COMET_KNOB_SCHEDULE] = "1f1b", [COMET_KNOB_FIRST_STAGE_LAYERS] = "0",
    [COMET_KNOB_LAST_STAGE_LAYERS] = "0", [COMET_KNOB_FRAMEWORK] = "fsdp",
    [COMET_KNOB_PREFETCH] = "2", [COMET_KNOB_GATHER_BUCKET] = "1000",
    [COMET_KNOB_REDUCE_BUCKET] = "2000",
};

/* Does text hold the number n as a whole number (no digit either side)? */
static bool names_number(const char *text, long long n)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", n);
    for (const char *at = strstr(text, digits); at; at = strstr(at + 1, digits))
        if ((at == text || !isdigit((unsigned char)at[-1])) &&
            !isdigit((unsigned char)at[strlen(digits)]))
            return true;
    return false;
}

#define APPEND(buf, ...) snprintf((buf) + strlen(buf), sizeof(buf) - strlen(buf), __VA_ARGS__)

/* The samples as flags (" --tp 2 --sp ...") and as a strategy section,
 * both made by walking the knob table. */
static void knob_inputs(char *flags, size_t flags_cap, char *doc, size_t doc_cap)
{
    char parts[128] = "", group[32] = "";
    snprintf(flags, flags_cap, "%s", "");
    snprintf(doc, doc_cap, "strategy:\n");
    for (int i = 0; i < COMET_KNOB_COUNT; i++) {
        const comet_knob *k = comet_knob_get((comet_knob_id)i);
        const char *v = knob_samples[i];
        if (!k->flag)
            continue;
        if (!v)
            fail_msg("%s has a flag but no sample value in this test", k->key);
        bool on = strcmp(v, "on") == 0;
        size_t n = strlen(flags);
        switch (k->flag_form) {
        case COMET_FLAG_VALUE:
        case COMET_FLAG_ON_OFF:
            snprintf(flags + n, flags_cap - n, " %s %s", k->flag, v);
            break;
        case COMET_FLAG_SWITCH:
            assert_true(on);
            snprintf(flags + n, flags_cap - n, " %s", k->flag);
            break;
        case COMET_FLAG_PAIR:
            snprintf(flags + n, flags_cap - n, " %s", on ? k->flag : k->flag_off);
            break;
        case COMET_FLAG_PART: {
            const comet_knob *next = comet_knob_get((comet_knob_id)(i + 1));
            if (on)
                APPEND(parts, "%s%s", parts[0] ? "," : "", strrchr(k->key, '.') + 1);
            if (!next || !next->flag || strcmp(next->flag, k->flag) != 0) {
                snprintf(flags + n, flags_cap - n, " %s %s", k->flag, parts[0] ? parts : "none");
                parts[0] = '\0';
            }
            break;
        }
        case COMET_FLAG_NONE:
            break;
        }
        const char *key = comet_knob_file_key(k);
        const char *dot = strchr(key, '.');
        const char *value = k->type == COMET_KNOB_T_BOOL ? (on ? "true" : "false") : v;
        n = strlen(doc);
        if (dot && (strncmp(group, key, (size_t)(dot - key)) != 0 || group[dot - key])) {
            snprintf(group, sizeof group, "%.*s", (int)(dot - key), key);
            snprintf(doc + n, doc_cap - n, "  %s:\n", group);
            n = strlen(doc);
        }
        if (k->type == COMET_KNOB_T_ORDER)
            snprintf(doc + n, doc_cap - n, "  %s: [%s]\n", key, v);
        else if (dot)
            snprintf(doc + n, doc_cap - n, "    %s: %s\n", dot + 1, value);
        else
            snprintf(doc + n, doc_cap - n, "  %s: %s\n", key, value);
    }
}

/* Each knob's flag sets the field its file key sets: the same values given
 * by flags and by a file make the same strategy, each shown under its
 * report name. Integer knobs refuse one past their limit on the command
 * line and in a file, both naming the table's limit; the help lists every
 * knob's flag; search takes only the knobs it does not vary. */
static void test_knob_flags_match_keys(void **state)
{
    (void)state;
    write_file("expansion.yaml",
               "system:\n  preset: h100-80g-dgx\n  expansion: {capacity: \"512 GiB\", "
               "bandwidth: \"64 GB/s\", latency: \"300 ns\", efficiency: 0.9, "
               "attach: per_npu}\n");
    char flags[1024], doc[1024], args[2048];
    knob_inputs(flags, sizeof flags, doc, sizeof doc);
    write_file("knobs.yaml", doc);
    cli_run by_flags, by_file;
    snprintf(args, sizeof args, "estimate --json expansion.yaml --model megatron-22b%s", flags);
    run(&by_flags, args);
    if (by_flags.status != 0)
        fail_msg("comet %s: %s", args, by_flags.err);
    run(&by_file, "estimate --json expansion.yaml --model megatron-22b knobs.yaml");
    if (by_file.status != 0)
        fail_msg("knobs.yaml:\n%s%s", doc, by_file.err);
    assert_string_equal(by_flags.out, by_file.out);

    cli_run help;
    run(&help, "estimate --help");
    for (int i = 0; i < COMET_KNOB_COUNT; i++) {
        const comet_knob *k = comet_knob_get((comet_knob_id)i);
        const char *v = knob_samples[i];
        if (!k->flag)
            continue;
        assert_non_null(strstr(help.out, k->flag));
        if (k->flag_off)
            assert_non_null(strstr(help.out, k->flag_off));
        if (k->column >= 0) {
            char shown[128];
            if (k->type == COMET_KNOB_T_CHOICE)
                snprintf(shown, sizeof shown, "\"%s\": \"%s\"", k->name, v);
            else if (k->type == COMET_KNOB_T_BOOL)
                snprintf(shown, sizeof shown, "\"%s\": %s", k->name,
                         strcmp(v, "on") == 0 ? "true" : "false");
            else
                snprintf(shown, sizeof shown, "\"%s\": %s", k->name, v);
            const char *at = strstr(by_flags.out, shown);
            if (!at || (at[strlen(shown)] != ',' && at[strlen(shown)] != '}'))
                fail_msg("%s not in %s", shown, by_flags.out);
        }
        char want[512];
        if (!k->search_flag) {
            snprintf(args, sizeof args, "search --npus 8 --gbs 8 %s", k->flag);
            snprintf(want, sizeof want,
                     "comet search: unknown option \"%s\" (see 'comet search --help')", k->flag);
            expect_error(args, want);
        }
        if (k->type != COMET_KNOB_T_INT)
            continue;
        long long past = (long long)k->hi + 1;
        snprintf(args, sizeof args, "estimate %s %lld", k->flag, past);
        snprintf(want, sizeof want, "comet estimate: %s: %lld is out of range [%lld, %lld]",
                 k->flag, past, (long long)k->lo, (long long)k->hi);
        expect_error(args, want);
        char file[128];
        const char *fkey = comet_knob_file_key(k), *dot = strchr(fkey, '.');
        if (dot) /* a key of a group (zero3.prefetch): nested under it */
            snprintf(file, sizeof file, "strategy:\n  %.*s:\n    %s: %lld\n", (int)(dot - fkey),
                     fkey, dot + 1, past);
        else
            snprintf(file, sizeof file, "strategy:\n  %s: %lld\n", fkey, past);
        write_file("limit.yaml", file);
        cli_run r;
        run(&r, "estimate limit.yaml");
        assert_int_equal(r.status, 2);
        snprintf(want, sizeof want, "comet estimate: limit.yaml:%d:%d: %s: ", dot ? 3 : 2,
                 dot ? (int)strlen(dot + 1) + 7 : (int)strlen(fkey) + 5, k->key);
        if (strncmp(r.err, want, strlen(want)) != 0 || !names_number(r.err, k->hi))
            fail_msg("estimate limit.yaml (%s = %lld): %s", k->key, past, r.err);
    }
}

/* comet calibrate: bad measurements and flags are one line and exit 2;
 * the system it writes is what comet estimate --system reads. */
static void test_calibrate(void **state)
{
    (void)state;
    write_file("k.csv", "# kernels\nkind,m,n,k,seconds\ngemm,1024,abc,4096,0.001\n");
    expect_error("calibrate --system h100-80g-dgx --kernels k.csv -o new.yaml",
                 "comet calibrate: k.csv:3:11: column 'n': expected a positive number, got "
                 "\"abc\"");
    expect_error("calibrate --kernels k.csv -o new.yaml",
                 "comet calibrate: --system: is required (the system to start from: a preset or "
                 "a file)");
    expect_error("calibrate --system h100-80g-dgx --kernels k.csv",
                 "comet calibrate: -o: is required (the new system file, or - for stdout)");
    expect_error("calibrate --system h100-80g-dgx --kernels k.csv --attention-kernel flash4 "
                 "-o new.yaml",
                 "comet calibrate: --attention-kernel: expected auto, cudnn, flash2 or flash3, "
                 "got \"flash4\"");
    expect_error("calibrate --system h100-80g-dgx -o new.yaml",
                 "comet calibrate: nothing to fit: give --kernels FILE.csv, --nccl FILE or "
                 "--steps FILE");
    expect_error("calibrate --system h100-80g-dgx --nccl n.txt --nccl-npus 8 -o new.yaml",
                 "comet calibrate: --nccl-npus: applies to the --nccl files after it, and none "
                 "follows");
    expect_error("calibrate --system h100-80g-dgx --nccl-mode both --nccl n.txt -o new.yaml",
                 "comet calibrate: --nccl-mode: expected fit or curve, got \"both\"");
    expect_error("calibrate --system h100-80g-dgx --gemm-points 17 --kernels k.csv -o x.yaml",
                 "comet calibrate: --gemm-points: 17 is out of range [1, 16]");
    expect_error("calibrate --system h100-80g-dgx --nccl missing.txt -o new.yaml",
                 "comet calibrate: missing.txt: cannot read: No such file or directory");
    char args[8448]; /* two paths of up to 4096 bytes */
    snprintf(args, sizeof args,
             "calibrate --system h100-80g-dgx --nccl-dim nvl --nccl %s/../tests/data/"
             "nccl-all-reduce-h100x8.txt -o new.yaml",
             examples);
    expect_error(args, "comet calibrate: --nccl-dim: system h100-80g-dgx has no dimension "
                       "\"nvl\" (it has nvlink, infiniband)");
    write_file("n.txt", "    1024 32 float sum -1 20.0 0 0 0 21.0 0 0 0\n");
    expect_error("calibrate --system h100-80g-dgx --nccl n.txt -o new.yaml",
                 "comet calibrate: n.txt:1: cannot tell the collective (no \"# Collective test "
                 "starting:\" line); name it with --nccl-collective");
    expect_error("calibrate --system h100-80g-dgx --nccl-collective all-reduce --nccl-dim "
                 "infiniband --nccl n.txt -o new.yaml",
                 "comet calibrate: n.txt: lists no ranks, and dimension infiniband's size is "
                 "auto: give --nccl-npus before --nccl");

    /* the example measurements: the written system reads back and estimates */
    cli_run r;
    snprintf(args, sizeof args,
             "calibrate --system h100-80g-dgx --kernels %s/calibrate/h100-kernels.csv "
             "--nccl-dim nvlink --nccl %s/../tests/data/nccl-all-reduce-h100x8.txt -o new.yaml",
             examples, examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, "# comet calibrate: h100-80g-dgx-calibrated from h100-80g-dgx"));
    assert_non_null(strstr(r.out, "| compute.gemm_k_overhead | k0 | 91 |"));
    assert_non_null(strstr(r.out, "### Network (nccl-tests): 31 measurements"));
    run(&r, "estimate --system new.yaml --model llama2-70b --tp 8 --pp 4 --dp 4 --gbs 512 "
            "--sp --recompute selective");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "llama2-70b on h100-80g-dgx-calibrated, 128 NPUs"));

    /* measured training steps fit compute.framework_efficiency: the H100
     * steps, priced with their script's bf16 optimizer state, run within
     * 0.4 % of what the h100 preset's kernels alone say (7 % faster while
     * comet charged them Megatron's fp32 state) */
    snprintf(args, sizeof args,
             "calibrate --system h100-80g-dgx --steps %s/../presets/validation/h100-steps.yaml "
             "-o steps.yaml",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "| compute.framework_efficiency | kernel rates in the steps' "
                                  "framework | 1 | 1.004 |"));
    assert_non_null(strstr(r.out, "### Training steps: 5 measurements"));
    run(&r, "estimate --system steps.yaml --model gpt3-175b --tp 8 --pp 8 --gbs 64");
    assert_int_equal(r.status, 0);

    /* --report moves the report to a file; -o - puts the system on stdout */
    snprintf(args, sizeof args,
             "calibrate --system new.yaml --kernels %s/calibrate/h100-kernels.csv --name again "
             "-o again.yaml --report r.md",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "wrote again.yaml (system again) and the fit-quality report "
                                  "r.md"));
    char report[65536], path[512];
    snprintf(path, sizeof path, "%s/r.md", workdir);
    slurp(path, report, sizeof report);
    assert_non_null(strstr(report, "### GEMM: 3 measurements"));
    snprintf(args, sizeof args,
             "calibrate --system h100-80g-dgx --kernels %s/calibrate/h100-kernels.csv -o -",
             examples);
    run(&r, args);
    assert_int_equal(r.status, 0);
    assert_true(strncmp(r.out, "# h100-80g-dgx-calibrated: written by comet calibrate", 53) == 0);
    assert_non_null(strstr(r.out, "\nsystem:\n  name: \"h100-80g-dgx-calibrated\"\n"));
    assert_null(strstr(r.out, "## Fitted keys"));
}

void suite_cli(test_tally *t)
{
    const struct CMUnitTest cli[] = {
        cmocka_unit_test(test_default_job),
        cmocka_unit_test(test_json_and_csv),
        cmocka_unit_test(test_estimate_band),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_allocate),
        cmocka_unit_test(test_deeppool),
        cmocka_unit_test(test_output_file),
        cmocka_unit_test(test_strategy_file_errors_point_at_the_key),
        cmocka_unit_test(test_bad_flags),
        cmocka_unit_test(test_knob_flags_match_keys),
        cmocka_unit_test(test_schedule_flags),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_bad_paths),
        cmocka_unit_test(test_output_quoting),
        cmocka_unit_test(test_no_fit_is_a_result),
        cmocka_unit_test(test_layer_list_example),
        cmocka_unit_test(test_search),
        cmocka_unit_test(test_simulate_collective),
        cmocka_unit_test(test_simulate_flows),
        cmocka_unit_test(test_simulate_step_links),
        cmocka_unit_test(test_simulate_collective_sizes),
        cmocka_unit_test(test_quantities_out_of_range),
        cmocka_unit_test(test_simulate_huge_step),
        cmocka_unit_test(test_simulate_chakra),
        cmocka_unit_test(test_export_chakra),
        cmocka_unit_test(test_export_writes_safely),
        cmocka_unit_test(test_export_failure_keeps_earlier_set),
        cmocka_unit_test(test_export_fewer_ranks_removes_stale),
        cmocka_unit_test(test_export_sigterm_leaves_nothing),
        cmocka_unit_test(test_export_stale_ranks_stop_at_gap),
        cmocka_unit_test(test_version_help_refuse_flags),
        cmocka_unit_test(test_args_each_kind),
        cmocka_unit_test(test_args_errors),
        cmocka_unit_test(test_args_help_rules),
        cmocka_unit_test(test_help_lists_dispatched_commands),
        cmocka_unit_test(test_unusable_outputs_exit_2),
        cmocka_unit_test(test_sweep_design_limit),
        cmocka_unit_test(test_sweep_shape_axis),
        cmocka_unit_test(test_report_exit_codes),
        cmocka_unit_test(test_failures_midway_exit_1),
        cmocka_unit_test(test_simulate_step),
        cmocka_unit_test(test_calibrate),
    };
    RUN_GROUP_WITH(t, cli, setup, teardown);
}
