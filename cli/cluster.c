/* MPI transport for comet sweep (comet_sweep_transport: the library's
 * runner never calls MPI itself). Rank 0 writes every file; the other
 * ranks compute their share of the design points (point i belongs to rank
 * i mod size) and send each finished row to rank 0 as two texts (its CSV
 * and JSON lines), in index order, so rank 0 can take rows in global order
 * by asking each point's owner in turn: messages between two ranks arrive
 * in the order they were sent. Only the main thread calls MPI. */
#include "cluster.h"

#include <stdlib.h>
#include <string.h>

#ifdef COMET_HAVE_MPI
#include <mpi.h>

enum { TAG_ROW = 1, TAG_END = 2 };

bool cli_cluster_available(void)
{
    return true;
}

/* Started by mpirun (or another PMI launcher)? */
static bool launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

void cli_cluster_init(int *argc, char ***argv, cli_cluster *c)
{
    c->rank = 0;
    c->size = 1;
    c->mpi = false;
    if (!launched())
        return;
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return;
    c->mpi = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
}

void cli_cluster_finalize(cli_cluster *c)
{
    if (c->mpi)
        MPI_Finalize();
    c->mpi = false;
}

static void broadcast(void *ctx, uint64_t *v)
{
    const cli_cluster *c = ctx;
    if (c->mpi)
        MPI_Bcast(v, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
}

/* A row travels as: index (8 bytes), CSV length (8), CSV, JSONL. */
static int send_row(void *ctx, uint64_t index, const char *csv, size_t csv_len,
                    const char *jsonl, size_t jsonl_len)
{
    (void)ctx;
    size_t n = 16 + csv_len + jsonl_len;
    char *msg = malloc(n);
    if (!msg)
        return -1;
    uint64_t clen = csv_len;
    memcpy(msg, &index, 8);
    memcpy(msg + 8, &clen, 8);
    memcpy(msg + 16, csv, csv_len);
    memcpy(msg + 16 + csv_len, jsonl, jsonl_len);
    int rc = MPI_Send(msg, (int)n, MPI_CHAR, 0, TAG_ROW, MPI_COMM_WORLD);
    free(msg);
    return rc == MPI_SUCCESS ? 0 : -1;
}

static int send_end(void *ctx, int status)
{
    (void)ctx;
    return MPI_Send(&status, 1, MPI_INT, 0, TAG_END, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

static int receive(void *ctx, int from, uint64_t *index, char **csv, char **jsonl, int *status)
{
    (void)ctx;
    MPI_Status st;
    MPI_Probe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    if (st.MPI_TAG == TAG_END) {
        MPI_Recv(status, 1, MPI_INT, from, TAG_END, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        return 0;
    }
    int n;
    MPI_Get_count(&st, MPI_CHAR, &n);
    char *msg = malloc((size_t)n + 2);
    if (!msg) {
        *status = -1;
        return 0;
    }
    MPI_Recv(msg, n, MPI_CHAR, from, TAG_ROW, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    uint64_t clen;
    memcpy(index, msg, 8);
    memcpy(&clen, msg + 8, 8);
    size_t jlen = (size_t)n - 16 - (size_t)clen;
    *csv = malloc((size_t)clen + 1);
    *jsonl = malloc(jlen + 1);
    if (*csv && *jsonl) {
        memcpy(*csv, msg + 16, (size_t)clen);
        (*csv)[clen] = '\0';
        memcpy(*jsonl, msg + 16 + clen, jlen);
        (*jsonl)[jlen] = '\0';
    }
    free(msg);
    return 1;
}

#else /* single process */

bool cli_cluster_available(void)
{
    return false;
}

void cli_cluster_init(int *argc, char ***argv, cli_cluster *c)
{
    (void)argc;
    (void)argv;
    c->rank = 0;
    c->size = 1;
    c->mpi = false;
}

void cli_cluster_finalize(cli_cluster *c)
{
    (void)c;
}

static void broadcast(void *ctx, uint64_t *v)
{
    (void)ctx, (void)v;
}

static int send_row(void *ctx, uint64_t index, const char *csv, size_t csv_len,
                    const char *jsonl, size_t jsonl_len)
{
    (void)ctx, (void)index, (void)csv, (void)csv_len, (void)jsonl, (void)jsonl_len;
    return -1;
}

static int send_end(void *ctx, int status)
{
    (void)ctx, (void)status;
    return -1;
}

static int receive(void *ctx, int from, uint64_t *index, char **csv, char **jsonl, int *status)
{
    (void)ctx, (void)from, (void)index, (void)csv, (void)jsonl;
    *status = -1;
    return 0;
}

#endif

comet_sweep_transport cli_cluster_transport(cli_cluster *c)
{
    comet_sweep_transport t = {
        .ctx = c,
        .rank = c->rank,
        .size = c->size,
        .broadcast = broadcast,
        .send_row = send_row,
        .send_end = send_end,
        .receive = receive,
    };
    return t;
}
