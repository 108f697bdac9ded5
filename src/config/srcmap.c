/* The source map: where each key of a document stood. Errors found after
 * reading (for example by comet_strategy_resolve, which only knows the key
 * "strategy.tp") are pointed back at file:line:col through it. A key that
 * is not recorded (it came from a preset, say) is placed at its nearest
 * recorded parent, such as the "model:" line that named the preset. Keys
 * of several files live side by side, each naming its file; reading a
 * section again drops the old section's keys (config.c). */
#include "srcmap.h"

#include <stdio.h>
#include <string.h>

static void drop_file(comet_srcmap *m, int file)
{
    int kept = 0;
    for (int i = 0; i < m->n; i++)
        if (m->entries[i].file != file)
            m->entries[kept++] = m->entries[i];
    m->n = kept;
}

void cfg_srcmap_use_file(comet_srcmap *m, const char *file)
{
    char name[sizeof m->files[0]];
    snprintf(name, sizeof name, "%s", file ? file : "");
    for (int i = 0; i < m->n_files; i++)
        if (strcmp(name, m->files[i]) == 0) {
            m->current = i;
            return;
        }
    int slot = m->n_files;
    if (slot < COMET_SRCMAP_FILES) {
        m->n_files++;
    } else {
        /* table full: reuse the slot after the current one */
        slot = (m->current + 1) % COMET_SRCMAP_FILES;
        drop_file(m, slot);
    }
    memcpy(m->files[slot], name, sizeof name);
    m->current = slot;
}

static int index_of(const comet_srcmap *m, const char *key)
{
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->entries[i].key, key) == 0)
            return i;
    return -1;
}

void cfg_srcmap_add(comet_srcmap *m, const char *key, int line, int column)
{
    int i = index_of(m, key);
    if (i < 0) {
        if (m->n == COMET_SRCMAP_MAX || strlen(key) >= sizeof m->entries[0].key)
            return;
        i = m->n++;
        snprintf(m->entries[i].key, sizeof m->entries[i].key, "%s", key);
    }
    m->entries[i].line = line;
    m->entries[i].column = column;
    m->entries[i].file = m->current;
}

/* Is key equal to prefix or below it ("prefix.x", "prefix[3]")? */
static int is_within(const char *key, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(key, prefix, n) == 0 && (key[n] == '\0' || key[n] == '.' || key[n] == '[');
}

void cfg_srcmap_drop(comet_srcmap *m, const char *key)
{
    int kept = 0;
    for (int i = 0; i < m->n; i++)
        if (!is_within(m->entries[i].key, key))
            m->entries[kept++] = m->entries[i];
    m->n = kept;
}

const comet_srcmap_entry *cfg_srcmap_find(const comet_srcmap *m, const char *key)
{
    char path[sizeof m->entries[0].key];
    snprintf(path, sizeof path, "%s", key);
    while (path[0]) {
        int i = index_of(m, path);
        if (i >= 0)
            return &m->entries[i];
        size_t cut = strlen(path);
        while (cut > 0 && path[cut] != '.' && path[cut] != '[')
            cut--;
        path[cut] = '\0';
    }
    return NULL;
}

void comet_srcmap_locate(const comet_srcmap *map, comet_error *err)
{
    if (!map || !err || err->line > 0 || !err->key[0])
        return;
    const comet_srcmap_entry *e = cfg_srcmap_find(map, err->key);
    if (!e)
        return;
    snprintf(err->file, sizeof err->file, "%s", cfg_srcmap_file(map, e));
    err->line = e->line;
    err->column = e->column;
}

const char *cfg_srcmap_file(const comet_srcmap *m, const comet_srcmap_entry *e)
{
    return e->file >= 0 && e->file < m->n_files ? m->files[e->file] : "";
}
