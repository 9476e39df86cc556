/* serve_load.c — a bounded load test of an OpenAI-compatible server: N chat completions, C in
 * flight at a time (libcurl multi), each a different short user message at temperature 0.
 * Prints errors, latency p50/p90/p99, requests per second and completion tokens per second
 * (from each reply's usage). Any error makes the exit status 1.
 *
 *   serve_load --url http://127.0.0.1:8080 [--n 200] [--concurrency 16] [--max-tokens 32]
 *              [--api-key KEY] [--label NAME] */
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct req {
    char *body;
    char *reply;
    size_t len;
    double start, latency;
    CURL *easy;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t on_data(char *p, size_t size, size_t n, void *ud)
{
    struct req *r = ud;
    char *g = realloc(r->reply, r->len + size * n + 1);
    if (!g) return 0;
    r->reply = g;
    memcpy(r->reply + r->len, p, size * n);
    r->len += size * n;
    r->reply[r->len] = 0;
    return size * n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *sorted, int n, double p)
{
    int i = (int)(p * (n - 1) + 0.5);
    return sorted[i < n ? i : n - 1];
}

int main(int argc, char **argv)
{
    const char *url = NULL, *key = NULL, *label = "server";
    int n = 200, conc = 16, max_tokens = 32;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "serve_load: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--url")) url = v;
        else if (!strcmp(a, "--n")) n = atoi(v);
        else if (!strcmp(a, "--concurrency")) conc = atoi(v);
        else if (!strcmp(a, "--max-tokens")) max_tokens = atoi(v);
        else if (!strcmp(a, "--api-key")) key = v;
        else if (!strcmp(a, "--label")) label = v;
        else {
            fprintf(stderr, "serve_load: unknown option %s\n", a);
            return 2;
        }
    }
    if (!url || n < 1 || conc < 1) {
        fprintf(stderr, "usage: serve_load --url URL [--n 200] [--concurrency 16] [--max-tokens 32] [--api-key KEY] [--label NAME]\n");
        return 2;
    }
    char endpoint[1024];
    snprintf(endpoint, sizeof endpoint, "%s/v1/chat/completions", url);
    static const char *topics[] = {"my garden", "the Rust borrow checker", "a trip to Lisbon", "sourdough starters", "the quarterly budget",
                                   "Kubernetes ingress", "learning the cello", "my grandmother's recipes"};
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct req *rs = calloc((size_t)n, sizeof *rs);
    double *lat = calloc((size_t)n, sizeof *lat);
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    char auth[512];
    if (key) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", key);
        hdr = curl_slist_append(hdr, auth);
    }
    for (int i = 0; i < n; i++) {
        char user[256];
        snprintf(user, sizeof user, "Request %d: tell me something about %s.", i, topics[i % 8]);
        json_t *b = json_pack("{s:s, s:[{s:s, s:s}], s:f, s:i}", "model", "bench", "messages", "role", "user", "content", user, "temperature",
                              0.0, "max_tokens", max_tokens);
        rs[i].body = json_dumps(b, JSON_COMPACT);
        json_decref(b);
    }
    CURLM *multi = curl_multi_init();
    int next = 0, running = 0, done = 0, errors = 0;
    long tokens = 0;
    double t0 = now_s();
    while (done < n) {
        while (running < conc && next < n) {
            struct req *r = &rs[next++];
            r->easy = curl_easy_init();
            curl_easy_setopt(r->easy, CURLOPT_URL, endpoint);
            curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, hdr);
            curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->body);
            curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, on_data);
            curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
            curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
            curl_easy_setopt(r->easy, CURLOPT_TIMEOUT, 600L);
            r->start = now_s();
            curl_multi_add_handle(multi, r->easy);
            running++;
        }
        int still;
        curl_multi_perform(multi, &still);
        CURLMsg *m;
        int q;
        while ((m = curl_multi_info_read(multi, &q))) {
            if (m->msg != CURLMSG_DONE) continue;
            struct req *r;
            curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
            long http = 0;
            curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &http);
            r->latency = now_s() - r->start;
            lat[done++] = r->latency;
            json_t *j = r->reply ? json_loads(r->reply, 0, NULL) : NULL;
            json_t *ct = json_object_get(json_object_get(j, "usage"), "completion_tokens");
            if (m->data.result != CURLE_OK || http != 200 || !json_is_integer(ct)) {
                errors++;
                fprintf(stderr, "serve_load: request %ld failed: %s, HTTP %ld: %.200s\n", (long)(r - rs), curl_easy_strerror(m->data.result),
                        http, r->reply ? r->reply : "");
            } else tokens += (long)json_integer_value(ct);
            json_decref(j);
            curl_multi_remove_handle(multi, r->easy);
            curl_easy_cleanup(r->easy);
            running--;
        }
        if (done < n) curl_multi_poll(multi, NULL, 0, 10, NULL);
    }
    double wall = now_s() - t0;
    qsort(lat, (size_t)n, sizeof *lat, cmp_double);
    printf("%s: %d requests, %d concurrent, max_tokens %d: %d errors; latency p50 %.3f s, p90 %.3f s, p99 %.3f s; "
           "%.2f req/s, %.1f completion tok/s (%ld tokens in %.2f s)\n",
           label, n, conc, max_tokens, errors, pct(lat, n, 0.5), pct(lat, n, 0.9), pct(lat, n, 0.99), n / wall, tokens / wall, tokens,
           wall);
    for (int i = 0; i < n; i++) {
        free(rs[i].body);
        free(rs[i].reply);
    }
    free(rs);
    free(lat);
    curl_slist_free_all(hdr);
    curl_multi_cleanup(multi);
    curl_global_cleanup();
    return errors ? 1 : 0;
}
