/* Unit tests for sha256_hex: the FIPS 180-2 examples, and bytes past a NUL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lib/sha256.h"

/* The published digests of "", "abc" and the 448-bit message. */
static void test_vectors(void **state)
{
	static const struct {
		const char *in, *hex;
	} cases[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	char hex[65];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(hex, 'x', sizeof(hex));
		sha256_hex(cases[i].in, strlen(cases[i].in), hex);
		assert_string_equal(hex, cases[i].hex);
	}
}

/* The length counts, not the first NUL. */
static void test_length(void **state)
{
	char a[65], b[65];

	(void)state;
	sha256_hex("a\0b", 3, a);
	sha256_hex("a", 1, b);
	assert_string_not_equal(a, b);
	assert_int_equal(strlen(a), 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
