/*
 * Unit tests for the streaming JSON writer: whatever it writes must be
 * byte for byte what jansson's json_dumps gives for the same document.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "lib/jsonw.h"

/* spelled out here, so that a change to JSONW_DUMP_FLAGS is noticed */
#define FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII)

static const char *const strings[] = {
	"", "plain", "quote \" and backslash \\", "slash / stays",
	"\b\f\n\r\t", "\x01\x02\x1f", "del \x7f", "caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac",
	"emoji \xf0\x9f\x98\x80 and \xf4\x8f\xbf\xbf", "\xef\xbf\xbf\xee\x80\x80",
	"<script>alert(1)</script>", "a\\u0041",
	/* past eight bytes (jsonw.c reads words): each kind in a later word, at its edges */
	"/home/user/study/.xloop/runs/r00042/logs/attempt-3.log",
	"seven b\"quote in the first word", "eight by\"quote first in the second",
	"fifteen bytes .\\ backslash last of the second word", "sixteen bytes ..\x1f",
	"a tab after nine\t", "del\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f stays plain",
	"after eight bytes caf\xc3\xa9 and \xe6\x97\xa5 then plain again for a while",
	" !#$%&'()*+,-./0123456789:;<=>?@[]^_`{|}~ every plain kind",
};

/* Every string literal: the same as jansson's. */
static void test_quote(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		json_t *j = json_string(strings[i]);
		char *want = json_dumps(j, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
		struct buf b = BUF_INIT;

		assert_non_null(want);
		jsonw_quote(&b, strings[i]);
		assert_string_equal(b.s, want);
		free(want);
		json_decref(j);
		buf_release(&b);
	}
}

/* Every ASCII byte at every place of a string of three words: as jansson. */
static void test_quote_every_ascii_byte(void **state)
{
	char s[25];
	int c;
	size_t at;

	(void)state;
	for (c = 1; c < 0x80; c++) {
		for (at = 0; at < sizeof(s) - 1; at++) {
			json_t *j;
			char *want;
			struct buf b = BUF_INIT;

			memset(s, 'a', sizeof(s) - 1);
			s[sizeof(s) - 1] = '\0';
			s[at] = (char)c;
			j = json_string(s);
			want = json_dumps(j, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
			assert_non_null(want);
			jsonw_quote(&b, s);
			assert_string_equal(b.s, want);
			free(want);
			json_decref(j);
			buf_release(&b);
		}
	}
}

/* Bytes that are not UTF-8 come out as '?', as utf8_clean() shows them. */
static void test_not_utf8(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	jsonw_quote(&b, "a\xff" "b\xc3");
	assert_string_equal(b.s, "\"a?b?\"");
	buf_release(&b);
}

static unsigned long long rng = 88172645463325252ull;

static unsigned next_rand(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* A random value, built in jansson and written by w in the same order. */
static json_t *random_value(struct jsonw *w, const char *key, int depth)
{
	static const double reals[] = { 0.5, 0.1, 3.0, -0.0, 1e300, 1.25e-7, 0.9123456789012345 };
	unsigned kind = next_rand(depth >= 4 ? 6 : 8);
	json_t *j;
	unsigned i, n;

	switch (kind) {
	case 0:
		j = json_string(strings[next_rand(sizeof(strings) / sizeof(strings[0]))]);
		jsonw_str(w, key, json_string_value(j));
		return j;
	case 1: {
		static const long long edges[] = { 0, -1, 9, 10, LLONG_MAX, LLONG_MIN };
		long long v = next_rand(4) ? (long long)next_rand(1u << 31) - (1ll << 30) :
			      edges[next_rand(sizeof(edges) / sizeof(edges[0]))];

		jsonw_int(w, key, v);
		return json_integer(v);
	}
	case 2: {
		double v = reals[next_rand(sizeof(reals) / sizeof(reals[0]))];

		jsonw_real(w, key, v);
		return json_real(v);
	}
	case 3:
		n = next_rand(2);
		jsonw_bool(w, key, (int)n);
		return n ? json_true() : json_false();
	case 4:
		jsonw_null(w, key);
		return json_null();
	case 5:
		jsonw_str_or_null(w, key, "");
		return json_null();
	case 6:
		j = json_array();
		n = next_rand(4);
		jsonw_open(w, key, '[');
		for (i = 0; i < n; i++)
			json_array_append_new(j, random_value(w, NULL, depth + 1));
		jsonw_close(w, ']');
		return j;
	default:
		j = json_object();
		n = next_rand(5);
		jsonw_open(w, key, '{');
		for (i = 0; i < n; i++) {
			char k[16];

			snprintf(k, sizeof(k), "k%u", i);
			json_object_set_new(j, k, random_value(w, k, depth + 1));
		}
		jsonw_close(w, '}');
		return j;
	}
}

/* 2,000 random documents, nested up to six deep, empty containers included. */
static void test_documents(void **state)
{
	int round;

	(void)state;
	for (round = 0; round < 2000; round++) {
		struct buf b = BUF_INIT;
		struct jsonw w;
		json_t *doc;
		char *want;

		jsonw_init(&w, &b, 0);
		doc = random_value(&w, NULL, 0);
		want = json_dumps(doc, FLAGS | JSON_ENCODE_ANY);
		assert_non_null(want);
		assert_string_equal(b.s, want);
		free(want);
		json_decref(doc);
		buf_release(&b);
	}
}

/* Objects nested as deep as the writer indents (its separators at every depth). */
static void test_deep(void **state)
{
	struct buf b = BUF_INIT;
	struct jsonw w;
	json_t *doc = json_object(), *o = doc;
	char *want;
	int d;

	(void)state;
	jsonw_init(&w, &b, 0);
	jsonw_open(&w, NULL, '{');
	for (d = 1; d < JSONW_MAX_DEPTH - 1; d++) {
		json_t *in = json_object();

		jsonw_int(&w, "a_rather_long_key_name", -d);
		json_object_set_new(o, "a_rather_long_key_name", json_integer(-d));
		jsonw_open(&w, "k", '{');
		json_object_set_new(o, "k", in);
		o = in;
	}
	jsonw_bool(&w, "last", 0);
	json_object_set_new(o, "last", json_false());
	jsonw_null(&w, "z");
	json_object_set_new(o, "z", json_null());
	for (d = 1; d < JSONW_MAX_DEPTH; d++)
		jsonw_close(&w, '}');
	want = json_dumps(doc, FLAGS);
	assert_string_equal(b.s, want);
	free(want);
	json_decref(doc);
	buf_release(&b);
}

/* The streamed form: head's members, then the list, as one document. */
static void test_stream(void **state)
{
	int items;

	(void)state;
	for (items = 0; items < 3; items++) {
		json_t *head = json_pack("{s:s, s:i}", "schema", "x/1", "n", items);
		json_t *doc = json_deep_copy(head), *list = json_array();
		struct buf b = BUF_INIT;
		struct jsonw w;
		char *want;
		int i;

		jsonw_stream_begin(&w, &b, head, "runs");
		for (i = 0; i < items; i++)
			json_array_append_new(list, random_value(&w, NULL, 2));
		jsonw_stream_end(&w);
		json_object_set_new(doc, "runs", list);
		want = json_dumps(doc, FLAGS);
		assert_string_equal(b.s, want);
		free(want);
		buf_release(&b);
		json_decref(head);
		json_decref(doc);
	}
	{			/* an empty head */
		json_t *head = json_object();
		struct buf b = BUF_INIT;
		struct jsonw w;

		jsonw_stream_begin(&w, &b, head, "runs");
		jsonw_stream_end(&w);
		assert_string_equal(b.s, "{\n  \"runs\": []\n}");
		buf_release(&b);
		json_decref(head);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_quote_every_ascii_byte),
		cmocka_unit_test(test_not_utf8),
		cmocka_unit_test(test_documents),
		cmocka_unit_test(test_deep),
		cmocka_unit_test(test_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
