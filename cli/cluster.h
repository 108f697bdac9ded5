/* Several processes (MPI ranks) splitting one sweep. Built with OpenMPI
 * when mpicc is found at build time; without it, or when the binary is not
 * started by mpirun, there is one process and these calls do nothing. */
#ifndef COMET_CLI_CLUSTER_H
#define COMET_CLI_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "comet/sweep.h"

typedef struct cli_cluster {
    int rank;
    int size;
    bool mpi;           /* MPI was initialised */
} cli_cluster;

/* Whether this binary was built with MPI. */
bool cli_cluster_available(void);

void cli_cluster_init(int *argc, char ***argv, cli_cluster *c);
void cli_cluster_finalize(cli_cluster *c);

/* The runner's transport over MPI (one process when MPI is not there):
 * rows travel to rank 0 as two texts, in each rank's point order. c must
 * outlive its use. */
comet_sweep_transport cli_cluster_transport(cli_cluster *c);

#endif
