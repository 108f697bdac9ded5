/* Which ranks a recorded transfer of the step graph runs on, as a group
 * and as the rank digits its members differ in: shared by the Chakra
 * exporter (its communicator groups) and the step on the fabric (its
 * groups of flows), so both place a collective on the same NPUs. */
#include "sim.h"

#include "comet/strategy.h"

step_group step_group_of(const step_coll *c)
{
    if (c->on == STEP_ON_EXPERT_GRADS)
        return STEP_G_EXPERT_GRAD;
    if (c->on == STEP_ON_GRADS)
        return STEP_G_GRAD;
    return c->group == COMET_GROUP_TP ? STEP_G_TP
         : c->group == COMET_GROUP_EP ? STEP_G_EP
         : c->group == COMET_GROUP_CP ? STEP_G_CP
                                      : STEP_G_GRAD;
}

unsigned step_group_digits(step_group g)
{
    static const unsigned digits[STEP_G_COUNT] = {
        [STEP_G_TP] = 1u << COMET_DIGIT_TP,
        [STEP_G_GRAD] = 1u << COMET_DIGIT_CP | 1u << COMET_DIGIT_EP | 1u << COMET_DIGIT_EDP,
        [STEP_G_EXPERT_GRAD] = 1u << COMET_DIGIT_CP | 1u << COMET_DIGIT_EDP,
        [STEP_G_EP] = 1u << COMET_DIGIT_EP, [STEP_G_CP] = 1u << COMET_DIGIT_CP};
    return g < STEP_G_COUNT ? digits[g] : 0u;
}

