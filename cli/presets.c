/* comet presets: lists the embedded model, system, strategy and study
 * presets and validation tables, or prints one so users can copy and edit
 * it. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const kinds[] = {"models", "systems", "strategies", "studies", "validation"};

int cli_presets(int argc, char **argv)
{
    if (argc == 1 || (argc == 2 && strcmp(argv[1], "list") == 0)) {
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            printf("%s:\n", kinds[k]);
            const char *const *names = comet_preset_names(kinds[k]);
            for (size_t i = 0; names && names[i]; i++)
                printf("  %s\n", names[i]);
        }
        return CLI_OK;
    }
    if (argc == 3 && strcmp(argv[1], "show") == 0) {
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            const char *text = comet_preset_text(kinds[k], argv[2]);
            if (text) {
                fputs(text, stdout);
                return CLI_OK;
            }
        }
        fprintf(stderr, "comet presets: no preset named \"%s\" (see 'comet presets list')\n",
                argv[2]);
        return CLI_USAGE;
    }
    fprintf(stderr, "usage: comet presets [list | show NAME]\n");
    return CLI_USAGE;
}
