/* guard.c — who may talk to the server (serve_internal.h): the name a request's Host header
 * gives, the Origin of the web page that sent it, and the media type of a POST body. Pure
 * functions on header values, so the fuzzer drives them as they are.
 *
 * Why: a server on 127.0.0.1 is reachable by every page the person's browser opens. A page can
 * send a "simple" cross-origin POST (text/plain, no preflight) and start a run; and by pointing
 * a name of its own at 127.0.0.1 (DNS rebinding) it becomes same-origin with the server and can
 * read the private memory. The Host check stops the second (the browser sends the page's name),
 * the Origin check the first, and requiring application/json on bodies is the backstop: a
 * browser sends that type cross-origin only after a preflight, which the Origin check refuses. */
#include "serve_internal.h"

#include "dream/error.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GUARD_NAME_MAX 256

static bool guard_name_char(int c) { return isalnum(c) || c == '-' || c == '.' || c == '_'; }

/* The length of a host at the start of s: a name of [A-Za-z0-9._-], or an IPv6 literal in
 * brackets; 0 when there is none. */
static size_t guard_host_len(const char *s)
{
    if (s[0] == '[') {
        size_t n = 1;
        while (isxdigit((unsigned char)s[n]) || s[n] == ':' || s[n] == '.') n++;
        return s[n] == ']' && n > 1 ? n + 1 : 0;
    }
    size_t n = 0;
    while (guard_name_char((unsigned char)s[n])) n++;
    return n;
}

/* Whether s is empty or ":" and 1 to 5 digits. */
static bool guard_port_ok(const char *s)
{
    if (!*s) return true;
    if (*s++ != ':') return false;
    size_t n = strspn(s, "0123456789");
    return n >= 1 && n <= 5 && !s[n];
}

bool serve_guard_host_name(const char *host, char *name, size_t cap)
{
    size_t n = guard_host_len(host);
    if (!n || n >= cap || !guard_port_ok(host + n)) return false;
    for (size_t i = 0; i < n; i++) name[i] = (char)tolower((unsigned char)host[i]);
    name[n] = 0;
    return true;
}

/* Splits a list (entries separated by commas or white space) into *items, each checked by
 * check (0, or an error set with dream_error_set). */
static int guard_split(const char *list, char ***items, size_t *n, int (*check)(const char *entry))
{
    *items = NULL;
    *n = 0;
    const char *p = list ? list : "";
    while (*p) {
        p += strspn(p, ", \t\n");
        size_t len = strcspn(p, ", \t\n");
        if (!len) continue;
        char *e = strndup(p, len);
        char **grown = e ? realloc(*items, (*n + 1) * sizeof **items) : NULL;
        if (!grown) {
            free(e);
            return dream_error_set(DREAM_ENOMEM, "out of memory");
        }
        *items = grown;
        (*items)[(*n)++] = e;
        int rc = check(e);
        if (rc) return rc;
        p += len;
    }
    return 0;
}

static int guard_check_host(const char *e)
{
    char name[GUARD_NAME_MAX];
    if (serve_guard_host_name(e, name, sizeof name) && guard_host_len(e) == strlen(e)) return 0;
    if (serve_guard_host_name(e, name, sizeof name))
        return dream_error_set(DREAM_EINVAL, "--allow-host '%s' has a port: give the name alone (--allow-host %s); every port is allowed", e, name);
    return dream_error_set(DREAM_EINVAL,
                           "--allow-host '%s' is not a host name: give the name a client puts in the URL, without scheme, port or path "
                           "(e.g. --allow-host mybox.local; the list comes from --allow-host or DREAM_ALLOW_HOSTS)",
                           e);
}

bool serve_guard_origin_form(const char *e)
{
    if (!isalpha((unsigned char)e[0])) return false;
    size_t s = strspn(e, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");
    if (strncmp(e + s, "://", 3)) return false;
    const char *h = e + s + 3;
    size_t n = guard_host_len(h);
    return n > 0 && guard_port_ok(h + n);
}

static int guard_check_origin(const char *e)
{
    if (!strcmp(e, "*"))
        return dream_error_set(DREAM_EINVAL, "--cors '*' is refused: it would let every web page read the memory; name each origin "
                                             "(e.g. --cors http://localhost:5173; the list comes from --cors or DREAM_CORS)");
    if (!strcasecmp(e, "null"))
        return dream_error_set(DREAM_EINVAL, "--cors 'null' is refused: 'null' is the origin of sandboxed frames and local files, "
                                             "which any page can take on; serve the page from an http origin and name that");
    if (serve_guard_origin_form(e)) return 0;
    return dream_error_set(DREAM_EINVAL,
                           "--cors '%s' is not an origin: give scheme://host[:port] as the browser's Origin header has it, with no path "
                           "or trailing '/' (e.g. --cors http://localhost:5173; the list comes from --cors or DREAM_CORS)",
                           e);
}

int serve_guard_init(struct serve_guard *g, const char *bound, const char *hosts, const char *origins)
{
    *g = (struct serve_guard){0};
    g->bound = strdup(bound);
    if (!g->bound) return dream_error_set(DREAM_ENOMEM, "out of memory");
    struct in_addr any;
    g->any_address = inet_pton(AF_INET, bound, &any) == 1 && any.s_addr == htonl(INADDR_ANY);
    int rc = guard_split(hosts, &g->hosts, &g->n_hosts, guard_check_host);
    if (!rc) rc = guard_split(origins, &g->origins, &g->n_origins, guard_check_origin);
    for (size_t i = 0; !rc && i < g->n_hosts; i++)
        for (char *c = g->hosts[i]; *c; c++) *c = (char)tolower((unsigned char)*c);
    if (rc) serve_guard_free(g);
    return rc;
}

void serve_guard_free(struct serve_guard *g)
{
    for (size_t i = 0; i < g->n_hosts; i++) free(g->hosts[i]);
    for (size_t i = 0; i < g->n_origins; i++) free(g->origins[i]);
    free(g->hosts);
    free(g->origins);
    free(g->bound);
    *g = (struct serve_guard){0};
}

bool serve_guard_host_allowed(const struct serve_guard *g, const char *host)
{
    char name[GUARD_NAME_MAX];
    if (!serve_guard_host_name(host, name, sizeof name)) return false;
    static const char *const local[] = {"localhost", "127.0.0.1", "[::1]"};
    for (size_t i = 0; i < sizeof local / sizeof local[0]; i++)
        if (!strcmp(name, local[i])) return true;
    if (g->bound && !strcasecmp(name, g->bound)) return true;
    for (size_t i = 0; i < g->n_hosts; i++)
        if (!strcmp(name, g->hosts[i])) return true;
    /* Bound to every address, the server is reached by this machine's addresses, which cannot
     * be listed here; an address is no name a page can point elsewhere, so it is safe. */
    struct in_addr a;
    return g->any_address && inet_pton(AF_INET, name, &a) == 1;
}

enum serve_origin serve_guard_origin(const struct serve_guard *g, const char *origin, const char *host)
{
    if (!origin) return SERVE_ORIGIN_NONE;
    /* The server's own origin: a page served by this very name and port (the Host check has
     * already let the name in). */
    if (host && !strncasecmp(origin, "http://", 7) && !strcasecmp(origin + 7, host)) return SERVE_ORIGIN_SAME;
    for (size_t i = 0; i < g->n_origins; i++)
        if (!strcasecmp(origin, g->origins[i])) return SERVE_ORIGIN_CORS;
    return SERVE_ORIGIN_REFUSED;
}

bool serve_guard_json_type(const char *content_type)
{
    if (!content_type) return false;
    const char *p = content_type + strspn(content_type, " \t");
    if (strncasecmp(p, "application/json", 16)) return false;
    p += 16;
    p += strspn(p, " \t");
    return !*p || *p == ';';
}

bool serve_guard_header_list(const char *list)
{
    if (!list) return false;
    size_t names = 0;
    for (const char *p = list; *p;) {
        p += strspn(p, ", \t");
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_");
        if (!n && *p) return false;
        names += n > 0;
        p += n;
    }
    return names > 0;
}
