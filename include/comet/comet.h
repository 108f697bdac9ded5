/* libcomet: cluster design-space exploration for distributed training.
 * Umbrella header; each area has its own small header. */
#ifndef COMET_COMET_H
#define COMET_COMET_H

#include "comet/error.h"
#include "comet/buf.h"
#include "comet/model.h"
#include "comet/system.h"
#include "comet/strategy.h"
#include "comet/network.h"
#include "comet/congestion.h"
#include "comet/fabric.h"
#include "comet/estimate.h"
#include "comet/config.h"
#include "comet/report.h"
#include "comet/api.h"

#define COMET_VERSION "0.1.0"

#endif
