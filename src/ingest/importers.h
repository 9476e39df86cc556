/* importers.h — one importer per source format, each in import_<format>.c: it reads one file
 * (an istream) and hands every conversation in it to ingest_emit (ingest_common.h). The
 * dispatcher (ingest.c) detects a file's format and calls the matching importer. Each returns
 * non-zero only when the store failed (then the run stops). */
#ifndef DREAM_INGEST_IMPORTERS_H
#define DREAM_INGEST_IMPORTERS_H

#include "ingest_common.h"

int import_chatgpt(struct ingest_ctx *ctx, struct istream *in);
int import_claude(struct ingest_ctx *ctx, struct istream *in);
int import_claude_code(struct ingest_ctx *ctx, struct istream *in);
int import_codex(struct ingest_ctx *ctx, struct istream *in);
int import_pi(struct ingest_ctx *ctx, struct istream *in);
int import_openai_jsonl(struct ingest_ctx *ctx, struct istream *in);

#endif
