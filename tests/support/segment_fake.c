/* segment_fake.c — see segment_fake.h. */
#include "segment_fake.h"

#include "../src/util/buf.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

char *fake_chunk_answer(const char *prompt, bool positions)
{
    struct dbuf b = {0};
    dbuf_puts(&b, "Here are the chunks:\n```json\n{\"chunks\": [");
    const char *p = strstr(prompt, "--- end of policy ---");
    int n_chunks = 0;
    char open_id[256] = "", last_id[256] = "", label[64] = "";
    const char *fmt = positions ? "%s{\"start\": %s, \"end\": %s, \"label\": \"%s\"}"
                                : "%s{\"start_message_id\": \"%s\", \"end_message_id\": \"%s\", \"label\": \"%s\"}";
    while (p && (p = strstr(p, "\n[")) != NULL) {
        p++;
        char role[16], id[256];
        int pos;
        if (sscanf(p, "[%15[a-z]] (id: %255[^,], position %d)", role, id, &pos) != 3) continue;
        if (strcmp(role, "user") == 0) {
            if (*open_id) {
                dbuf_printf(&b, fmt, n_chunks ? ", " : "",
                            open_id, last_id, label);
                n_chunks++;
            }
            if (positions) snprintf(open_id, sizeof open_id, "%d", pos);
            else snprintf(open_id, sizeof open_id, "%s", id);
            snprintf(label, sizeof label, "topic at %d", pos);
        }
        if (positions) snprintf(last_id, sizeof last_id, "%d", pos);
        else snprintf(last_id, sizeof last_id, "%s", id);
    }
    if (*open_id)
        dbuf_printf(&b, fmt, n_chunks ? ", " : "", open_id,
                    last_id, label);
    dbuf_puts(&b, "]}\n```\nLet me know if you need more.");
    return dbuf_take(&b);
}

