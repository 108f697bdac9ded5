/* comet calibrate: fits a system's efficiency keys to measurements a user
 * brings (a kernel CSV, nccl-tests output) and writes the new system file
 * plus a fit-quality report. The reading, fitting, writing and report are
 * the library's (comet/calibrate.h, comet_system_write_yaml,
 * comet_calibrate_report); this file places each nccl-tests run on a
 * network dimension, checks that the written file reads back, and puts
 * the outputs where they were asked for. docs/calibrate.md. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "comet/calibrate.h"

#define MAX_NCCL_FILES 32

/* One --nccl file with the placement flags in force before it. */
typedef struct nccl_file {
    const char *path;
    const char *dim;             /* --nccl-dim, NULL: the innermost dimension */
    int64_t npus;                /* --nccl-npus, 0: the ranks the file lists */
    comet_collective collective; /* --nccl-collective, NONE: the file says */
} nccl_file;

typedef struct calib_args {
    const char *system;
    const char *kernels;
    const char *steps;
    const char *output;
    const char *report;
    const char *name;
    int n_nccl;
    nccl_file nccl[MAX_NCCL_FILES];
    /* what the next --nccl file takes, and the flag that set it last */
    nccl_file next;
    const char *pending;         /* a placement flag no --nccl file followed yet */
    comet_calib_net_mode mode;
    int64_t gemm_points;         /* 0: choose */
    comet_attn_kernel attention_kernel; /* the attention rows' kernel (auto: the system's own) */
} calib_args;

static void help(void)
{
    printf("usage: comet calibrate --system BASE -o NEW.yaml [--kernels FILE.csv]\n"
           "                       [[--nccl-dim NAME] [--nccl-npus N] [--nccl-collective C]\n"
           "                        --nccl FILE ...] [--nccl-mode fit|curve] [--steps FILE]\n"
           "                       [--attention-kernel NAME]\n"
           "                       [--gemm-points N|auto] [--name NAME] [--report FILE.md]\n\n"
           "Fits the efficiency keys of system BASE (a preset name or a file) to your\n"
           "measurements and writes the whole system, fitted keys replaced, to NEW.yaml\n"
           "('-': stdout), which comet estimate --system NEW.yaml reads.\n"
           "  --kernels FILE.csv  kernel timings: GEMMs fit compute.gemm_efficiency and\n"
           "                      gemm_k_overhead, attention rows attention_efficiency by\n"
           "                      shape, memory rows memory_efficiency per kind and\n"
           "                      hbm.efficiency (elementwise); format: docs/calibrate.md\n"
           "  --nccl FILE         what an nccl-tests binary printed (all_reduce_perf,\n"
           "                      all_gather_perf, reduce_scatter_perf, alltoall_perf);\n"
           "                      repeat for more runs\n"
           "  --nccl-dim NAME     the network dimension the --nccl files after it measured\n"
           "                      (default: the innermost)\n"
           "  --nccl-npus N       ... the ranks they ran on (default: the ranks the file\n"
           "                      lists, else the dimension's size)\n"
           "  --nccl-collective C ... their collective when the file does not say\n"
           "  --nccl-mode fit     fit each measured dimension's latency and efficiency\n"
           "                      (default); curve: write the measurements as its\n"
           "                      bus_bandwidth curve instead\n"
           "  --steps FILE        measured training steps, as a validation table (YAML:\n"
           "                      docs/validation.md; each row's system is replaced by the\n"
           "                      calibrated one): fit compute.framework_efficiency, the\n"
           "                      share of the kernels' own rates they reach in your\n"
           "                      framework, after the kernel and network fits\n"
           "  --attention-kernel NAME  the kernel the attention rows timed: auto (default;\n"
           "                      the system's own curve), cudnn, flash2 or flash3, fitted\n"
           "                      into compute.attention_kernels.NAME when it is not the\n"
           "                      system's own\n"
           "  --gemm-points N     points of the GEMM size curve, 1 (flat, e_max) to 16;\n"
           "                      auto (default): 1 unless the rows call for more\n"
           "  --name NAME         the new system's name (default: BASE-calibrated)\n"
           "  --report FILE.md    the fit-quality report (every measurement against the\n"
           "                      fitted system); without it the report goes to stdout\n"
           "Exit status: 0 ok, 1 a failure mid-way, 2 bad input or an unusable output path.\n");
}

static comet_status nccl_flag(const cli_arg *f, const char *value, void *dest, comet_error *err)
{
    calib_args *a = dest;
    if (a->n_nccl == MAX_NCCL_FILES)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name, "at most %d files",
                               MAX_NCCL_FILES);
    a->next.path = value;
    a->nccl[a->n_nccl++] = a->next;
    a->pending = NULL;
    return COMET_OK;
}

static comet_status placement_flag(const cli_arg *f, const char *value, void *dest,
                                   comet_error *err)
{
    calib_args *a = dest;
    a->pending = f->name;
    if (strcmp(f->name, "--nccl-dim") == 0) {
        a->next.dim = value;
        return COMET_OK;
    }
    if (strcmp(f->name, "--nccl-npus") == 0)
        return cli_parse_int(f->name, value, 2, 16777216, &a->next.npus, err);
    comet_status st = cli_parse_collective(f->name, value, &a->next.collective, err);
    if (!st && a->next.collective >= COMET_COLL_SYMMETRIC)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name,
                               "measured runs are of all-reduce, reduce-scatter, all-gather or "
                               "all-to-all (nccl-tests' symmetric collectives), got \"%s\"",
                               value);
    return st;
}

static comet_status mode_flag(const cli_arg *f, const char *value, void *dest, comet_error *err)
{
    calib_args *a = dest;
    if (strcmp(value, "fit") == 0)
        a->mode = COMET_CALIB_NET_FIT;
    else if (strcmp(value, "curve") == 0)
        a->mode = COMET_CALIB_NET_CURVE;
    else
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name,
                               "expected fit or curve, got \"%s\"", value);
    return COMET_OK;
}

static comet_status kernel_flag(const cli_arg *f, const char *value, void *dest,
                                comet_error *err)
{
    calib_args *a = dest;
    for (int k = 0; k < COMET_ATTN_KERNEL_COUNT; k++)
        if (strcmp(value, comet_attn_kernel_name((comet_attn_kernel)k)) == 0) {
            a->attention_kernel = (comet_attn_kernel)k;
            return COMET_OK;
        }
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, f->name,
                           "expected auto, cudnn, flash2 or flash3, got \"%s\"", value);
}

static comet_status points_flag(const cli_arg *f, const char *value, void *dest,
                                comet_error *err)
{
    calib_args *a = dest;
    if (strcmp(value, "auto") == 0) {
        a->gemm_points = 0;
        return COMET_OK;
    }
    return cli_parse_int(f->name, value, 1, COMET_CALIB_MAX_GEMM_POINTS, &a->gemm_points, err);
}

#define AT(field) .offset = offsetof(calib_args, field)

static const cli_arg flags[] = {
    CLI_ARG_HELP_FLAGS,
    {.name = "--system", .kind = CLI_ARG_TEXT, AT(system)},
    {.name = "--kernels", .kind = CLI_ARG_TEXT, AT(kernels)},
    {.name = "--steps", .kind = CLI_ARG_TEXT, AT(steps)},
    {.name = "-o", .alias = "--output", .kind = CLI_ARG_TEXT, AT(output)},
    {.name = "--report", .kind = CLI_ARG_TEXT, AT(report)},
    {.name = "--name", .kind = CLI_ARG_TEXT, AT(name)},
    {.name = "--nccl", .kind = CLI_ARG_CALL, .value = true, .call = nccl_flag},
    {.name = "--nccl-dim", .kind = CLI_ARG_CALL, .value = true, .call = placement_flag},
    {.name = "--nccl-npus", .kind = CLI_ARG_CALL, .value = true, .call = placement_flag},
    {.name = "--nccl-collective", .kind = CLI_ARG_CALL, .value = true, .call = placement_flag},
    {.name = "--nccl-mode", .kind = CLI_ARG_CALL, .value = true, .call = mode_flag},
    {.name = "--gemm-points", .kind = CLI_ARG_CALL, .value = true, .call = points_flag},
    {.name = "--attention-kernel", .kind = CLI_ARG_CALL, .value = true, .call = kernel_flag},
};

static const cli_args_spec spec = {
    .command = "calibrate",
    .flags = flags,
    .n_flags = sizeof flags / sizeof flags[0],
    .help = CLI_HELP_OPTION,
};

static comet_status check_args(const calib_args *a, comet_error *err)
{
    if (!a->system)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--system",
                               "is required (the system to start from: a preset or a file)");
    if (!a->output)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "-o",
                               "is required (the new system file, or - for stdout)");
    if (!a->kernels && !a->n_nccl && !a->steps)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, NULL,
                               "nothing to fit: give --kernels FILE.csv, --nccl FILE or "
                               "--steps FILE");
    if (a->name && strlen(a->name) >= COMET_NAME_LEN)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--name",
                               "longer than %d characters", COMET_NAME_LEN - 1);
    if (a->pending)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, a->pending,
                               "applies to the --nccl files after it, and none follows");
    if (a->report && strcmp(a->report, "-") != 0 && strcmp(a->report, a->output) == 0)
        return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--report",
                               "is the same file as -o");
    comet_status st = cli_check_output(a->output, CLI_OUT_FILE, "-o", err);
    if (!st)
        st = cli_check_output(a->report, CLI_OUT_FILE, "--report", err);
    return st;
}

/* The dimension a --nccl-dim names: its index, or an error listing them. */
static comet_status find_dim(const comet_system *sys, const char *name, int *out,
                             comet_error *err)
{
    if (!name) {
        *out = 0;
        return COMET_OK;
    }
    char list[256] = "";
    for (int d = 0; d < sys->n_dims; d++) {
        if (strcmp(sys->dims[d].name, name) == 0) {
            *out = d;
            return COMET_OK;
        }
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", d ? ", " : "",
                 sys->dims[d].name);
    }
    return comet_error_set(err, COMET_EINPUT, NULL, 0, 0, "--nccl-dim",
                           "system %s has no dimension \"%s\" (it has %s)", sys->name, name,
                           list);
}

/* The inputs read: the kernel rows, every nccl-tests run with its
 * placement. */
typedef struct calib_inputs {
    comet_system base;
    comet_kernel_rows kernels;
    comet_validation_table *steps;
    comet_nccl_runs runs;
    comet_calib_nccl *placed;
    size_t n_placed;
} calib_inputs;

static comet_status read_nccl(const calib_args *a, calib_inputs *in, comet_error *err)
{
    size_t first[MAX_NCCL_FILES + 1];
    for (int i = 0; i < a->n_nccl; i++) {
        first[i] = in->runs.n;
        comet_status st =
            comet_nccl_read_file(a->nccl[i].path, a->nccl[i].collective, &in->runs, err);
        if (st)
            return st;
    }
    first[a->n_nccl] = in->runs.n;
    in->placed = calloc(in->runs.n ? in->runs.n : 1, sizeof *in->placed);
    if (!in->placed)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    for (int i = 0; i < a->n_nccl; i++) {
        int d = 0;
        comet_status st = find_dim(&in->base, a->nccl[i].dim, &d, err);
        if (st)
            return st;
        for (size_t s = first[i]; s < first[i + 1]; s++) {
            const comet_nccl_series *run = &in->runs.series[s];
            int64_t npus = a->nccl[i].npus ? a->nccl[i].npus
                           : run->ranks >= 2 ? run->ranks
                                             : in->base.dims[d].size;
            if (npus < 2)
                return comet_error_set(err, COMET_EINPUT, run->file, 0, 0, NULL,
                                       "lists no ranks, and dimension %s's size is %s: give "
                                       "--nccl-npus before --nccl",
                                       in->base.dims[d].name,
                                       in->base.dims[d].size ? "1" : "auto");
            in->placed[in->n_placed++] = (comet_calib_nccl){run, d, npus};
        }
    }
    return COMET_OK;
}

/* Control characters of a path would end a comment line early. */
static void comment_text(comet_buf *b, const char *text)
{
    for (const char *p = text; *p; p++)
        comet_buf_printf(b, "%c", (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p);
}

/* The new system file: what it came from, what changed, the system. */
static comet_status system_file(const calib_args *a, const calib_inputs *in,
                                const comet_calib_result *r, comet_buf *b, comet_error *err)
{
    comet_buf_printf(b, "# %s: written by comet calibrate from system %s and\n",
                     r->system.name, in->base.name);
    if (a->kernels) {
        comet_buf_printf(b, "#   kernels: ");
        comment_text(b, a->kernels);
        comet_buf_printf(b, " (%zu rows)\n", in->kernels.n);
    }
    if (a->steps) {
        comet_buf_printf(b, "#   training steps: ");
        comment_text(b, a->steps);
        comet_buf_printf(b, " (%d rows)\n", in->steps->n_rows);
    }
    for (size_t i = 0; i < in->n_placed; i++) {
        const comet_calib_nccl *p = &in->placed[i];
        comet_buf_printf(b, "#   nccl-tests: ");
        comment_text(b, p->series->file);
        comet_buf_printf(b, " (%s on %s, %lld NPUs, %zu rows)\n",
                         comet_collective_name(p->series->collective),
                         in->base.dims[p->dim].name, (long long)p->npus, p->series->n);
    }
    comet_buf_printf(b, "# Fitted keys (base -> fitted; how well they fit: comet calibrate "
                        "--report):\n");
    comet_calibrate_report(b, r, COMET_CALIB_REPORT_COMMENT);
    comet_buf_printf(b, "# Every other key is the base system's.\n");
    return comet_system_write_yaml(&r->system, b, err);
}

/* The written file must read back into a system that writes the same
 * text: every key it holds is what was fitted. */
static comet_status reads_back(const comet_buf *b, const comet_system *sys, comet_error *err)
{
    comet_job *job = malloc(sizeof *job);
    if (!job)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_job_init(job);
    comet_buf once, again;
    comet_buf_init(&once);
    comet_buf_init(&again);
    comet_status st = comet_config_read_text(b->data, b->len, "<the written system>", job, err);
    if (!st)
        st = comet_system_write_yaml(sys, &once, err);
    if (!st)
        st = comet_system_write_yaml(&job->system, &again, err);
    if (!st && (!job->has_system || once.len != again.len ||
                memcmp(once.data, again.data, once.len) != 0))
        st = comet_error_set(err, COMET_EINTERNAL, NULL, 0, 0, NULL,
                             "the written system does not read back the same");
    comet_buf_free(&once);
    comet_buf_free(&again);
    free(job);
    return st;
}

static comet_status run(const calib_args *a, calib_inputs *in, comet_error *err)
{
    comet_status st = check_args(a, err);
    if (!st)
        st = cli_load_system(a->system, &in->base, err);
    if (!st && a->kernels)
        st = comet_kernels_read_file(a->kernels, &in->kernels, err);
    if (!st && a->steps)
        st = comet_validation_read_file(a->steps, &in->steps, err);
    if (!st)
        st = read_nccl(a, in, err);
    if (st)
        return st;
    comet_calib_request req = {.base = &in->base,
                               .kernels = a->kernels ? &in->kernels : NULL,
                               .nccl = in->placed,
                               .n_nccl = in->n_placed,
                               .net_mode = a->mode,
                               .gemm_points = (int)a->gemm_points,
                               .name = a->name,
                               .steps = in->steps,
                               .attention_kernel = a->attention_kernel};
    comet_calib_result *r = calloc(1, sizeof *r);
    if (!r)
        return comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    comet_buf yaml, report;
    comet_buf_init(&yaml);
    comet_buf_init(&report);
    st = comet_calibrate(&req, r, err);
    if (st && r->step_row >= 0)
        comet_validation_locate(in->steps, r->step_row, err);
    if (!st)
        st = system_file(a, in, r, &yaml, err);
    if (!st)
        st = reads_back(&yaml, &r->system, err);
    bool yaml_to_stdout = strcmp(a->output, "-") == 0;
    bool report_to_stdout = !a->report || strcmp(a->report, "-") == 0;
    if (!st && (a->report || !yaml_to_stdout)) {
        comet_calibrate_report(&report, r, COMET_CALIB_REPORT_FULL);
        if (report.failed)
            st = comet_error_set(err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    }
    if (!st)
        st = cli_write_output(a->output, yaml.data, yaml.len, err);
    if (!st && report.len)
        st = cli_write_output(report_to_stdout ? NULL : a->report, report.data, report.len, err);
    if (!st && !report_to_stdout && !yaml_to_stdout) {
        comet_buf keys;
        comet_buf_init(&keys);
        comet_calibrate_report(&keys, r, COMET_CALIB_REPORT_KEYS);
        printf("%s\nwrote %s (system %s) and the fit-quality report %s\n",
               keys.data ? keys.data : "", a->output, r->system.name, a->report);
        comet_buf_free(&keys);
    }
    comet_buf_free(&yaml);
    comet_buf_free(&report);
    comet_calib_result_free(r);
    free(r);
    return st;
}

int cli_calibrate(int argc, char **argv)
{
    calib_args a;
    memset(&a, 0, sizeof a);
    comet_error err;
    comet_error_clear(&err);
    bool wants_help = false;
    if (cli_args_parse(&spec, argc, argv, &a, &wants_help, &err))
        return cli_report_error("calibrate", &err);
    if (wants_help) {
        help();
        return CLI_OK;
    }
    calib_inputs *in = calloc(1, sizeof *in);
    if (!in) {
        comet_error_set(&err, COMET_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        return cli_report_error("calibrate", &err);
    }
    comet_status st = run(&a, in, &err);
    comet_kernel_rows_free(&in->kernels);
    comet_nccl_runs_free(&in->runs);
    comet_validation_free(in->steps);
    free(in->placed);
    free(in);
    return st ? cli_report_error("calibrate", &err) : CLI_OK;
}
