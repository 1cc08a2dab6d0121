/*
 * Configurations (pure): what makes two runs the same experiment. A
 * configuration is a job.sh's top-level assignments minus the seed
 * variable, values canonical (value_canon). Its text form is one line
 * "NAME=WORD" per assignment, sorted by name, WORD the jobsh_quote() of
 * the canonical value ("NAME:=WORD" for a value bash expands at run time,
 * WORD then quoting its text); its key is the sha256 of that text without
 * the seed's lines.
 */
#ifndef XLOOP_CONFKEY_H
#define XLOOP_CONFKEY_H

#include <stddef.h>

/* The configuration text of a job script (all variables); -1 with *cause. */
int confkey_config(const char *text, size_t len, char **out, char **cause);

/* The key of a configuration text without seed (NULL or "": none). */
void confkey_key(const char *config, const char *seed, char hex[65]);

/* The canonical value of var in config (malloc'd), or NULL when absent. */
char *confkey_value(const char *config, const char *var);

/* config with var's value replaced by value (canonicalised); malloc'd. */
char *confkey_with(const char *config, const char *var, const char *value);

#endif
