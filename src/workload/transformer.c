/* Workload builder for decoder-only Transformers: the forward GEMMs, vector
 * ops, tensor-parallel collectives, parameters and stashed activations of
 * one block, the embedding and the LM head, per NPU and per microbatch.
 * FLOP counts follow Narayanan et al. 2021; activation bytes follow
 * Korthikanti et al. 2022 (Sec. 4), generalised to GQA and gated MLPs.
 * Context parallelism gives each rank s/cp of every sequence and adds its
 * attention exchange (ring K/V block or Ulysses all-to-alls).
 * Equations are written out in docs/model.md. */
#include <math.h>

#include "workload.h"

/* Per-NPU shape under tensor and context parallelism. */
typedef struct block_shape {
    double b, s, h, f, t;
    double cp;              /* context-parallel ranks the sequence is split over */
    double s_local;         /* s/cp: the sequence positions (queries) one rank holds */
    double tokens;          /* b*s/cp: the tokens one rank's per-token ops see */
    double kv_tokens;       /* keys and values one rank's attention core reads: b*s
                             * under ring CP (every rank's block passes by), else tokens */
    bool ring;              /* context parallelism by the ring (cp > 1) */
    bool ulysses;           /* ... by Ulysses' all-to-alls (cp > 1) */
    double tokens_rep;      /* tokens seen by replicated ops: tokens, or tokens/t with SP */
    double heads_local;     /* a/t */
    double head_dim;        /* width of one head */
    double kv_width_local;  /* width of K (and of V) per NPU: head_dim * kv heads held */
    double q_width_local;   /* h/t */
    double elem;            /* bytes per element of activations/weights */
    double mlp_mats;        /* 2 or 3 matrices */
} block_shape;

static block_shape shape_of(const comet_model *m, const comet_strategy *s)
{
    block_shape x;
    x.b = (double)s->microbatch;
    x.s = (double)m->seq;
    x.h = (double)m->hidden;
    x.f = (double)m->ffn;
    x.t = (double)s->tp;
    x.cp = (double)s->cp;
    x.s_local = x.s / x.cp;
    x.tokens = x.b * x.s_local;
    x.ring = s->cp > 1 && s->cp_comm == COMET_CP_RING;
    x.ulysses = s->cp > 1 && s->cp_comm == COMET_CP_ULYSSES;
    x.kv_tokens = x.ring ? x.b * x.s : x.tokens;
    x.tokens_rep = s->sp ? x.tokens / x.t : x.tokens;
    x.heads_local = (double)m->heads / x.t;
    x.head_dim = work_head_dim(m);
    /* KV heads are split by TP when there are enough, else replicated. */
    double kv_local = (double)m->kv_heads >= x.t ? (double)m->kv_heads / x.t : 1.0;
    x.kv_width_local = x.head_dim * kv_local;
    x.q_width_local = x.heads_local * x.head_dim;
    x.elem = comet_dtype_bytes(m->dtype);
    x.mlp_mats = m->gated_mlp ? 3.0 : 2.0;
    return x;
}

/* The two TP synchronisation points of a block (after attention and after
 * the MLP, Megatron's f/g operators): an all-reduce each, or with sequence
 * parallelism an all-gather before and a reduce-scatter after. Under
 * sequence parallelism the backward pass gathers the sharded input once
 * more for the weight gradient instead of keeping it (Korthikanti 2022,
 * Sec. 4.2.2), so backward has one extra all-gather per point. */
static void add_tp_sync(work_layer *l, const block_shape *x, bool sp)
{
    if (x->t <= 1.0)
        return;
    double bytes = x->tokens * x->h * x->elem;
    if (sp) {
        work_add_comm(l, COMET_COLL_ALL_GATHER, COMET_GROUP_TP, bytes);
        work_add_comm(l, COMET_COLL_REDUCE_SCATTER, COMET_GROUP_TP, bytes);
        work_comm *regather = work_add_comm(l, COMET_COLL_ALL_GATHER, COMET_GROUP_TP, bytes);
        regather->in_forward = false;
        regather->recomputed = false;
    } else {
        work_add_comm(l, COMET_COLL_ALL_REDUCE, COMET_GROUP_TP, bytes);
    }
}

/* Context parallelism's attention exchange (docs/model.md, context
 * parallelism). Ring (Liu et al. 2023; Megatron-Core / Transformer
 * Engine's p2p CP): the layer records its local K/V block, 2 (K and V) x
 * b s/cp tokens x the K width one TP rank holds, which passes around the
 * cp ranks cp-1 times in forward and 2(cp-1) block-sized sends in backward;
 * the cost layer prices and overlaps them (cp_ring_times). Ulysses
 * (Jacobs et al. 2023): all-to-alls on the cp group turn the sequence-
 * sharded Q, K, V into head-sharded ones before the core and the output
 * back after it (4), each per NPU buffer the local tensor (b s/cp tokens
 * x its width); backward mirrors them (dout, dQ, dK, dV), full recompute
 * repeats the forward's. */
static void add_context_exchange(work_layer *l, const block_shape *x)
{
    l->cp_kv_bytes = x->ring ? 2.0 * x->tokens * x->kv_width_local * x->elem : 0.0;
    if (!x->ulysses)
        return;
    double q = x->tokens * x->q_width_local * x->elem;
    double kv = x->tokens * x->kv_width_local * x->elem;
    work_add_comm(l, COMET_COLL_ALL_TO_ALL, COMET_GROUP_CP, q);   /* Q (dQ) */
    work_add_comm(l, COMET_COLL_ALL_TO_ALL, COMET_GROUP_CP, kv);  /* K (dK) */
    work_add_comm(l, COMET_COLL_ALL_TO_ALL, COMET_GROUP_CP, kv);  /* V (dV) */
    work_add_comm(l, COMET_COLL_ALL_TO_ALL, COMET_GROUP_CP, q);   /* output (its gradient) */
}

static void build_block(const comet_model *m, const comet_strategy *s, const block_shape *x,
                        work_layer *l, double *fp8_bytes)
{
    double e = x->elem, h = x->h, T = x->tokens, Tr = x->tokens_rep, Tkv = x->kv_tokens;
    /* Attention matrix elements one rank computes: its s/cp queries (ring:
     * all heads it holds; Ulysses: 1/cp of them over all s queries, the
     * same count) against all s keys. Comet counts the full s x s matrix,
     * not the causal half (Narayanan 2021's count, as Megatron reports
     * FLOPs); under causal masking the zig-zag split gives every rank the
     * same 1/cp share of the causal work, so 1/cp of the full count stays
     * consistent with it (docs/model.md, context parallelism). */
    double scores = x->b * x->heads_local * x->s_local * x->s;
    double qkv_width = x->q_width_local + 2.0 * x->kv_width_local;
    double mask = m->dropout ? 1.0 : 0.0;                /* 1-byte dropout masks */
    double ffn_local = x->f / x->t;
    bool fp8 = s->fp8;

    l->n_ops = 0;
    l->n_comms = 0;
    l->wgrad_bytes = 0.0;
    work_add_vector(l, COMET_MEMK_NORM, 5.0 * Tr * h, 2.0 * e * Tr * h, false);   /* norm 1 */
    double fp8_weights = work_add_linear(l, T, qkv_width, h, Tr, e, fp8);         /* QKV */
    if (!m->learned_positions) {
        /* rotary embedding of Q and K: a multiply-add with the cos and
         * sin tables per element pair, read and written once */
        double rotated = T * (x->q_width_local + x->kv_width_local);
        work_add_vector(l, COMET_MEMK_ROPE, 3.0 * rotated, 2.0 * e * rotated, false);
    }
    /* The attention core. Fused (flash) attention keeps the score matrix
     * on chip: the same FLOPs, no HBM traffic for it, no dropout mask. */
    bool flash = s->flash_attention;
    double score_bytes = flash ? 0.0 : scores;
    /* Q K^T reduces over the head width, its gradients over the keys
     * (dQ) and the queries (dK); scores x V over the keys, its gradients
     * over the head width (dP) and the queries (dV) */
    work_add_gemm_op(l, 2.0 * scores * x->head_dim,                                /* Q K^T */
                     e * (T * x->q_width_local + Tkv * x->kv_width_local + score_bytes), true,
                     x->head_dim, x->s, x->s_local);
    work_add_vector(l, COMET_MEMK_SOFTMAX, 5.0 * scores, 2.0 * e * score_bytes,    /* scale+mask+softmax */
                    true);
    if (m->dropout)                                                                 /* attention dropout */
        work_add_vector(l, COMET_MEMK_ELEMENTWISE, scores, (2.0 * e + 1.0) * score_bytes, true);
    work_add_gemm_op(l, 2.0 * scores * x->head_dim,                                /* scores x V */
                     e * (score_bytes + Tkv * x->kv_width_local + T * x->q_width_local), true,
                     x->s, x->head_dim, x->s_local);
    /* under ring CP each step's kernel is a block of s/cp queries against
     * s/cp keys: the diagonal block masked, the others whole */
    l->attn_seq = x->ring ? x->s_local : x->s;
    l->attn_head_dim = x->head_dim;
    l->causal = m->causal;
    l->attn_causal_share = x->ring ? 1.0 / x->cp : 1.0;
    fp8_weights += work_add_linear(l, T, h, x->q_width_local, T, e, fp8);         /* projection */
    work_add_vector(l, COMET_MEMK_ELEMENTWISE, 2.0 * Tr * h, (3.0 * e + mask) * Tr * h, /* dropout+residual */
                    false);
    work_add_vector(l, COMET_MEMK_NORM, 5.0 * Tr * h, 2.0 * e * Tr * h, false);   /* norm 2 */
    l->mlp_op = l->n_ops; /* the MLP, which an MoE block replaces (moe.c) */
    double wgrad_before_mlp = l->wgrad_bytes;
    fp8_weights += work_add_linear(l, T, (x->mlp_mats - 1.0) * ffn_local, h, Tr, /* MLP in (and gate) */
                              e, fp8);
    work_add_vector(l, COMET_MEMK_ACTIVATION, 8.0 * T * ffn_local,                 /* GeLU or SwiGLU */
                    (m->gated_mlp ? 3.0 : 2.0) * e * T * ffn_local, false);
    fp8_weights += work_add_linear(l, T, h, ffn_local, T, e, fp8);                /* MLP out */
    l->mlp_end = l->n_ops;
    l->mlp_wgrad_bytes = l->wgrad_bytes - wgrad_before_mlp;
    work_add_vector(l, COMET_MEMK_ELEMENTWISE, 2.0 * Tr * h, (3.0 * e + mask) * Tr * h, /* dropout+residual */
                    false);
    add_tp_sync(l, x, s->sp);
    add_tp_sync(l, x, s->sp);
    add_context_exchange(l, x);

    l->params = work_transformer_block_params(m) / x->t;
    l->moe = false;
    l->expert_params = 0.0;
    /* fp8: each linear layer's FP8 weight copy (1 byte per weight) and the
     * scaling state of its FP8 tensors (amax history, scale, inverse) */
    double fp8_gemms = 4.0; /* QKV, projection, MLP in, MLP out */
    *fp8_bytes = fp8 ? fp8_weights + fp8_gemms * WORK_FP8_TENSORS_PER_GEMM *
                                         (WORK_FP8_AMAX_HISTORY + 2.0) * 4.0
                     : 0.0;

    /* Stashed activations (Korthikanti 2022 Sec. 4.1, bytes per microbatch):
     * replicated ops keep 2 norm inputs, the QKV and MLP inputs and two
     * dropout masks; TP-sharded ops keep Q, K, V, the projection input and
     * the MLP intermediates; the attention core keeps softmax output,
     * its dropout mask and dropout output. */
    /* With fp8 the linear layers keep their inputs as the FP8 copies the
     * cast made (1 byte): the QKV and MLP inputs, the projection input and
     * the MLP-out input (Transformer Engine saves the FP8 input). */
    double in = fp8 ? 1.0 : e;
    double replicated = Tr * h * (2.0 * e + 2.0 * in + 2.0 * mask);
    double sharded = T * (e * x->q_width_local + 2.0 * e * x->kv_width_local) /* Q, K, V */
                   + T * in * x->q_width_local                                /* projection in */
                   + T * ffn_local * (e * (x->mlp_mats - 1.0) + in);          /* MLP intermediates */
    /* softmax out, mask, dropout out; fused attention keeps only the fp32
     * row maximum and sum of the softmax (Dao et al. 2022). */
    double rows = x->b * x->heads_local * x->s_local;
    double core = flash ? 8.0 * rows : scores * (e + (m->dropout ? 1.0 + e : 0.0));
    l->act_bytes = replicated + sharded + core;
    l->act_bytes_selective = replicated + sharded;
    l->act_bytes_full = Tr * h * e;
}

/* Input embedding: a table lookup (vocabulary-parallel under TP, one
 * all-reduce or reduce-scatter) and, with learned positions, an add. */
static void build_embedding(const comet_model *m, const comet_strategy *s, const block_shape *x,
                            work_layer *l)
{
    l->count = 1;
    l->where = WORK_FIRST_STAGE;
    l->n_ops = 0;
    l->n_comms = 0;
    l->cp_kv_bytes = 0.0;
    l->attn_seq = 0.0; /* no attention core */
    l->wgrad_bytes = 0.0; /* the table's gradient is a scatter of the output gradient */
    work_add_vector(l, COMET_MEMK_ELEMENTWISE, x->tokens * x->h, 3.0 * x->elem * x->tokens * x->h,
                    false);
    if (x->t > 1.0) {
        work_add_comm(l, s->sp ? COMET_COLL_REDUCE_SCATTER : COMET_COLL_ALL_REDUCE, COMET_GROUP_TP,
                 x->tokens * x->h * x->elem);
        l->comms[0].recomputed = false;
    }
    double h = x->h;
    l->params = ((double)m->vocab * h) / x->t + (m->learned_positions ? (double)m->seq * h : 0.0);
    l->act_bytes = m->dropout ? x->tokens_rep * h : 0.0;
    l->act_bytes_selective = l->act_bytes;
    l->act_bytes_full = l->act_bytes;
}

/* Final norm, LM head GEMM over the vocabulary shard and the fused
 * softmax cross-entropy, whose fp32 logits are kept for backward. */
static void build_head(const comet_model *m, const comet_strategy *s, const block_shape *x,
                       work_layer *l)
{
    /* Megatron pads the vocabulary to a multiple of the TP degree. */
    double v_local = ceil((double)m->vocab / x->t);
    l->count = 1;
    l->where = WORK_LAST_STAGE;
    l->n_ops = 0;
    l->n_comms = 0;
    l->cp_kv_bytes = 0.0;
    l->attn_seq = 0.0; /* no attention core */
    l->wgrad_bytes = 0.0;
    work_add_vector(l, COMET_MEMK_NORM, 5.0 * x->tokens_rep * x->h,
                    2.0 * x->elem * x->tokens_rep * x->h, false);
    work_add_gemm(l, x->tokens, v_local, x->h, x->elem, false);
    /* W: the stashed final-norm output and the logits' gradient */
    l->wgrad_bytes = x->elem * (x->tokens_rep * x->h + x->tokens * v_local);
    work_add_vector(l, COMET_MEMK_SOFTMAX, 5.0 * x->tokens * v_local,             /* cross-entropy */
                    (x->elem + 4.0) * x->tokens * v_local, false);
    /* The LM head holds its own copy of the table: untied, or tied with
     * the embedding on another stage (Megatron keeps both in sync). */
    double norm = (m->biases ? 2.0 : 1.0) * x->h;
    bool shares_table = m->tied_embeddings && s->pp == 1;
    l->params = (shares_table ? 0.0 : (double)m->vocab * x->h / x->t) + norm;
    l->act_bytes = 4.0 * x->tokens * v_local + x->elem * x->tokens_rep * x->h;
    l->act_bytes_selective = l->act_bytes;
    l->act_bytes_full = l->act_bytes;
}

/* Virtual stage vs's blocks: *first, the global number of its first, and
 * *count. Even: l / (pp v) each, the first l mod (pp v) one more. Uneven
 * (Megatron-LM's --decoder-first-pipeline-num-layers and
 * --decoder-last-pipeline-num-layers, one chunk per stage): the first and
 * last stage hold what is given, the other stages split the rest evenly,
 * the earliest one more each for the remainder. */
static void chunk_span(const comet_model *m, const comet_strategy *s, int64_t vs, int64_t *first,
                       int64_t *count)
{
    int64_t l = m->layers, head = s->first_stage_layers, tail = s->last_stage_layers;
    int64_t lo = 0, chunks = s->pp * s->interleave;
    if (s->interleave == 1 && s->pp > 1 && (head > 0 || tail > 0)) {
        if (head > 0 && vs == 0) {
            *first = 0;
            *count = head;
            return;
        }
        if (tail > 0 && vs == s->pp - 1) {
            *first = l - tail;
            *count = tail;
            return;
        }
        lo = head > 0 ? 1 : 0;
        chunks = s->pp - lo - (tail > 0 ? 1 : 0);
        l -= head + tail;
    }
    int64_t j = vs - lo, per = chunks > 0 ? l / chunks : 0, extra = chunks > 0 ? l % chunks : 0;
    *first = head * (lo > 0) + j * per + (j < extra ? j : extra);
    *count = per + (j < extra ? 1 : 0);
}

int64_t work_chunk_blocks(const comet_model *m, const comet_strategy *s, int64_t vs)
{
    int64_t first, count;
    chunk_span(m, s, vs, &first, &count);
    return count;
}

int64_t work_chunk_first_block(const comet_model *m, const comet_strategy *s, int64_t vs)
{
    int64_t first, count;
    chunk_span(m, s, vs, &first, &count);
    return first;
}

void work_stage_block_counts(const comet_model *m, const comet_strategy *s, int64_t stage,
                             int64_t *blocks, int64_t *moe)
{
    *blocks = *moe = 0;
    for (int64_t c = 0; c < s->interleave; c++) {
        int64_t first, count;
        chunk_span(m, s, c * s->pp + stage, &first, &count);
        *blocks += count;
        *moe += comet_model_moe_layers(m, first, count);
    }
}

int64_t work_stage_blocks(const comet_model *m, const comet_strategy *s, int64_t stage)
{
    int64_t blocks, moe;
    work_stage_block_counts(m, s, stage, &blocks, &moe);
    return blocks;
}

int64_t work_stage_moe_blocks(const comet_model *m, const comet_strategy *s, int64_t stage)
{
    int64_t blocks, moe;
    work_stage_block_counts(m, s, stage, &blocks, &moe);
    return moe;
}

static double gemm_flops(const work_layer *l)
{
    double f = 0.0;
    for (int i = 0; i < l->n_ops; i++)
        f += l->ops[i].flops;
    return f;
}

/* An MoE model's busiest stage, over all stages (DeepSeek-V3's first
 * stage holds its 3 dense layers, its last fewer blocks than the others):
 * with expert parallelism the one holding the most MoE blocks, whose
 * all-to-alls outweigh what a dense block or the LM head adds, and among
 * those the most forward GEMM work; without, the most GEMM work (dense
 * blocks at bf FLOPs, MoE blocks at bm, the embedding's e on the first
 * stage, the head's hd on the last), the dense rule over every stage. An
 * inner stage takes over the counts and holds neither end layer. */
static void busiest_moe_stage(const comet_model *m, const comet_strategy *s, double bf, double bm,
                              double e, double hd, work_stage *out, work_layer *block,
                              work_layer *moe)
{
    int64_t best = -1;
    double best_moe = -1.0, best_flops = -1.0;
    for (int64_t st = 0; st < s->pp; st++) {
        int64_t blocks, moe_blocks;
        work_stage_block_counts(m, s, st, &blocks, &moe_blocks);
        double all = (double)blocks, mo = (double)moe_blocks;
        double f = (all - mo) * bf + mo * bm + (st == 0 ? e : 0.0) + (st == s->pp - 1 ? hd : 0.0);
        double key = s->ep > 1 ? mo : 0.0;
        if (key > best_moe || (key == best_moe && f > best_flops)) {
            best = st;
            best_moe = key;
            best_flops = f;
            block->count = all - mo;
            moe->count = mo;
        }
    }
    out->busiest_is_first = best == 0;
    out->busiest_is_middle = best > 0 && best < s->pp - 1;
}

void work_build_transformer(const comet_model *m, const comet_strategy *s, work_stage *out)
{
    block_shape x = shape_of(m, s);
    out->n_layers = 0;
    work_layer *block = &out->layers[out->n_layers++];
    double fp8_block = 0.0;
    build_block(m, s, &x, block, &fp8_block);
    block->where = WORK_EVERY_STAGE;
    work_layer *head = &out->layers[out->n_layers++];
    build_head(m, s, &x, head);
    work_layer *embedding = &out->layers[out->n_layers++];
    build_embedding(m, s, &x, embedding);
    block->model_parallel = head->model_parallel = embedding->model_parallel = false;
    head->moe = embedding->moe = false;
    head->expert_params = embedding->expert_params = 0.0;
    head->mlp_wgrad_bytes = embedding->mlp_wgrad_bytes = 0.0;
    /* Mixture of experts: a second every-stage kind, the MoE block. */
    work_layer *moe = NULL;
    double fp8_moe = fp8_block;
    if (m->moe.experts > 0) {
        moe = &out->layers[out->n_layers++];
        work_build_moe_block(m, s, block, x.tokens, x.tokens_rep, moe, &fp8_moe);
    }

    /* The busiest stage: the last holds the LM head, whose GEMM dwarfs the
     * embedding lookup, but with uneven stages the first may hold more
     * layers; compare their forward FLOPs. With one stage it holds all. */
    out->first_stage_count = (double)work_stage_blocks(m, s, 0);
    out->last_stage_count = (double)work_stage_blocks(m, s, s->pp - 1);
    out->middle_stage_count = s->pp > 2 ? (double)work_stage_blocks(m, s, 1) : -1.0;
    out->moe_first_count = out->moe_last_count = 0.0;
    out->busiest_is_middle = false;
    double bf = gemm_flops(block);
    if (!moe) {
        double first = out->first_stage_count * bf + gemm_flops(embedding);
        double last = out->last_stage_count * bf + gemm_flops(head);
        out->busiest_is_first = s->pp > 1 && first > last;
        /* uneven stages: a middle stage may carry more than either end */
        out->busiest_is_middle = s->pp > 2 && out->middle_stage_count * bf > fmax(first, last);
        block->count = out->busiest_is_middle ? out->middle_stage_count
                     : out->busiest_is_first  ? out->first_stage_count
                                              : out->last_stage_count;
    } else {
        /* An MoE model's stages differ in their MoE blocks too (DeepSeek-
         * V3's first holds the dense layers); see busiest_moe_stage. */
        out->moe_first_count = (double)work_stage_moe_blocks(m, s, 0);
        out->moe_last_count = (double)work_stage_moe_blocks(m, s, s->pp - 1);
        out->busiest_is_first = false;
        block->count = work_end_count(out, block, false);
        moe->count = work_end_count(out, moe, false);
        if (s->pp > 1)
            busiest_moe_stage(m, s, bf, gemm_flops(moe), gemm_flops(embedding), gemm_flops(head),
                              out, block, moe);
    }

    /* Megatron's scatter/gather optimisation: each TP rank sends 1/t of the
     * boundary activation over its own NIC (Narayanan 2021, Sec. 4.1);
     * each CP rank sends its own s/cp tokens. */
    out->p2p_bytes = x.tokens * x.h * x.elem / x.t;
    /* Ring CP's receive buffers, working space beside the stashed
     * activations: two blocks in flight (one arriving while the other is
     * used), each K/V and, in backward, its gradients dK/dV. */
    out->cp_buffer_bytes = 2.0 * 2.0 * block->cp_kv_bytes;

    /* Model FLOPs of one microbatch forward over all NPUs (no recompute):
     * every GEMM of every block plus the LM head, unsharded, over the
     * whole sequence; an MoE block counts the experts a token uses (top_k
     * routed and the shared ones) and its router instead of the dense MLP. */
    double T = x.b * x.s, h = x.h;
    double q = (double)m->heads * x.head_dim, kv = (double)m->kv_heads * x.head_dim;
    double block_flops = 2.0 * T * h * (q + 2.0 * kv) + 4.0 * x.b * x.s * x.s * q
                       + 2.0 * T * q * h + 2.0 * x.mlp_mats * T * h * x.f;
    out->fwd_flops_model = (double)m->layers * block_flops + 2.0 * T * h * (double)m->vocab;
    if (moe)
        out->fwd_flops_model += (double)comet_model_moe_layers(m, 0, m->layers) *
                                (work_moe_mlp_model_flops(m, T) - work_dense_mlp_model_flops(m, T));
    out->params_mp_npu = 0.0;
    out->mp_lookup_bytes = 0.0;
    out->params_npu = block->params * block->count +
                      (work_on_busiest(out, s, head) ? head->params : 0.0) +
                      (work_on_busiest(out, s, embedding) ? embedding->params : 0.0);
    out->params_expert_npu = 0.0;
    out->act_extra = 0.0;
    out->fp8_bytes = fp8_block * block->count;
    if (moe) {
        out->params_npu += moe->params * moe->count;
        out->params_expert_npu = moe->expert_params * moe->count;
        out->fp8_bytes += fp8_moe * moe->count;
    }
}
