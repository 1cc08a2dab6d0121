/* Looking for credentials written into a job script. */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "jobsh/secrets.h"
#include "lib/util.h"

struct pattern {
	const char *re;
	int icase;
	const char *what;
};

static const struct pattern patterns[] = {
	{ "hf_[A-Za-z0-9]{30,}", 0, "a Hugging Face token" },
	{ "gh[pousr]_[A-Za-z0-9]{36,}", 0, "a GitHub token" },
	{ "github_pat_[A-Za-z0-9_]{40,}", 0, "a GitHub token" },
	{ "(^|[^A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}", 0, "an API key (sk-...)" },
	{ "xox[abprs]-[A-Za-z0-9-]{10,}", 0, "a Slack token" },
	{ "AKIA[0-9A-Z]{16}", 0, "an AWS access key" },
	{ "glpat-[A-Za-z0-9_-]{20,}", 0, "a GitLab token" },
	{ "-----BEGIN [A-Z ]*PRIVATE KEY-----", 0, "a private key" },
	{ "hooks\\.slack\\.com/services/[A-Za-z0-9]+/[A-Za-z0-9]+", 0,
	  "a Slack webhook URL with its key" },
	{ "discord(app)?\\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}", 0,
	  "a Discord webhook URL with its key" },
	{ "authorization: *(bearer|basic|token) +[A-Za-z0-9._~+/=-]{8,}", 1,
	  "an Authorization header with a literal credential" },
	{ "[?&](key|token|api_key|apikey|access_token)=[A-Za-z0-9._-]{12,}", 1,
	  "a URL with a key in it" },
	{ "(^|[^A-Za-z0-9_])[A-Za-z0-9_]*(token|secret|passw(or)?d|api_?key|access_?key|"
	  "private_?key|webhook_?url)=[\"']?[^\"'$` \t(][^\"' \t]{7,}", 1,
	  "a literal value assigned to a secret's name" },
};

/* Scan every line against every pattern. */
int secrets_scan(const char *text, struct secret_hit *hit)
{
	regex_t re[ARRAY_SIZE(patterns)];
	const char *p = text;
	size_t i;
	int line = 0, hits = 0;

	for (i = 0; i < ARRAY_SIZE(patterns); i++)
		if (regcomp(&re[i], patterns[i].re, REG_EXTENDED | REG_NOSUB |
			    (patterns[i].icase ? REG_ICASE : 0)) != 0)
			BUG("secret pattern %zu does not compile", i);
	while (*p) {
		size_t len = strcspn(p, "\n");
		char *l = xstrndup(p, len);

		line++;
		for (i = 0; i < ARRAY_SIZE(patterns); i++) {
			if (regexec(&re[i], l, 0, NULL, 0) != 0)
				continue;
			if (!hits++) {
				hit->line = line;
				hit->what = patterns[i].what;
			}
			break;
		}
		free(l);
		p += len + (p[len] == '\n');
	}
	for (i = 0; i < ARRAY_SIZE(patterns); i++)
		regfree(&re[i]);
	return hits;
}
