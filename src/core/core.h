/* src/core's interface to the rest of the library (its other parts are
 * public: comet/buf.h, comet/error.h, comet/files.h, comet/quantity.h).
 *
 * fmax and fmin as inline code. libm's are calls (the compiler inlines
 * them only when told NaNs cannot occur, since maxsd is not symmetric in
 * a NaN), and the strategy search's pricing takes a maximum or minimum
 * many times per point: about a tenth of its time went to the calls.
 * These keep C's semantics exactly: a NaN argument gives the other one,
 * two NaNs a NaN. */
#ifndef COMET_CORE_CORE_H
#define COMET_CORE_CORE_H

static inline double comet_fmax(double a, double b)
{
    return (a > b || b != b) ? a : b;
}

static inline double comet_fmin(double a, double b)
{
    return (a < b || b != b) ? a : b;
}

#endif
