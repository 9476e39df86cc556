/* store_check.c — every text value of the store read back and checked for valid UTF-8 (see
 * dream_store_check_text in dream/store.h). A row of invalid UTF-8 breaks whatever reads the
 * store as text (Python's sqlite3 raises on it), so `dream check` names each one. */
#include "store_internal.h"

#include "dream/error.h"
#include "util/buf.h"
#include "util/utf8.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The FTS5 table's own tables: their text is a copy of the tables it indexes. */
static bool check_is_shadow(const char *table, char *const *virt, size_t n_virt)
{
    static const char *const kinds[] = {"_data", "_idx", "_content", "_docsize", "_config"};
    for (size_t i = 0; i < n_virt; i++) {
        size_t l = strlen(virt[i]);
        if (strncmp(table, virt[i], l) != 0) continue;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
            if (strcmp(table + l, kinds[k]) == 0) return true;
    }
    return false;
}

/* Appends "name" as an SQL identifier. */
static int check_ident(struct dbuf *b, const char *name)
{
    int rc = dbuf_putc(b, '"');
    for (const char *p = name; !rc && *p; p++) rc = *p == '"' ? dbuf_puts(b, "\"\"") : dbuf_putc(b, *p);
    return rc ? rc : dbuf_putc(b, '"');
}

/* The tables to read (ours, not SQLite's, not the search index's), malloc'd strings. */
static int check_tables(dream_store *store, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(store_db(store),
                           "SELECT name, sql LIKE 'CREATE VIRTUAL TABLE%' FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%' "
                           "ORDER BY name",
                           -1, &st, NULL))
        return store_sql_error(store, "listing the tables");
    char **all = NULL, **virt = NULL;
    size_t n_all = 0, n_virt = 0;
    int rc = DREAM_OK, step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        char ***to = sqlite3_column_int(st, 1) ? &virt : &all;
        size_t *k = to == &virt ? &n_virt : &n_all;
        char **g = realloc(*to, (*k + 1) * sizeof *g);
        char *name = strdup((const char *)sqlite3_column_text(st, 0));
        if (g) *to = g;
        if (!g || !name) {
            free(name);
            rc = dream_error_set(DREAM_ENOMEM, "out of memory");
            break;
        }
        g[(*k)++] = name;
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "listing the tables");
    sqlite3_finalize(st);
    size_t w = 0;
    for (size_t i = 0; i < n_all; i++) {
        if (!rc && !check_is_shadow(all[i], virt, n_virt)) all[w++] = all[i];
        else free(all[i]);
    }
    for (size_t i = 0; i < n_virt; i++) free(virt[i]);
    free(virt);
    if (rc) {
        free(all);
        return rc;
    }
    *out = all;
    *n = w;
    return DREAM_OK;
}

/* The SELECT of table's row key (its primary key columns, else rowid) then every column, with
 * the key's column count and names for the report. */
static int check_select(dream_store *store, const char *table, struct dbuf *sql, struct dbuf *keys, int *n_key)
{
    *n_key = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(store_db(store), "SELECT name, pk FROM pragma_table_info(?1) ORDER BY pk, cid", -1, &st, NULL))
        return store_sql_error(store, "reading a table's columns");
    int rc = DREAM_OK;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    struct dbuf cols = {0};
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (sqlite3_column_int(st, 1) > 0) {
            rc = (*n_key ? dbuf_puts(sql, ", ") : dbuf_puts(sql, "SELECT ")) || check_ident(sql, name) ||
                 dbuf_printf(keys, "%s%s", *n_key ? "\n" : "", name);
            (*n_key)++;
        }
        if (!rc) rc = dbuf_puts(&cols, ", ") || check_ident(&cols, name);
    }
    sqlite3_finalize(st);
    if (!rc && !*n_key) {
        rc = dbuf_puts(sql, "SELECT rowid") || dbuf_puts(keys, "rowid");
        *n_key = 1;
    }
    if (!rc) rc = dbuf_append(sql, cols.data ? cols.data : "", cols.len) || dbuf_puts(sql, " FROM ") || check_ident(sql, table);
    dbuf_free(&cols);
    return rc ? dream_error_set(DREAM_ENOMEM, "out of memory") : DREAM_OK;
}

/* "a=1, b=x" for the row's key columns. */
static int check_row_name(sqlite3_stmt *st, const char *keys, int n_key, struct dbuf *row)
{
    row->len = 0;
    const char *k = keys;
    int rc = DREAM_OK;
    for (int i = 0; !rc && i < n_key; i++) {
        size_t kl = strcspn(k, "\n");
        const char *v = (const char *)sqlite3_column_text(st, i);
        size_t vl = v ? utf8_valid_prefix(v, (size_t)sqlite3_column_bytes(st, i)) : 4;
        rc = dbuf_printf(row, "%s%.*s=%.*s", i ? ", " : "", (int)kl, k, (int)utf8_prefix(v ? v : "NULL", vl, 60), v ? v : "NULL");
        k += kl + (k[kl] == '\n');
    }
    return rc;
}

/* Reads every row of table, reporting each text value that is not valid UTF-8. */
static int check_table(dream_store *store, const char *table, dream_store_bad_text_fn fn, void *ud, size_t *n_bad)
{
    struct dbuf sql = {0}, keys = {0}, row = {0};
    int n_key = 0;
    int rc = check_select(store, table, &sql, &keys, &n_key);
    sqlite3_stmt *st = NULL;
    if (!rc && sqlite3_prepare_v2(store_db(store), sql.data, -1, &st, NULL)) rc = store_sql_error(store, "reading a table");
    int step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        for (int c = n_key; !rc && c < sqlite3_column_count(st); c++) {
            if (sqlite3_column_type(st, c) != SQLITE_TEXT) continue;
            const char *v = (const char *)sqlite3_column_text(st, c);
            size_t len = (size_t)sqlite3_column_bytes(st, c), ok = v ? utf8_valid_prefix(v, len) : len;
            if (ok == len) continue;
            (*n_bad)++;
            if (!fn) continue;
            rc = check_row_name(st, keys.data, n_key, &row);
            if (rc) break;
            struct dream_store_bad_text bad = {.table = table, .row = row.data, .column = sqlite3_column_name(st, c), .offset = ok};
            fn(ud, &bad);
        }
    }
    if (!rc && step != SQLITE_DONE) rc = store_sql_error(store, "reading a table");
    sqlite3_finalize(st);
    dbuf_free(&sql);
    dbuf_free(&keys);
    dbuf_free(&row);
    return rc;
}

int dream_store_check_text(dream_store *store, dream_store_bad_text_fn fn, void *ud, size_t *n_bad)
{
    size_t bad = 0, n = 0;
    char **tables = NULL;
    int rc = check_tables(store, &tables, &n);
    for (size_t i = 0; !rc && i < n; i++) rc = check_table(store, tables[i], fn, ud, &bad);
    for (size_t i = 0; i < n; i++) free(tables[i]);
    free(tables);
    if (n_bad) *n_bad = bad;
    return rc;
}
