/* SHA-256 of a buffer: see sha256.h. */
#include <openssl/evp.h>

#include "lib/sha256.h"
#include "lib/util.h"

/* Hash bytes with SHA-256. */
void sha256_hex(const void *data, size_t len, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
		die("sha256 failed");
	for (i = 0; i < n; i++)
		xsnprintf(hex + 2 * i, 3, "%02x", md[i]);
}
