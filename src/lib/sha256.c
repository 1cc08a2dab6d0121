/* SHA-256 of a buffer: see sha256.h. */
#include <openssl/evp.h>

#include "lib/sha256.h"
#include "lib/util.h"

/* Hash bytes with SHA-256. */
void sha256_hex(const void *data, size_t len, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
		die("sha256 failed");
	for (i = 0; i < n; i++) {	/* by table: a printf a byte was most of a hash's cost */
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}
