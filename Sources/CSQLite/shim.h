#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
static inline int provision_sqlite3_bind_blob_transient(sqlite3_stmt *s, int i, const void *p, int n) {
    return sqlite3_bind_blob(s, i, p, n, SQLITE_TRANSIENT);
}
static inline int provision_sqlite3_bind_text_transient(sqlite3_stmt *s, int i, const char *p, int n) {
    return sqlite3_bind_text(s, i, p, n, SQLITE_TRANSIENT);
}
// A zero-length blob must not be bound with a NULL pointer (that would store NULL).
static inline int provision_sqlite3_bind_empty_blob(sqlite3_stmt *s, int i) {
    return sqlite3_bind_zeroblob(s, i, 0);
}
