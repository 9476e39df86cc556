/* cli_read.h — the read verbs' shared driver (resolve, read, section, links, infobox, list,
 * search, status): parse the common options, open a reader, call the tool, print. */
#ifndef DREAM_CLI_READ_H
#define DREAM_CLI_READ_H

/* What a verb takes besides the common options (--wiki, --store, --json). */
struct cli_read_verb {
    const char *verb;   /* the CLI verb */
    const char *tool;   /* the dream_read_call tool */
    const char *usage;  /* the usage text after "usage: dream <verb> " */
    const char *help;   /* a paragraph */
    int positionals;    /* 0: none; 1: NAME (all words joined); 2: NAME ANCHOR; 3: WORDS as "query" */
    int options;        /* bit set of CLI_READ_OPT_* */
};

#define CLI_READ_OPT_WHOLE 1   /* --whole */
#define CLI_READ_OPT_PAGE 2    /* --limit N --offset N */
#define CLI_READ_OPT_MEMBERS 4 /* --category/--type/--kind/--series X */
#define CLI_READ_OPT_LIMIT 8   /* --limit N */
#define CLI_READ_OPT_SEARCH 16 /* --conversations, --since DAY, --until DAY */
#define CLI_READ_NO_WIKI_OK 32 /* no wiki yet is no error (status: the store is still shown) */

int cli_read_main(const struct cli_read_verb *v, int argc, char **argv);

#endif
