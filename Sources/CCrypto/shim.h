// OpenSSL's libcrypto: SHA-256 at hardware speed (SHA-NI) over whole stores, and Ed25519
// signatures of locks with their PEM keys.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/err.h>
