/* The strategy's knobs, each described once: its name in reports, its key
 * in strategy files, its command-line flag, its type and limits, its line
 * in the command's help and where it lives in comet_strategy. The strategy
 * file reader, the command line, the report's knob columns and
 * comet_strategy_resolve's limit checks all walk this one table
 * (src/parallel/knobs.c), so a new knob is one new entry there. */
#ifndef COMET_KNOBS_H
#define COMET_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "comet/strategy.h"

/* Values a COMET_KNOB_T_CHOICE knob may have at most. */
#define COMET_KNOB_MAX_VALUES 8

typedef enum comet_knob_type {
    COMET_KNOB_T_INT,       /* int64_t or int in [lo, hi] */
    COMET_KNOB_T_BOOL,
    COMET_KNOB_T_CHOICE,    /* an int-sized enum, values 0 .. n_values-1 named by value_name */
    COMET_KNOB_T_ORDER,     /* order[]: a permutation of the groups, innermost first */
    COMET_KNOB_T_PLACEMENT  /* place[][] and placement_given: each group's spans */
} comet_knob_type;

/* How the command line sets a knob. */
typedef enum comet_flag_form {
    COMET_FLAG_NONE,        /* no flag: files only */
    COMET_FLAG_VALUE,       /* flag VALUE: an integer in [lo, hi], a choice's name, a list */
    COMET_FLAG_SWITCH,      /* flag alone turns it on */
    COMET_FLAG_PAIR,        /* flag turns it on, flag_off turns it off */
    COMET_FLAG_ON_OFF,      /* flag on|off (or true|false) */
    COMET_FLAG_PART         /* flag LIST, shared by the knobs of one key group
                               (--offload optimizer,weights): each knob is named in the
                               list by its key's last word, those not listed turn off,
                               and "none" lists none */
} comet_flag_form;

typedef struct comet_knob {
    const char *name;           /* in reports: JSON fields and CSV columns */
    const char *key;            /* key path in files and errors, "strategy.offload.optimizer";
                                   knobs sharing a group ("strategy.offload") are adjacent */
    comet_knob_type type;
    size_t offset, size;        /* the field in comet_strategy */
    int64_t lo, hi;             /* COMET_KNOB_T_INT: the accepted range, the same in files,
                                   on the command line and when a strategy is resolved */
    int n_values;               /* COMET_KNOB_T_CHOICE: how many values */
    const char *(*value_name)(int value);
    const char *flag;           /* on the command line; NULL: none */
    const char *flag_alias;     /* another spelling of flag, or NULL */
    const char *flag_off;       /* COMET_FLAG_PAIR: the flag that turns it off */
    comet_flag_form flag_form;
    bool search_flag;           /* comet search takes the flag too (it varies the others) */
    int column;                 /* position among the report's knob columns; -1: not one */
    int help_line;              /* line among the knob lines of the help; -1: none */
    const char *help_usage;     /* that line's flags and its explanation (NULL: none), */
    const char *help;           /*   given on the line's first knob only */
} comet_knob;

/* The knob with that id (NULL past the table). */
const comet_knob *comet_knob_get(comet_knob_id id);

/* The whole table, COMET_KNOB_COUNT knobs indexed by id, for loops that
 * run often (the limit checks of every resolved strategy). */
const comet_knob *comet_knob_table(void);

/* The knob a report names `name` (a JSON field, a CSV column), or NULL. */
const comet_knob *comet_knob_named(const char *name);

/* The knob in report column `column`, or NULL past the last. */
const comet_knob *comet_knob_in_column(int column);

/* The key under the strategy section: "offload.optimizer". */
const char *comet_knob_file_key(const comet_knob *k);

/* The value of an INT, BOOL (0 or 1) or CHOICE knob, and setting it (a
 * BOOL takes v != 0). */
int64_t comet_knob_value(const comet_knob *k, const comet_strategy *s);
void comet_knob_set_value(const comet_knob *k, comet_strategy *s, int64_t v);

#endif
