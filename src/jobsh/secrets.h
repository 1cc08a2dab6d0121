/*
 * The secret scan (seed 003): a job.sh is committed to git, so a token
 * written into it is leaked to everyone who can read the repository. The
 * scan looks for credentials written literally into a script: known token
 * shapes (Hugging Face, GitHub, OpenAI, Slack, AWS, GitLab...), literal
 * values assigned to names like *_TOKEN, *_API_KEY, *PASSWORD, an
 * "Authorization:" header with a literal credential, and webhook URLs that
 * carry their key. A value taken from the environment or a file
 * ("$HF_TOKEN", "$(cat ~/.hf_token)") is fine. Pure.
 */
#ifndef XLOOP_SECRETS_H
#define XLOOP_SECRETS_H

struct secret_hit {
	int line;		/* 1-based */
	const char *what;	/* "a Hugging Face token", ... (static) */
};

/*
 * Scan text (NUL-terminated). Returns the number of hits; the first is in
 * *hit (unchanged when there is none).
 */
int secrets_scan(const char *text, struct secret_hit *hit);

#endif
