/*
 * ingest.h — reading conversation exports and agent session logs into the store.
 *
 * The part src/ingest/ (docs/ARCHITECTURE.md): exports in, conversations into the store.
 * ingest.c is the dispatcher (files, directories, ZIPs, format detection) and format.c the
 * formats' names; import_<format>.c is one importer per format (importers.h), and
 * ingest_common.c what the importers share (ingest_common.h: building a conversation, JSON with
 * repair, times), which knows nothing of the dispatcher; istream.c and zip.c are the bounded
 * stream and ZIP readers. It may include store, os and util; nothing below it knows it.
 *
 * Six formats (../shared/reference/export-formats.md), recognised from their content:
 *   chatgpt       ChatGPT "Export data": the ZIP or its conversations.json. The visible branch
 *                 (current_node up the mapping tree); user and assistant text only.
 *   claude        Claude.ai export: the ZIP or its conversations.json. Text blocks; attachments'
 *                 extracted text kept as a marked quote.
 *   claude-code   Claude Code session JSONL (~/.claude/projects). The thread ending at the last
 *                 entry, through parentUuid (and across compactions); no sidechains, tool traffic,
 *                 thinking, snapshots or compaction summaries.
 *   codex         Codex CLI rollout JSONL (~/.codex/sessions). Messages only; no environment or
 *                 instruction boilerplate, reasoning or tool traffic.
 *   pi            pi agent session JSONL v1-3 (~/.pi/agent/sessions). The active branch through
 *                 parentId; text parts only.
 *   openai-jsonl  OpenAI chat "messages" JSONL: one conversation per line, identified by the
 *                 file's SHA-256 and the line number.
 *
 * Ingest is idempotent: the same input twice changes nothing. A conversation that grew is updated
 * in place and marked for re-processing (dream_store_put). Nothing is ever deleted because a
 * later export lacks it. Bad input never stops the run and never leaves half a conversation: a
 * conversation that cannot be read is skipped with a message naming the file and line (or byte),
 * and the run goes on with the next; invalid UTF-8 is replaced by U+FFFD and counted.
 * Exports are streamed, so memory is bounded by the largest conversation, not the export.
 */
#ifndef DREAM_INGEST_H
#define DREAM_INGEST_H

#include "dream/store.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum dream_format {
    DREAM_FORMAT_AUTO = 0, /* detect from content */
    DREAM_FORMAT_CHATGPT,
    DREAM_FORMAT_CLAUDE,
    DREAM_FORMAT_CLAUDE_CODE,
    DREAM_FORMAT_CODEX,
    DREAM_FORMAT_PI,
    DREAM_FORMAT_OPENAI_JSONL,
};

/* The format's name as used by --format and stored as a conversation's source ("auto" for
 * DREAM_FORMAT_AUTO). */
const char *dream_format_name(enum dream_format format);

/* Parses a name from dream_format_name; DREAM_EINVAL (message lists the names) otherwise. */
int dream_format_parse(const char *name, enum dream_format *out);

/* Why a conversation or a file was skipped. */
enum dream_skip_reason {
    DREAM_SKIP_EMPTY,       /* no user or assistant text */
    DREAM_SKIP_DUPLICATE,   /* an id seen earlier in the same file (the first one is kept) */
    DREAM_SKIP_MALFORMED,   /* unreadable JSON or structure, a truncated file or ZIP */
    DREAM_SKIP_UNSUPPORTED, /* a file whose content is no format we know */
    DREAM_SKIP_COUNT
};

/* Totals of one or more ingest calls (they add up; zero it before the first). */
struct dream_ingest_stats {
    size_t files;         /* files read */
    size_t ignored;       /* regular files under a directory that are not read for their name
                             (not *.json, *.jsonl or *.zip; hidden ones are not counted) */
    size_t conversations; /* conversations found, skipped ones included */
    size_t added, changed, unchanged;
    size_t skipped[DREAM_SKIP_COUNT];
    size_t repaired;      /* conversations stored with invalid UTF-8 replaced */
    size_t messages;      /* messages of added and changed conversations */
    unsigned long long bytes; /* input bytes read */
};

struct dream_ingest_params {
    enum dream_format format; /* DREAM_FORMAT_AUTO (default) or the format to force */
    /* Called for every skipped conversation or file: where names the file and line or byte
     * offset (and the conversation id when known); reason says why and what to do. */
    void (*on_skip)(void *user, enum dream_skip_reason why, const char *where, const char *reason);
    /* Called after each file and every 100 conversations, with the running totals. */
    void (*on_progress)(void *user, const char *path, const struct dream_ingest_stats *stats);
    void *user;
};

struct dream_ingest_params dream_ingest_default_params(void);

/* Ingests a file (JSON, JSONL or ZIP) or every *.json, *.jsonl and *.zip file under a directory
 * (recursively, in name order, skipping hidden entries), adding to *stats. Returns 0 when the
 * path could be walked, whatever was skipped; DREAM_ENOTFOUND when path does not exist; DREAM_EIO
 * when the store fails (then the run stops; what was stored stays). */
int dream_ingest_path(dream_store *store, const char *path, const struct dream_ingest_params *params,
                      struct dream_ingest_stats *stats);

/* Ingests an in-memory file (any format, a ZIP included); name stands for its path in messages
 * and provenance. Same returns as dream_ingest_path. */
int dream_ingest_buffer(dream_store *store, const char *name, const void *data, size_t len,
                        const struct dream_ingest_params *params, struct dream_ingest_stats *stats);

/* Detects the format of a file's content from its first bytes (head, at least the first line or
 * first array element for certainty). Returns DREAM_FORMAT_AUTO when it cannot tell. A ZIP is
 * reported as DREAM_FORMAT_AUTO here; dream_ingest_* look inside it. */
enum dream_format dream_format_detect(const void *head, size_t len);

/* The directory of an agent's sessions, where the agent itself keeps them: claude-code
 * $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects; codex $CODEX_HOME/sessions, else
 * ~/.codex/sessions; pi $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions. DREAM_EINVAL
 * for other formats. The caller frees *out. */
int dream_ingest_default_dir(enum dream_format format, char **out);

#ifdef __cplusplus
}
#endif
#endif
