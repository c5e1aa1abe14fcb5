// OpenSSL's libcrypto, for SHA-256 at hardware speed (SHA-NI) over whole stores.
#include <openssl/evp.h>
