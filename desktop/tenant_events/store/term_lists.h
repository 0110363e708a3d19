/* Terms, each with a list of seqs, for the archive writer's token files (_postings.c, pair_lists.c): a hash
table of terms, their seqs kept as varint steps, and the JSON lines (term, n, seqs) tokens_select reads. */

#ifndef TERM_LISTS_H
#define TERM_LISTS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef struct Entry {
    struct Entry *next; /* the next entry in its hash bucket */
    int64_t last;       /* the latest seq listed (pair_lists' words: the first seen) */
    int64_t n;          /* seqs listed */
    uint8_t *buf;       /* the seqs: the first zigzag-coded, then the steps up, as varints */
    size_t len, cap;
    uint32_t hash, size;
    char term[];
} Entry;

typedef struct {
    Entry **buckets;
    size_t width, count;
} Table;

typedef struct {
    char *p;
    size_t len, cap;
} Out;

/* `c` lower-cased when it is an ASCII capital. Arithmetic, not a branch: the loops over an event's JSON, a kilobyte
or more, then run many bytes a step. */
static inline char ascii_lower(char c) {
    unsigned char u = (unsigned char)c;
    return (char)(u + (((unsigned char)(u - 'A') < 26) << 5));
}

/* Whether `c`, lower-cased ASCII, is part of a token of unicode61's (letters and digits): the one rule the
tokens of ASCII text are split by, in the postings and the pairs alike. */
static inline int ascii_token_char(unsigned char c) {
    return ((unsigned char)(c - 'a') < 26) | ((unsigned char)(c - '0') < 10);
}

#define BLOCK 1048576 /* bytes of JSON lines a call of `block` returns at least, when there are more */

/* `*p` (of `*cap` items of `item` bytes) made to hold `n` items or more; -1 when out of memory. */
int room_for(void **p, size_t *cap, size_t n, size_t item);
int table_init(Table *t);
void table_free(Table *t);
/* The term's entry, added (with no seqs) when `add` and it is not there; NULL when absent or out of memory
(`*oom` set). */
Entry *table_get(Table *t, const char *term, uint32_t size, int add, int *oom);
/* `seq` listed under `e` unless it is its latest already; -1 when out of memory. */
int entry_list(Entry *e, int64_t seq);
/* The entries, sorted by term bytewise (SQLite's BINARY collation and DuckDB's order); NULL when out of memory. */
Entry **table_sorted(const Table *t);
/* The lines written as bytes, `o` freed; a MemoryError when writing them `failed`. */
PyObject *out_bytes(Out *o, int failed);
/* One JSON line {"term": prefix + term, "n": …, "seqs": […]}, as orjson writes it: with `count_only`, n is
`count` and no seqs. */
int out_line(Out *o, const char *prefix, const Entry *e, int count_only, int64_t count, Py_ssize_t *longest);

/* Sorted entries, written from `at` on. */
typedef struct {
    Entry **entries;
    size_t count, at;
} Run;

/* The next lines of `rows` and of `counted` (a count each, in Entry.last, and no seqs) merged in term order, a
term of both written as the row's, of terms before `upto` (all when NULL), until `o` holds BLOCK bytes; a row's
seqs are freed once written. -1 when out of memory. */
int out_merged(Out *o, Run *rows, Run *counted, const char *upto, size_t upto_size, Py_ssize_t *longest);

#endif
