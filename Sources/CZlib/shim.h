#include <zlib.h>

// deflateInit/deflateInit2/inflateInit2 are macros that pass the library version and struct size.
static inline int provision_deflate_init(z_streamp s, int level) { return deflateInit(s, level); }
static inline int provision_deflate_init2(z_streamp s, int level, int window_bits) {
    return deflateInit2(s, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
}
static inline int provision_inflate_init2(z_streamp s, int window_bits) { return inflateInit2(s, window_bits); }
