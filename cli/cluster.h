/* Several processes (MPI ranks) splitting one sweep. Built with OpenMPI
 * when mpicc is found at build time; without it, or when the binary is not
 * started by mpirun, there is one process and these calls do nothing. */
#ifndef COMET_CLI_CLUSTER_H
#define COMET_CLI_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cli_cluster {
    int rank;
    int size;
    bool mpi;           /* MPI was initialised */
} cli_cluster;

/* Whether this binary was built with MPI. */
bool cli_cluster_available(void);

void cli_cluster_init(int *argc, char ***argv, cli_cluster *c);
void cli_cluster_finalize(cli_cluster *c);

/* Rank 0's value of *v on every rank. */
void cli_cluster_bcast(const cli_cluster *c, uint64_t *v);
/* Rank 0: whether any rank reported failure (status != 0) at the end. */
int cli_cluster_any_failed(const cli_cluster *c, int status);

/* Workers send their rows to rank 0 in their own index order, then an end
 * marker with their status. */
int cli_cluster_send_row(const cli_cluster *c, uint64_t index, const char *csv, size_t csv_len,
                         const char *jsonl, size_t jsonl_len);
int cli_cluster_send_end(const cli_cluster *c, int status);

/* Rank 0: the next message from rank `from`: a row (returns 1, fills the
 * index and malloc'd texts) or its end marker (returns 0, fills status). */
int cli_cluster_recv(const cli_cluster *c, int from, uint64_t *index, char **csv, char **jsonl,
                     int *status);

#endif
