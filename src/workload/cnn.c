/* Layer-list entries given by their shape: convolution, pooling, batch
 * norm, ReLU, dropout, fully connected, ResNet's bottleneck block and
 * Inception-v3's blocks (their parallel branches and concatenation). A
 * CNN's architecture table (He et al. 2016, Table 1) says what each layer
 * is and how large its input is; the forward FLOPs, memory traffic,
 * parameters, activations kept for backward and output that the
 * layer-list builder needs follow from that, per sample, by the formulas
 * of docs/model.md Section 13.1, and so do the kernels the entry runs
 * (each convolution a GEMM with its reduction lengths, each batch norm,
 * ReLU, add or pool a memory-bound kernel of its kind), which the builder
 * (layerlist.c) prices one by one. Deriving them here spares users working
 * them out by hand and keeps one convention for all of them. Entries
 * chain: one without an input shape takes the output of the entry before,
 * and a bad chain, a kernel larger than its padded input or a missing size
 * is an error that names the entry's key. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../vocab/vocab.h"
#include "workload.h"

/* Batch norm in training, per element: the sums Σx (1 add) and Σx² (a
 * multiply-add, 2) for the batch statistics, then y = a·x + b with the
 * per-channel a = γ/σ and b = β − a·μ (2); per-channel terms left out. */
#define BN_FLOPS_PER_ELEMENT 5.0

/* What one entry computes, moves and keeps, per sample, in elements. */
typedef struct cnn_work {
    double elem;        /* bytes per element (a dropout mask is one byte per element) */
    double flops;       /* forward FLOPs */
    double gemm_flops;  /* ... of them in convolutions and fully connected layers */
    double params;
    double traffic;     /* elements read and written: weights, inputs, outputs */
    double kept;        /* kept for backward, besides the entry's input and output */
    bool keeps_in;      /* the entry keeps its input for backward */
    bool keeps_out;     /* ... and its output (a ReLU, run in place, keeps what it returns) */
    int n_kernels;      /* the kernels it runs, each priced on its own */
    work_shape_kernel kernels[WORK_SHAPE_MAX_KERNELS];
} cnn_work;

/* One more kernel of the entry: its FLOPs and traffic count towards the
 * entry's. The ops below run at most WORK_SHAPE_MAX_KERNELS (a
 * bottleneck with its projection). */
static work_shape_kernel *kernel(cnn_work *w, work_shape_kind kind, double flops, double traffic,
                                  double weights)
{
    work_shape_kernel *k = &w->kernels[w->n_kernels < WORK_SHAPE_MAX_KERNELS ? w->n_kernels++
                                                                               : w->n_kernels - 1];
    *k = (work_shape_kernel){.kind = kind, .flops = flops, .traffic = traffic, .weights = weights};
    w->flops += flops;
    w->traffic += traffic;
    return k;
}

/* The entry being derived, for its error messages. */
typedef struct cnn_entry {
    int index;
    const comet_layer_shape *sh;
    comet_error *err;
} cnn_entry;

static comet_status fail(const cnn_entry *e, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* COMET_EINPUT at layer_list[i].key (at the entry itself when key is NULL). */
static comet_status fail(const cnn_entry *e, const char *key, const char *fmt, ...)
{
    char path[sizeof e->err->key], msg[sizeof e->err->message];
    if (key)
        snprintf(path, sizeof path, "layer_list[%d].%s", e->index, key);
    else
        snprintf(path, sizeof path, "layer_list[%d]", e->index);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return comet_error_set(e->err, COMET_EINPUT, NULL, 0, 0, path, "%s", msg);
}

static double elements(const int64_t d[3])
{
    return (double)d[0] * (double)d[1] * (double)d[2];
}

static bool same(const int64_t a[3], const int64_t b[3])
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* Output side of a window of k, stride s, padding p over n (PyTorch's
 * floor((n + 2p − k)/s) + 1). */
static int64_t side(int64_t n, int64_t k, int64_t s, int64_t p)
{
    return (n + 2 * p - k) / s + 1;
}

/* How a convolution's or fc's bias is added. */
typedef enum cnn_bias {
    CNN_NO_BIAS = 0,
    CNN_BIAS_IN_GEMM,   /* in the GEMM's epilogue (cuBLAS's addmm, an fc) */
    CNN_BIAS_KERNEL     /* a kernel of its own over the output, and in backward a sum of the
                           output's gradient (cuDNN's channels-last convolution: [C]) */
} cnn_bias;

/* A convolution of c_out kernels, each kh x kw over in[2]/g channels,
 * padded by ph rows and pw columns (Inception's 1x7 and 7x1 factors). */
static void conv_hw(cnn_work *w, const int64_t in_[3], int64_t c_out, int64_t kh, int64_t kw,
                    int64_t s, int64_t ph, int64_t pw, int64_t g, cnn_bias bias, int64_t out[3])
{
    const int64_t in[3] = {in_[0], in_[1], in_[2]}; /* out may be in_ */
    out[0] = side(in[0], kh, s, ph);
    out[1] = side(in[1], kw, s, pw);
    out[2] = c_out;
    double n_out = elements(out);
    double window = (double)kh * (double)kw;
    double weights = (double)c_out * (double)(in[2] / g) * window;
    double macs = 2.0 * n_out * (double)(in[2] / g) * window;
    double bias_flops = bias ? n_out : 0.0, bias_params = bias ? (double)c_out : 0.0;
    w->gemm_flops += macs + bias_flops;
    w->params += weights + bias_params;
    /* As a GEMM: forward reduces over a window's inputs, the input
     * gradient over the outputs' channels a window reaches, the weight
     * gradient over the output positions (per sample; times the batch). */
    bool own = bias == CNN_BIAS_KERNEL;
    double in_gemm = own ? 0.0 : bias_params;
    work_shape_kernel *gemm = kernel(w, WORK_SHAPE_GEMM, macs + (own ? 0.0 : bias_flops),
                                     weights + in_gemm + elements(in) + n_out, weights + in_gemm);
    gemm->k_fwd = (double)(in[2] / g) * window;
    gemm->k_dgrad = (double)(c_out / g) * window;
    gemm->k_wgrad = (double)out[0] * (double)out[1];
    if (own) /* the output read and written; backward reads its gradient */
        kernel(w, WORK_SHAPE_ELEMENTWISE, bias_flops, 2.0 * n_out + bias_params, bias_params)
            ->bwd_traffic = n_out;
}

/* A square k x k convolution with padding p on every side. */
static void conv(cnn_work *w, const int64_t in[3], int64_t c_out, int64_t k, int64_t s, int64_t p,
                 int64_t g, cnn_bias bias, int64_t out[3])
{
    conv_hw(w, in, c_out, k, k, s, p, p, g, bias, out);
}

/* Batch norm over n elements of c channels (n and c summed over the
 * branches an Inception block prices as one kernel). */
static void batchnorm_n(cnn_work *w, double n, double c)
{
    w->params += 2.0 * c;
    kernel(w, WORK_SHAPE_BATCHNORM, BN_FLOPS_PER_ELEMENT * n, 2.0 * c + 2.0 * n, 2.0 * c);
}

static void batchnorm(cnn_work *w, const int64_t d[3])
{
    batchnorm_n(w, elements(d), (double)d[2]);
}

/* A ReLU in place over n elements: x read, y written; its backward reads
 * the output's gradient and y and writes the input's gradient. */
static void relu_n(cnn_work *w, double n)
{
    kernel(w, WORK_SHAPE_ACTIVATION, n, 2.0 * n, 0.0)->bwd_traffic = 3.0 * n;
}

static void relu(cnn_work *w, const int64_t d[3])
{
    relu_n(w, elements(d));
}

/* The shortcut's add: two read, one written; in backward one add as well,
 * where the gradients of the two paths meet at the block's input. */
static void add(cnn_work *w, const int64_t d[3])
{
    double n = elements(d);
    kernel(w, WORK_SHAPE_ELEMENTWISE, n, 3.0 * n, 0.0)->bwd_traffic = 3.0 * n;
}

/* A k_h x k_w window with padding p must fit the padded input. */
static comet_status check_window(const cnn_entry *e, const int64_t in[3], int64_t k, int64_t p)
{
    if (k <= in[0] + 2 * p && k <= in[1] + 2 * p)
        return COMET_OK;
    return fail(e, "kernel", "%lld is larger than the padded input (%lld x %lld with padding "
                "%lld)", (long long)k, (long long)in[0], (long long)in[1], (long long)p);
}

/* The sizes each op needs (a missing one, 0, is an error at the entry),
 * and none negative (the file reader checks its own ranges; a C caller
 * may not have). The fc's out_channels is its out_features. */
static comet_status check_sizes(const cnn_entry *e)
{
    const comet_layer_shape *sh = e->sh;
    const char *out = sh->op == COMET_OP_FC ? "out_features" : "out_channels";
    const struct {
        const char *key;
        int64_t v;
        bool needed;
    } sizes[] = {
        {out, sh->out_channels, sh->op == COMET_OP_CONV || sh->op == COMET_OP_FC ||
                                sh->op == COMET_OP_BOTTLENECK},
        {"width", sh->width, sh->op == COMET_OP_BOTTLENECK ||
                             (sh->op == COMET_OP_INCEPTION && (sh->variant == COMET_INCEPTION_A ||
                                                               sh->variant == COMET_INCEPTION_C))},
        {"kernel", sh->kernel, sh->op == COMET_OP_CONV || (sh->op == COMET_OP_POOL && !sh->global)},
        {"stride", sh->stride, false},
        {"padding", sh->padding, false},
        {"groups", sh->groups, false},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        if (sizes[i].v < 0)
            return fail(e, sizes[i].key, "must be positive, got %lld", (long long)sizes[i].v);
        if (sizes[i].needed && sizes[i].v == 0)
            return fail(e, NULL, "missing key \"%s\" (op %s needs it)", sizes[i].key,
                        vocab_layer_op_names[sh->op]);
    }
    return COMET_OK;
}

static comet_status derive_conv(const cnn_entry *e, const int64_t in[3], cnn_work *w,
                                int64_t out[3])
{
    const comet_layer_shape *sh = e->sh;
    int64_t g = sh->groups > 0 ? sh->groups : 1;
    if (in[2] % g || sh->out_channels % g)
        return fail(e, "groups", "%lld must divide both the %lld input and the %lld output "
                    "channels",
                    (long long)g, (long long)in[2], (long long)sh->out_channels);
    comet_status st = check_window(e, in, sh->kernel, sh->padding);
    if (st)
        return st;
    conv(w, in, sh->out_channels, sh->kernel, sh->stride > 0 ? sh->stride : 1, sh->padding, g,
         sh->bias ? CNN_BIAS_KERNEL : CNN_NO_BIAS, out);
    w->keeps_in = true;
    return COMET_OK;
}

/* Max pooling: k² − 1 comparisons per output; average: k² − 1 adds and
 * one scaling. Max keeps its input (the gradient goes to each window's
 * maximum); average keeps nothing. */
static comet_status derive_pool(const cnn_entry *e, const int64_t in[3], cnn_work *w,
                                int64_t out[3])
{
    const comet_layer_shape *sh = e->sh;
    int64_t kh, kw, s, p;
    if (sh->global) {
        if (sh->kernel || sh->stride || sh->padding)
            return fail(e, sh->kernel ? "kernel" : sh->stride ? "stride" : "padding",
                        "a global pool takes the whole input as its window: leave kernel, "
                        "stride and padding out");
        kh = in[0];
        kw = in[1];
        s = 1;
        p = 0;
    } else {
        kh = kw = sh->kernel;
        s = sh->stride > 0 ? sh->stride : sh->kernel;
        p = sh->padding;
        comet_status st = check_window(e, in, kh, p);
        if (st)
            return st;
        if (2 * p > sh->kernel)
            return fail(e, "padding", "%lld is more than half the kernel (%lld): a window "
                        "could hold padding alone", (long long)p, (long long)sh->kernel);
    }
    out[0] = side(in[0], kh, s, p);
    out[1] = side(in[1], kw, s, p);
    out[2] = in[2];
    double window = (double)kh * (double)kw;
    /* Its traffic counts the windows' reads besides its input and output:
     * measured max pools of 3x3/2 and 2x2/2 windows then run at one rate
     * (docs/model.md 13.1; the reads hit the cache, but they take time). */
    kernel(w, WORK_SHAPE_POOL, elements(out) * (sh->pool == COMET_POOL_MAX ? window - 1.0 : window),
           elements(in) + elements(out) + window * elements(out), 0.0);
    w->keeps_in = sh->pool == COMET_POOL_MAX;
    return COMET_OK;
}

static comet_status derive_fc(const cnn_entry *e, const int64_t in[3], cnn_work *w,
                              int64_t out[3])
{
    const comet_layer_shape *sh = e->sh;
    int64_t flat[3] = {1, 1, in[0] * in[1] * in[2]};
    conv(w, flat, sh->out_channels, 1, 1, 0, 1, sh->bias ? CNN_BIAS_IN_GEMM : CNN_NO_BIAS, out);
    w->keeps_in = true;
    return COMET_OK;
}

/* ResNet's bottleneck (He et al. 2016, Fig. 5 right): 1x1 to `width`,
 * 3x3, 1x1 to out_channels, each followed by a batch norm, ReLUs after the
 * first two and after the shortcut's add; the shortcut is a strided 1x1
 * convolution with a batch norm when the stride or the channels change
 * (option B, Sec. 3.3), else the input. Kept for backward, besides the
 * input and the output (the last ReLU's): each convolution's output (its
 * batch norm's input) and each inner ReLU's output (the next convolution's
 * input), the ReLUs run in place as in torchvision. */
static comet_status derive_bottleneck(const cnn_entry *e, const int64_t in[3], cnn_work *w,
                                      int64_t out[3])
{
    const comet_layer_shape *sh = e->sh;
    int64_t s = sh->stride > 0 ? sh->stride : 1;
    int64_t s1 = sh->stride_at == COMET_STRIDE_3X3 ? 1 : s;
    int64_t a[3], b[3], shortcut[3];
    conv(w, in, sh->width, 1, s1, 0, 1, CNN_NO_BIAS, a);
    batchnorm(w, a);
    relu(w, a);
    conv(w, a, sh->width, 3, s / s1, 1, 1, CNN_NO_BIAS, b);
    batchnorm(w, b);
    relu(w, b);
    conv(w, b, sh->out_channels, 1, 1, 0, 1, CNN_NO_BIAS, out);
    batchnorm(w, out);
    w->kept = 2.0 * elements(a) + 2.0 * elements(b) + elements(out);
    if (s != 1 || in[2] != sh->out_channels) {
        conv(w, in, sh->out_channels, 1, s, 0, 1, CNN_NO_BIAS, shortcut);
        batchnorm(w, shortcut);
        w->kept += elements(shortcut);
    }
    add(w, out);  /* the shortcut's */
    relu(w, out); /* the last */
    w->keeps_in = w->keeps_out = true;
    return COMET_OK;
}

/* Inception-v3's convolutions each come with a batch norm and a ReLU
 * (torchvision's BasicConv2d); a block prices its convolutions one by one
 * and its batch norms and ReLUs as one kernel each over all of them (the
 * FLOPs and bytes are the same; the launches of the separate kernels are
 * left out: docs/model.md 13.1). */
typedef struct basic_acc {
    double n, c;       /* elements and channels put out by the block's convolutions */
} basic_acc;

static void basic(cnn_work *w, basic_acc *acc, const int64_t in[3], int64_t c_out, int64_t kh,
                  int64_t kw, int64_t s, int64_t ph, int64_t pw, int64_t out[3])
{
    conv_hw(w, in, c_out, kh, kw, s, ph, pw, 1, CNN_NO_BIAS, out);
    acc->n += elements(out);
    acc->c += (double)c_out;
    /* kept for backward: the convolution's output (the batch norm's input)
     * and the ReLU's (the next convolution's input) */
    w->kept += 2.0 * elements(out);
}

/* A 3x3 pool of stride s and padding p over in (average: the branch
 * before its 1x1; max: the reductions' pass-through branch). */
static void pool3(cnn_work *w, const int64_t in[3], int64_t s, int64_t p, bool avg, int64_t out[3])
{
    out[0] = side(in[0], 3, s, p);
    out[1] = side(in[1], 3, s, p);
    out[2] = in[2];
    kernel(w, WORK_SHAPE_POOL, elements(out) * (avg ? 9.0 : 8.0),
           elements(in) + elements(out) + 9.0 * elements(out), 0.0);
}

/* Inception-v3's blocks as tables (Szegedy et al. 2016, Figures 5, 6, 7
 * and 10; torchvision's InceptionA to InceptionE): each branch starts from
 * the block's input, from a 3x3 pool of it (average, stride 1, padding 1;
 * or max, stride 2, no padding: the reductions' pass-through branch), or
 * from where the branch before forked (the input of its last convolution:
 * InceptionE's split 1x3 and 3x1), and runs its BasicConv2d's in order:
 * output channels (WIDTH: the block's width), kernel height and width,
 * stride, padding in height and width. */
enum { INC_END, INC_INPUT, INC_AVG_POOL, INC_MAX_POOL, INC_FORK };
#define WIDTH 0
#define INC_MAX_CONVS 5
#define INC_MAX_BRANCHES 6

typedef struct inc_conv {
    int64_t c, kh, kw, s, ph, pw; /* kh 0 ends the branch */
} inc_conv;

typedef struct inc_branch {
    int from;
    inc_conv conv[INC_MAX_CONVS];
} inc_branch;

static const inc_branch inception_blocks[COMET_INCEPTION_COUNT][INC_MAX_BRANCHES] = {
    [COMET_INCEPTION_A] = { /* 35x35: 64 + 64 + 96 + width */
        {INC_INPUT, {{64, 1, 1, 1, 0, 0}}},
        {INC_INPUT, {{48, 1, 1, 1, 0, 0}, {64, 5, 5, 1, 2, 2}}},
        {INC_INPUT, {{64, 1, 1, 1, 0, 0}, {96, 3, 3, 1, 1, 1}, {96, 3, 3, 1, 1, 1}}},
        {INC_AVG_POOL, {{WIDTH, 1, 1, 1, 0, 0}}},
    },
    [COMET_INCEPTION_B] = { /* 35 to 17: 384 + 96 + the input's */
        {INC_INPUT, {{384, 3, 3, 2, 0, 0}}},
        {INC_INPUT, {{64, 1, 1, 1, 0, 0}, {96, 3, 3, 1, 1, 1}, {96, 3, 3, 2, 0, 0}}},
        {INC_MAX_POOL, {{0}}},
    },
    [COMET_INCEPTION_C] = { /* 17x17, factorized 7x7: 4 x 192 */
        {INC_INPUT, {{192, 1, 1, 1, 0, 0}}},
        {INC_INPUT, {{WIDTH, 1, 1, 1, 0, 0}, {WIDTH, 1, 7, 1, 0, 3}, {192, 7, 1, 1, 3, 0}}},
        {INC_INPUT,
         {{WIDTH, 1, 1, 1, 0, 0},
          {WIDTH, 7, 1, 1, 3, 0},
          {WIDTH, 1, 7, 1, 0, 3},
          {WIDTH, 7, 1, 1, 3, 0},
          {192, 1, 7, 1, 0, 3}}},
        {INC_AVG_POOL, {{192, 1, 1, 1, 0, 0}}},
    },
    [COMET_INCEPTION_D] = { /* 17 to 8: 320 + 192 + the input's */
        {INC_INPUT, {{192, 1, 1, 1, 0, 0}, {320, 3, 3, 2, 0, 0}}},
        {INC_INPUT,
         {{192, 1, 1, 1, 0, 0}, {192, 1, 7, 1, 0, 3}, {192, 7, 1, 1, 3, 0}, {192, 3, 3, 2, 0, 0}}},
        {INC_MAX_POOL, {{0}}},
    },
    [COMET_INCEPTION_E] = { /* 8x8: 320 + 2 x 384 + 2 x 384 + 192 */
        {INC_INPUT, {{320, 1, 1, 1, 0, 0}}},
        {INC_INPUT, {{384, 1, 1, 1, 0, 0}, {384, 1, 3, 1, 0, 1}}},
        {INC_FORK, {{384, 3, 1, 1, 1, 0}}},
        {INC_INPUT, {{448, 1, 1, 1, 0, 0}, {384, 3, 3, 1, 1, 1}, {384, 1, 3, 1, 0, 1}}},
        {INC_FORK, {{384, 3, 1, 1, 1, 0}}},
        {INC_AVG_POOL, {{192, 1, 1, 1, 0, 0}}},
    },
};

/* One Inception-v3 block: its branches (the table above) from the
 * block's input, their outputs concatenated along the channels (one copy,
 * read and written). */
static comet_status derive_inception(const cnn_entry *e, const int64_t in[3], cnn_work *w,
                                     int64_t out[3])
{
    const comet_layer_shape *sh = e->sh;
    basic_acc acc = {0, 0};
    int64_t channels = 0, h = 0, wd = 0;
    bool reduce = sh->variant == COMET_INCEPTION_B || sh->variant == COMET_INCEPTION_D;
    int64_t need = reduce ? 3 : 1;
    if (in[0] < need || in[1] < need)
        return fail(e, "in", "%lld x %lld is too small for inception block %s",
                    (long long)in[0], (long long)in[1], vocab_inception_names[sh->variant]);
    if ((unsigned)sh->variant >= COMET_INCEPTION_COUNT)
        return fail(e, "variant", "unknown variant %d", (int)sh->variant);
    const inc_branch *block = inception_blocks[sh->variant];
    int64_t fork[3] = {0, 0, 0};
    for (int b = 0; b < INC_MAX_BRANCHES && block[b].from != INC_END; b++) {
        int64_t x[3];
        if (block[b].from == INC_AVG_POOL)
            pool3(w, in, 1, 1, true, x);
        else if (block[b].from == INC_MAX_POOL)
            pool3(w, in, 2, 0, false, x);
        else
            memcpy(x, block[b].from == INC_FORK ? fork : in, sizeof x);
        for (int i = 0; i < INC_MAX_CONVS && block[b].conv[i].kh > 0; i++) {
            const inc_conv *cv = &block[b].conv[i];
            int64_t y[3];
            memcpy(fork, x, sizeof fork);
            basic(w, &acc, x, cv->c != WIDTH ? cv->c : sh->width, cv->kh, cv->kw, cv->s, cv->ph,
                  cv->pw, y);
            memcpy(x, y, sizeof x);
        }
        channels += x[2];
        h = x[0];
        wd = x[1];
    }
    batchnorm_n(w, acc.n, acc.c);
    relu_n(w, acc.n);
    out[0] = h;
    out[1] = wd;
    out[2] = channels;
    /* the concatenation: each branch's output read, the block's written */
    double n = elements(out);
    kernel(w, WORK_SHAPE_ELEMENTWISE, 0.0, 2.0 * n, 0.0)->bwd_traffic = 2.0 * n;
    w->keeps_in = w->keeps_out = true;
    return COMET_OK;
}

static comet_status derive_one(const cnn_entry *e, const int64_t in[3], cnn_work *w,
                               int64_t out[3])
{
    comet_status st = check_sizes(e);
    if (st)
        return st;
    switch (e->sh->op) {
    case COMET_OP_CONV:
        return derive_conv(e, in, w, out);
    case COMET_OP_POOL:
        return derive_pool(e, in, w, out);
    case COMET_OP_BATCHNORM:
        memcpy(out, in, 3 * sizeof *out);
        batchnorm(w, in);
        w->keeps_in = true;
        return COMET_OK;
    case COMET_OP_RELU:
        memcpy(out, in, 3 * sizeof *out);
        relu(w, in);
        w->keeps_out = true;
        return COMET_OK;
    case COMET_OP_DROPOUT: {
        /* y = x · mask / (1 − p): x read, y and the one-byte mask written;
         * the mask is kept for backward, which moves as much */
        double n = elements(in), mask = n / w->elem;
        memcpy(out, in, 3 * sizeof *out);
        kernel(w, WORK_SHAPE_ELEMENTWISE, n, 2.0 * n + mask, 0.0)->bwd_traffic = 2.0 * n + mask;
        w->kept += mask;
        return COMET_OK;
    }
    case COMET_OP_FC:
        return derive_fc(e, in, w, out);
    case COMET_OP_BOTTLENECK:
        return derive_bottleneck(e, in, w, out);
    case COMET_OP_INCEPTION:
        return derive_inception(e, in, w, out);
    case COMET_OP_NONE:
    case COMET_OP_COUNT:
        break;
    }
    return fail(e, "op", "unknown op %d", (int)e->sh->op);
}

/* The entry's input: its own `in`, which must be what the entry before
 * puts out when that one has a shape, or else that output (prev, NULL
 * when the entry before has no shape). */
static comet_status input_of(const cnn_entry *e, const int64_t *prev, int64_t in[3])
{
    const int64_t *given = e->sh->in;
    if (given[0] == 0 && given[1] == 0 && given[2] == 0) {
        if (!prev)
            return fail(e, NULL, "missing key \"in\": %s", e->index == 0
                        ? "the first entry has no entry before it to take its input from"
                        : "the entry before is given by its numbers, not its shape");
        memcpy(in, prev, 3 * sizeof *in);
        return COMET_OK;
    }
    if (given[0] <= 0 || given[1] <= 0 || given[2] <= 0)
        return fail(e, "in", "sizes must be positive, got [%lld, %lld, %lld]",
                    (long long)given[0], (long long)given[1], (long long)given[2]);
    if (prev && !same(prev, given))
        return fail(e, "in", "[%lld, %lld, %lld] is not what the entry before puts out, "
                    "[%lld, %lld, %lld]", (long long)given[0], (long long)given[1],
                    (long long)given[2], (long long)prev[0], (long long)prev[1],
                    (long long)prev[2]);
    memcpy(in, given, 3 * sizeof *in);
    return COMET_OK;
}

comet_status comet_model_derive_shapes(comet_model *m, comet_error *err)
{
    double e = comet_dtype_bytes(m->dtype);
    int64_t prev[3] = {0, 0, 0};
    bool have_prev = false, prev_keeps = false;
    for (int i = 0; i < m->n_layer_kinds; i++) {
        comet_layer *l = &m->layer_list[i];
        comet_layer_shape *sh = &l->shape;
        if (sh->op == COMET_OP_NONE) {
            have_prev = false;
            continue;
        }
        cnn_entry ent = {i, sh, err};
        int64_t in[3] = {0, 0, 0}, out[3] = {0, 0, 0};
        cnn_work w = {.elem = e};
        comet_status st = input_of(&ent, have_prev ? prev : NULL, in);
        if (!st)
            st = derive_one(&ent, in, &w, out);
        if (st)
            return st;
        double count = l->count > 1 ? (double)l->count : 1.0;
        if (count > 1.0 && !same(in, out))
            return fail(&ent, "count", "%lld repeats of a layer that takes [%lld, %lld, %lld] "
                        "but puts out [%lld, %lld, %lld]", (long long)l->count,
                        (long long)in[0], (long long)in[1], (long long)in[2],
                        (long long)out[0], (long long)out[1], (long long)out[2]);
        /* An input the entry before already keeps (its output) is counted
         * there; each repeat's input is the one before it's output. */
        double unkept = (have_prev && prev_keeps ? 0.0 : 1.0)
                      + (count - 1.0) * (w.keeps_out ? 0.0 : 1.0);
        double kept = w.kept + (w.keeps_in ? unkept / count * elements(in) : 0.0)
                    + (w.keeps_out ? elements(out) : 0.0);
        l->fwd_flops = w.flops;
        l->fwd_bytes = e * w.traffic;
        l->params = w.params;
        l->act_bytes = e * kept;
        l->out_bytes = e * elements(out);
        memcpy(sh->out, out, sizeof sh->out);
        sh->gemm_flops = w.gemm_flops;
        memcpy(sh->in_at, in, sizeof sh->in_at);
        memcpy(prev, out, sizeof prev);
        have_prev = true;
        prev_keeps = w.keeps_out;
    }
    return COMET_OK;
}

int work_shape_kernels(const comet_layer_shape *sh, double elem,
                       work_shape_kernel out[WORK_SHAPE_MAX_KERNELS])
{
    if (sh->op == COMET_OP_NONE)
        return 0;
    comet_error scratch; /* the shape was checked when it was derived */
    cnn_entry ent = {0, sh, &scratch};
    cnn_work w = {.elem = elem};
    int64_t o[3];
    if (derive_one(&ent, sh->in_at, &w, o) != COMET_OK)
        return 0;
    memcpy(out, w.kernels, (size_t)w.n_kernels * sizeof *out);
    return w.n_kernels;
}
