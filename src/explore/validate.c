/* Validation against published measurements: turns what a source stated
 * (a step time, tokens/s per GPU, model TFLOP/s or MFU under the source's
 * FLOP-counting rule, GPU-hours per trillion tokens) into a step time in
 * closed form, estimates each row with comet_estimate and summarises the
 * signed errors overall and by system and framework. It reads nothing and
 * prints nothing: the table comes parsed (src/config) and the report is
 * rendered elsewhere (src/report), so the same numbers feed the CLI, the
 * docs and the test that holds the model to its measured error. A row
 * comet refuses or that does not fit in comet's memory model is kept and
 * counted, never dropped; only rows that fit enter the error statistics. */
#include "comet/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The MLP inner width a token passes through in layer i, summed over the
 * experts it uses (routed top_k plus shared) in an MoE layer. */
static double layer_mlp_width(const comet_model *m, int64_t i)
{
    if (!comet_model_is_moe_layer(m, i))
        return (double)m->ffn;
    double expert = (double)(m->moe.ffn > 0 ? m->moe.ffn : m->ffn);
    return expert * (double)(m->moe.top_k + m->moe.shared);
}

double comet_flops_per_token(comet_flops_convention c, const comet_model *m)
{
    if (m->kind != COMET_MODEL_TRANSFORMER || m->layers <= 0 || m->hidden <= 0 || m->heads <= 0)
        return 0.0;
    double L = (double)m->layers, h = (double)m->hidden, s = (double)m->seq;
    double head = m->head_dim > 0 ? (double)m->head_dim : h / (double)m->heads;
    double q = head * (double)m->heads;       /* query width */
    if (c == COMET_FLOPS_6N)
        return 6.0 * comet_model_active_params(m) + 12.0 * L * q * s;
    double scores = c == COMET_FLOPS_MEGATRON_CAUSAL ? 0.5 * s : s;
    double g_over_a = (double)(m->kv_heads > 0 ? m->kv_heads : m->heads) / (double)m->heads;
    double attention = 12.0 * h * q * (1.0 + g_over_a) + 12.0 * scores * q;
    double gate = m->gated_mlp ? 1.5 : 1.0;
    double mlp = 0.0;
    for (int64_t i = 0; i < m->layers; i++)
        mlp += 12.0 * gate * h * layer_mlp_width(m, i);
    return L * attention + mlp + 6.0 * h * (double)m->vocab;
}

double comet_measured_step_time(const comet_measured *x, const comet_model *model,
                                const comet_strategy *s)
{
    double tokens = (double)s->global_batch * (double)comet_model_tokens_per_sample(model);
    double npus = (double)comet_strategy_npus(s);
    double flops = comet_flops_per_token(x->flops, model);
    switch (x->kind) {
    case COMET_MEASURE_STEP_TIME:
        return x->value;
    case COMET_MEASURE_TOKENS_PER_S_PER_GPU:
        return tokens / (x->value * npus);
    case COMET_MEASURE_GPU_HOURS:
        return tokens * x->value * 3600.0 / (1e12 * npus);
    case COMET_MEASURE_MODEL_TFLOPS:
        return tokens * flops / (npus * x->value * 1e12);
    case COMET_MEASURE_MFU:
        return tokens * flops / (npus * x->value * x->peak);
    case COMET_MEASURE_KIND_COUNT:
        break;
    }
    return 0.0;
}

static void run_row(const comet_validation_row *row, comet_validation_result *out)
{
    memset(out, 0, sizeof *out);
    const comet_job *j = &row->job;
    out->npus = comet_strategy_npus(&j->strategy);
    out->framework = comet_strategy_framework(&j->strategy);
    out->measured_step = comet_measured_step_time(&row->measured, &j->model, &j->strategy);
    comet_error_clear(&out->why);
    if (comet_estimate(&j->model, &j->system, &j->strategy, &out->result, &out->why)) {
        out->status = COMET_VALIDATION_REFUSED;
        return;
    }
    out->predicted_step = out->result.step_time;
    out->error = (out->predicted_step - out->measured_step) / out->measured_step;
    out->status = out->result.feasible ? COMET_VALIDATION_OK : COMET_VALIDATION_NO_FIT;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The statistics of the rows for which member[i] holds; abs_err is scratch. */
static void group_stats(const comet_validation_report *r, const bool *member, double *abs_err,
                        comet_validation_stats *st)
{
    memset(st, 0, sizeof *st);
    st->worst = -1;
    double sum = 0.0, signed_sum = 0.0;
    for (int i = 0; i < r->n_rows; i++) {
        if (!member[i])
            continue;
        const comet_validation_result *x = &r->rows[i];
        st->rows++;
        if (x->status == COMET_VALIDATION_REFUSED) {
            st->refused++;
            continue;
        }
        if (x->status == COMET_VALIDATION_NO_FIT) {
            st->no_fit++;
            continue;
        }
        double e = fabs(x->error);
        abs_err[st->ok++] = e;
        sum += e;
        signed_sum += x->error;
        if (st->worst < 0 || e > st->worst_abs) {
            st->worst_abs = e;
            st->worst = i;
        }
    }
    if (st->ok == 0)
        return;
    st->mean_abs = sum / st->ok;
    st->bias = signed_sum / st->ok;
    qsort(abs_err, (size_t)st->ok, sizeof *abs_err, by_value);
    st->median_abs = st->ok % 2 ? abs_err[st->ok / 2]
                                : 0.5 * (abs_err[st->ok / 2 - 1] + abs_err[st->ok / 2]);
}

/* Index of the group called name, added when new (the last one takes
 * every name past the limit). */
static int group_of(comet_validation_group *groups, int *n, const char *name)
{
    for (int i = 0; i < *n; i++)
        if (strcmp(groups[i].name, name) == 0)
            return i;
    if (*n == COMET_VALIDATION_MAX_GROUPS)
        return *n - 1;
    memset(&groups[*n], 0, sizeof groups[*n]);
    snprintf(groups[*n].name, sizeof groups[*n].name, "%s", name);
    return (*n)++;
}

/* The stats of each system's rows, or each framework's; of is scratch. */
static void grouped(comet_validation_report *r, const comet_validation_table *t, bool by_system,
                    int *of, bool *member, double *scratch)
{
    comet_validation_group *groups = by_system ? r->systems : r->frameworks;
    int *n = by_system ? &r->n_systems : &r->n_frameworks;
    for (int i = 0; i < r->n_rows; i++)
        of[i] = group_of(groups, n, by_system ? t->rows[i].job.system.name
                                              : comet_framework_name(r->rows[i].framework));
    for (int g = 0; g < *n; g++) {
        for (int i = 0; i < r->n_rows; i++)
            member[i] = of[i] == g;
        group_stats(r, member, scratch, &groups[g].stats);
    }
}

comet_status comet_validate(const comet_validation_table *t, comet_validation_report *out,
                            comet_error *err)
{
    memset(out, 0, sizeof *out);
    size_t n = (size_t)(t->n_rows > 0 ? t->n_rows : 1);
    out->rows = calloc(n, sizeof *out->rows);
    bool *member = malloc(n * sizeof *member);
    double *scratch = malloc(n * sizeof *scratch);
    int *of = malloc(n * sizeof *of);
    if (!out->rows || !member || !scratch || !of) {
        free(member);
        free(scratch);
        free(of);
        comet_validation_report_free(out);
        return comet_error_set(err, COMET_ENOMEM, t->file, 0, 0, NULL, "out of memory");
    }
    out->n_rows = t->n_rows;
    for (int i = 0; i < t->n_rows; i++)
        run_row(&t->rows[i], &out->rows[i]);
    for (int i = 0; i < t->n_rows; i++)
        member[i] = true;
    group_stats(out, member, scratch, &out->overall);
    grouped(out, t, true, of, member, scratch);
    grouped(out, t, false, of, member, scratch);
    free(member);
    free(scratch);
    free(of);
    return COMET_OK;
}

void comet_validation_report_free(comet_validation_report *r)
{
    if (!r)
        return;
    free(r->rows);
    memset(r, 0, sizeof *r);
}
