/* Internal: the plan folder's interface (inference-side planning: tensor
 * files, multilayer perceptrons, RePurpose partitioning and its price).
 * Everything it offers other folders is public in comet/partition.h. */
#ifndef COMET_PLAN_H
#define COMET_PLAN_H

#include "comet/files.h"
#include "comet/partition.h"

#endif
