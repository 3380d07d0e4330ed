#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

// The OpenSSL 3 headers the gateway uses, and static inline wrappers for the macros Swift
// cannot call. Nothing else belongs here.
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/crypto.h>
#include <openssl/core_names.h>

static inline void copenssl_free(void *pointer) { OPENSSL_free(pointer); }

/// `BIO_get_mem_data` is a macro over `BIO_ctrl`.
static inline long copenssl_bio_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

/// `EVP_PKEY_CTX_set_rsa_keygen_bits` is a function in OpenSSL 3, kept behind one name in case it is a macro.
static inline int copenssl_set_rsa_keygen_bits(EVP_PKEY_CTX *context, int bits) {
    return EVP_PKEY_CTX_set_rsa_keygen_bits(context, bits);
}

#endif
