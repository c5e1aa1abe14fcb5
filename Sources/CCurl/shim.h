#include <curl/curl.h>

// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic: Swift needs
// one typed wrapper per argument type.
static inline CURLcode provision_curl_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode provision_curl_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode provision_curl_easy_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode provision_curl_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
typedef size_t (*provision_curl_write_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
static inline CURLcode provision_curl_easy_setopt_write_function(CURL *h, CURLoption o, provision_curl_write_callback f) { return curl_easy_setopt(h, o, f); }
static inline CURLcode provision_curl_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode provision_curl_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode provision_curl_easy_getinfo_off_t(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode provision_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
static inline CURLcode provision_curl_easy_setopt_off_t(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode provision_curl_global_init_all(void) { return curl_global_init(CURL_GLOBAL_ALL); }
// The value of a response header of the last response (after redirects), or NULL when absent.
static inline const char *provision_curl_header_value(CURL *h, const char *name) {
    struct curl_header *header = NULL;
    if (curl_easy_header(h, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK || header == NULL) { return NULL; }
    return header->value;
}
// How many field lines named `name` the last response (after redirects) had.
static inline size_t provision_curl_header_count(CURL *h, const char *name) {
    struct curl_header *header = NULL;
    if (curl_easy_header(h, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK || header == NULL) { return 0; }
    return header->amount;
}
// The value of the index-th field line named `name` of the last response, or NULL.
static inline const char *provision_curl_header_value_at(CURL *h, const char *name, size_t index) {
    struct curl_header *header = NULL;
    if (curl_easy_header(h, name, index, CURLH_HEADER, -1, &header) != CURLHE_OK || header == NULL) { return NULL; }
    return header->value;
}
