/*
 * The #SBATCH line reader (directives.h): every directive has an option
 * name, a value and its as-written text, sits on a line of the header that
 * starts with "#SBATCH", and sbatch_header_lines copies exactly those lines.
 */
#include "fuzz.h"
#include "lib/buf.h"
#include "jobsh/directives.h"

/* The start of line n (1-based) of text, or NULL. */
static const char *line_start(const char *text, int n)
{
	for (; n > 1 && text; n--) {
		text = strchr(text, '\n');
		if (text)
			text++;
	}
	return text;
}

/* Read the directives of one job script. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_cstr(data, size);
	struct sbatch_directives d;
	struct buf lines = BUF_INIT;
	size_t i;

	sbatch_directives_parse(in, &d);
	sbatch_header_lines(in, &lines);
	for (i = 0; i < d.nr; i++) {
		const char *l = line_start(in, d.v[i].line);

		FUZZ_CHECK(d.v[i].option && *d.v[i].option && d.v[i].value && d.v[i].text,
			   "directive %zu incomplete", i);
		FUZZ_CHECK(l && starts_with(l, "#SBATCH"), "line %d is no #SBATCH line",
			   d.v[i].line);
		FUZZ_CHECK(i == 0 || d.v[i].line >= d.v[i - 1].line, "lines out of order");
	}
	FUZZ_CHECK(d.nr == 0 || strstr(lines.s, "#SBATCH"), "header lines lost");
	{
		long long n = sbatch_directives_nodes(&d);

		FUZZ_CHECK(n >= 1 && n <= 999999999, "nodes %lld", n);
	}
	sbatch_directives_release(&d);
	buf_release(&lines);
	free(in);
	return 0;
}
