/*
 * The #SBATCH lines of a job script, read as sbatch reads them: from the
 * top, up to the first line that is neither a comment nor blank; each line
 * may hold several options; a word starting with '#' ends the line. Short
 * options are given their long names ("-t" is "time"). Pure: no I/O.
 */
#ifndef XLOOP_DIRECTIVES_H
#define XLOOP_DIRECTIVES_H

#include <stddef.h>

struct sbatch_directive {
	char *option;	/* long name without "--": "time", "cpus-per-task" */
	char *value;	/* "" when none was given */
	char *text;	/* the option as written: "-t 1:00:00" */
	int line;	/* 1-based line of job.sh */
};

struct sbatch_directives {
	struct sbatch_directive *v;
	size_t nr;
};

/* Parse the directives of text (NUL-terminated) into out (zeroed first). */
void sbatch_directives_parse(const char *text, struct sbatch_directives *out);

void sbatch_directives_release(struct sbatch_directives *d);

/* The fewest nodes the directives' --nodes asks ("2-4": 2), 1 when none. */
long long sbatch_directives_nodes(const struct sbatch_directives *d);

/* Append the #SBATCH lines of text's head to out, each with its '\n'. */
struct buf;
void sbatch_header_lines(const char *text, struct buf *out);

#endif
