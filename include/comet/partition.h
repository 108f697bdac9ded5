/* Partitioning a trained network across workers for distributed inference
 * (RePurpose: Abdi, Rashidi, Fekri, Krishna, AAAI 2023; docs/partition.md).
 * A multilayer perceptron read from NumPy (.npy, .npz) or safetensors
 * files; its neurons placed on workers layer by layer with the Munkres
 * assignment so strongly connected neurons stay together; the weak
 * cross-worker weights pruned by an l0 criterion under a budget; the result
 * priced on a comet system against a naive contiguous split, and checked
 * for accuracy with a plain C forward pass. */
#ifndef COMET_PARTITION_H
#define COMET_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comet/error.h"
#include "comet/model.h"
#include "comet/system.h"

/* Limits on what the readers accept, so any file is read in bounded memory. */
#define COMET_TENSOR_MAX_DIMS 8
#define COMET_TENSOR_MAX_COUNT 4096        /* tensors in one file */
#define COMET_TENSOR_MAX_ELEMENTS (INT64_C(1) << 31)
#define COMET_PARTITION_MAX_WORKERS 256

/* One named tensor of a file, its values widened to float. */
typedef struct comet_tensor {
    char name[128];
    int ndim;
    int64_t shape[COMET_TENSOR_MAX_DIMS];
    int64_t count;          /* product of the shape */
    float *values;          /* row-major (C order) */
} comet_tensor;

typedef struct comet_tensor_set {
    int n;
    comet_tensor *tensors;  /* in the file's order */
} comet_tensor_set;

/* Read a .npy (one tensor, named after the file), .npz (zip of .npy
 * members, stored or deflated) or .safetensors file, told apart by its
 * first bytes. Floats (f2, f4, f8, bf16), integers and bools of either
 * byte order; Fortran-ordered arrays are returned in C order. A truncated
 * or inconsistent file is a one-line COMET_EINPUT naming the file. */
comet_status comet_tensors_read(const char *path, comet_tensor_set *out, comet_error *err);
/* The same from memory (name is what errors say). */
comet_status comet_tensors_parse(const void *data, size_t size, const char *name,
                                 comet_tensor_set *out, comet_error *err);
void comet_tensors_free(comet_tensor_set *s);
const comet_tensor *comet_tensors_find(const comet_tensor_set *s, const char *name);

/* A fully connected layer: y = W x + b, W shaped (out, in), row-major. */
typedef struct comet_dense {
    char name[128];
    int64_t in, out;
    float *weight;          /* out * in */
    float *bias;            /* out (zeros when the file has none) */
} comet_dense;

/* A multilayer perceptron: ReLU after every layer but the last. */
typedef struct comet_mlp {
    int n_layers;
    comet_dense *layers;
} comet_mlp;

/* How a file lays out each weight matrix. */
typedef enum comet_weight_layout {
    COMET_LAYOUT_OUT_IN = 0,   /* (out, in): PyTorch's nn.Linear, the default */
    COMET_LAYOUT_IN_OUT        /* (in, out): x @ W, Keras and scikit-learn */
} comet_weight_layout;

/* The layers of a tensor set: every 2-D tensor is a weight (a 1x1
 * convolution's (out, in, 1, 1) too), ordered by the first number in its
 * name (then the file's order); a 1-D tensor whose name is the weight's
 * with "weight" -> "bias" or a leading w/W -> b/B is its bias. Layer
 * shapes must chain; weights and biases must be finite. */
comet_status comet_mlp_from_tensors(const comet_tensor_set *s, comet_weight_layout layout,
                                    const char *file, comet_mlp *out, comet_error *err);
comet_status comet_mlp_read(const char *path, comet_weight_layout layout, comet_mlp *out,
                            comet_error *err);
void comet_mlp_free(comet_mlp *m);
/* A deep copy (the partitioner prunes a copy); COMET_ENOMEM on failure. */
comet_status comet_mlp_copy(const comet_mlp *m, comet_mlp *out, comet_error *err);

/* Labelled data: x (n, dim) and integer labels y (n). */
typedef struct comet_labelled {
    int64_t n, dim;
    float *x;
    int32_t *y;
} comet_labelled;

/* A .npz with members x and y (or X and Y); labels must be whole numbers >= 0. */
comet_status comet_labelled_read(const char *path, comet_labelled *out, comet_error *err);
comet_status comet_labelled_from_tensors(const comet_tensor_set *s, const char *file,
                                         comet_labelled *out, comet_error *err);
void comet_labelled_free(comet_labelled *d);

/* The share of samples whose largest output is their label (plain C
 * forward pass, double accumulators). The data's width must be the
 * network's input and every label below its output width. */
comet_status comet_mlp_accuracy(const comet_mlp *m, const comet_labelled *d, double *accuracy,
                                comet_error *err);

/* What the pruning budget bounds: the share of cross-worker weights
 * removed (by count), or the share of their squared mass removed. */
typedef enum comet_prune_kind {
    COMET_PRUNE_COUNT = 0,
    COMET_PRUNE_MASS
} comet_prune_kind;

typedef struct comet_partition_request {
    int workers;
    comet_prune_kind prune;
    double budget;          /* in [0, 1]: 0 keeps every weight */
} comet_partition_request;

/* One layer's outcome. Workers of neurons: the layer's inputs are the
 * previous layer's outputs (the network's inputs for layer 0). */
typedef struct comet_partition_layer {
    int64_t in, out;
    int *worker_of_out;         /* out: each output neuron's worker */
    int64_t *order;             /* out: original indices of the outputs, worker by worker */
    int64_t weights;            /* nonzero weights of the layer */
    int64_t cross_naive;        /* nonzero cross-worker weights of the contiguous split */
    int64_t cross_before;       /* ... after the assignment, before pruning */
    int64_t cross_after;        /* ... kept after pruning */
    double mass, cross_mass_before, cross_mass_after;  /* sums of squared weights */
    double cross_mass_naive;    /* ... crossing workers in the contiguous split */
    int64_t *pair_kept;         /* workers^2: kept cross weights from worker src to dst,
                                   [src * workers + dst] (0 on the diagonal) */
    int64_t *pair_naive;        /* the same for the contiguous split, unpruned */
    int64_t *rows_of_worker;    /* workers: output neurons per worker */
    int64_t *local_kept;        /* workers: nonzero weights each worker multiplies
                                   (its rows' local weights plus kept incoming cross) */
    int64_t *local_naive;       /* workers: nonzero weights of each worker's rows in the
                                   contiguous split */
} comet_partition_layer;

typedef struct comet_partition {
    int workers;
    int n_layers;
    int *worker_of_input;       /* network inputs' workers (layer 0's in) */
    comet_partition_layer *layers;
    comet_mlp pruned;           /* the network with the pruned weights zeroed, same order */
} comet_partition;

/* Assign and prune (docs/partition.md). Bad input: workers < 1 or above
 * any layer's width (or the input's), a budget outside [0, 1]. */
comet_status comet_partition_run(const comet_mlp *m, const comet_partition_request *req,
                                 comet_partition *out, comet_error *err);
void comet_partition_free(comet_partition *p);
/* Prune again at another budget, keeping the assignment: p->pruned and
 * the counters are recomputed from m (the network p was made from). */
comet_status comet_partition_prune(const comet_mlp *m, comet_partition *p, comet_prune_kind kind,
                                   double budget, comet_error *err);

/* Minimum-cost assignment (Munkres / Hungarian, O(n^2 m)): rows n <= cols
 * m, cost row-major n x m, finite; row_to_col[i] gets each row's column.
 * Returns the total cost, or NAN when memory runs out or n > m. */
double comet_hungarian(int n, int m, const double *cost, int *row_to_col);

/* The same problem when columns come in `groups` identical copies
 * (capacity[g] slots of group g, summing to n): each of n rows to a group,
 * at most capacity[g] rows each, minimum total of cost[i * groups + g].
 * The Hungarian method's shortest augmenting paths run over the groups
 * instead of the n slots: O(n^2 groups) instead of O(n^3). Returns the
 * total, or NAN on bad arguments or no memory. */
double comet_assign_balanced(int64_t n, int groups, const double *cost, const int64_t *capacity,
                             int *row_to_group);

/* A partition's price on a system: workers are NPUs 0..workers-1, each
 * layer's exchanges a p2p transfer per worker pair on the dimension they
 * differ on, sent one after another by each worker; each worker's compute
 * its kept weights as a GEMM of `batch` columns. */
typedef struct comet_partition_price {
    double compute;         /* seconds per inference batch: each layer's slowest worker */
    double exchange;        /* ... each layer's slowest sender */
    double latency;         /* compute + exchange */
    double throughput;      /* samples per second: batch / latency */
    double bytes;           /* bytes exchanged per batch, all pairs */
    int n_layers;
    double layer_compute[64], layer_exchange[64];  /* the first 64 layers */
} comet_partition_price;

/* Price the partition (naive false) or the contiguous unpruned split
 * (naive true). */
comet_status comet_partition_price_on(const comet_partition *p, bool naive,
                                      const comet_system *sys, comet_dtype dtype, int64_t batch,
                                      comet_partition_price *out, comet_error *err);

/* One budget of the accuracy/traffic trade-off. */
typedef struct comet_partition_point {
    double budget;          /* the pruning budget (share, of the request's kind) */
    double kept_share;      /* kept cross-worker weights / cross-worker weights assigned */
    double bytes;           /* bytes exchanged per batch */
    double latency;         /* seconds per batch on the system */
    double accuracy;        /* NAN without labelled data */
} comet_partition_point;

#define COMET_PARTITION_MAX_POINTS 32

/* Everything `comet partition` shows, for the text, JSON and HTML renderers
 * (declared in comet/report.h). */
typedef struct comet_partition_outcome {
    const comet_mlp *net;
    const comet_partition *part;
    const char *weights_file;
    const char *system_name;
    comet_dtype dtype;
    int64_t batch;
    comet_prune_kind prune;
    double budget;                   /* the budget applied */
    double max_loss;                 /* the accuracy loss asked for, NAN: none */
    comet_partition_price price;     /* the partition */
    comet_partition_price naive;     /* the contiguous split, unpruned */
    double accuracy_before;          /* NAN: no labelled data */
    double accuracy_after;
    int n_points;
    comet_partition_point points[COMET_PARTITION_MAX_POINTS];
} comet_partition_outcome;

#endif
