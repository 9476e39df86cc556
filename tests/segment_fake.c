/* segment_fake.c — see segment_fake.h. */
#include "segment_fake.h"

#include "../src/util/buf.h"

#include <stdio.h>
#include <string.h>

char *fake_chunk_answer(const char *prompt)
{
    struct dbuf b = {0};
    dbuf_puts(&b, "Here are the chunks:\n```json\n{\"chunks\": [");
    const char *p = strstr(prompt, "--- end of policy ---");
    int n_chunks = 0;
    char open_id[256] = "", last_id[256] = "", label[64] = "";
    while (p && (p = strstr(p, "\n[")) != NULL) {
        p++;
        char role[16], id[256];
        int pos;
        if (sscanf(p, "[%15[a-z]] (id: %255[^,], position %d)", role, id, &pos) != 3) continue;
        if (strcmp(role, "user") == 0) {
            if (*open_id) {
                dbuf_printf(&b, "%s{\"start_message_id\": \"%s\", \"end_message_id\": \"%s\", \"label\": \"%s\"}", n_chunks ? ", " : "",
                            open_id, last_id, label);
                n_chunks++;
            }
            snprintf(open_id, sizeof open_id, "%s", id);
            snprintf(label, sizeof label, "topic at %d", pos);
        }
        snprintf(last_id, sizeof last_id, "%s", id);
    }
    if (*open_id)
        dbuf_printf(&b, "%s{\"start_message_id\": \"%s\", \"end_message_id\": \"%s\", \"label\": \"%s\"}", n_chunks ? ", " : "", open_id,
                    last_id, label);
    dbuf_puts(&b, "]}\n```\nLet me know if you need more.");
    return dbuf_take(&b);
}

