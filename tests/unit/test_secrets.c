/* Unit tests for the secret scan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "jobsh/secrets.h"

/* The line and kind of the first hit, or 0. */
static int first(const char *text, const char **what)
{
	struct secret_hit h = { 0, NULL };

	if (secrets_scan(text, &h) == 0)
		return 0;
	*what = h.what;
	return h.line;
}

static void test_found(void **state)
{
	static const struct {
		const char *text;
		int line;
		const char *what;
	} cases[] = {
		{ "#!/bin/bash\nexport HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\n", 2,
		  "Hugging Face" },
		{ "LR=1\n\n# ghp_0123456789abcdefghijABCDEFGHIJ0123456789\n", 3, "GitHub" },
		{ "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx\n", 1, "sk-" },
		{ "WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567\n", 1,
		  "secret's name" },
		{ "export DB_PASSWORD='hunter2hunter2'\n", 1, "secret's name" },
		{ "curl -H 'Authorization: Bearer abcdef0123456789' https://x\n", 1,
		  "Authorization" },
		{ "URL=https://discord.com/api/webhooks/1234567/AbCdEfGhIjKlMnOpQrStUvWx\n", 1,
		  "Discord" },
		{ "curl https://hooks.slack.com/services/T000/B000/XXXXXXXX\n", 1, "Slack" },
		{ "aws_key=AKIAIOSFODNN7EXAMPLE\n", 1, "AWS" },
		{ "HF_TOKEN_FILE=/home/me/.hf\nhf_token=abcdefgh12345678\n", 2, "secret's name" },
		{ "wget 'https://api.example.com/v1?api_key=abcdef0123456789'\n", 1, "URL" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *what = NULL;

		if (first(cases[i].text, &what) != cases[i].line ||
		    !strstr(what, cases[i].what))
			fail_msg("case %zu: '%s' gave %s", i, cases[i].text, what);
	}
}

static void test_not_found(void **state)
{
	static const char *const clean[] = {
		"#!/bin/bash\nexport HF_TOKEN=\"$HF_TOKEN\"\n",
		"HF_TOKEN=$(cat ~/.config/hf_token)\n",
		"API_KEY=`cat key.txt`\n",
		"TOKENIZER=bert-base-uncased\nMAX_TOKENS=512\n",
		"curl -H \"Authorization: Bearer $TOKEN\" https://x\n",
		"python train.py --lr 0.1 --sk-learn-compat\n",
		"PASSWORD=\n",
		"# set HF_TOKEN in your environment\n",
		"task-sk-1\n",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(clean) / sizeof(clean[0]); i++) {
		const char *what = NULL;

		if (first(clean[i], &what) != 0)
			fail_msg("false positive on '%s': %s", clean[i], what);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found),
		cmocka_unit_test(test_not_found),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
