/* The hash table of terms and the JSON lines of term_lists.h. */

#include "term_lists.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash_of(const char *p, uint32_t n) {
    uint32_t h = 2166136261u; /* FNV-1a: tokens are short */
    for (uint32_t i = 0; i < n; i++) {
        h ^= (uint8_t)p[i];
        h *= 16777619u;
    }
    return h;
}

static int grow(Table *t) {
    size_t width = t->width ? t->width * 2 : 65536;
    Entry **buckets = calloc(width, sizeof(Entry *));
    if (buckets == NULL) return -1;
    for (size_t i = 0; i < t->width; i++) {
        Entry *e = t->buckets[i];
        while (e != NULL) {
            Entry *next = e->next;
            e->next = buckets[e->hash & (width - 1)];
            buckets[e->hash & (width - 1)] = e;
            e = next;
        }
    }
    free(t->buckets);
    t->buckets = buckets;
    t->width = width;
    return 0;
}

int room_for(void **p, size_t *cap, size_t n, size_t item) {
    if (*cap >= n) return 0;
    size_t want = *cap ? *cap : 64;
    while (want < n) want *= 2;
    void *more = realloc(*p, want * item);
    if (more == NULL) return -1;
    *p = more;
    *cap = want;
    return 0;
}

int table_init(Table *t) {
    t->buckets = NULL;
    t->width = t->count = 0;
    return grow(t);
}

void table_free(Table *t) {
    for (size_t i = 0; i < t->width; i++) {
        Entry *e = t->buckets[i];
        while (e != NULL) {
            Entry *next = e->next;
            free(e->buf);
            free(e);
            e = next;
        }
    }
    free(t->buckets);
    t->buckets = NULL;
    t->width = t->count = 0;
}

Entry *table_get(Table *t, const char *term, uint32_t size, int add, int *oom) {
    uint32_t h = hash_of(term, size);
    Entry *e = t->buckets[h & (t->width - 1)];
    while (e != NULL && !(e->hash == h && e->size == size && memcmp(e->term, term, size) == 0)) e = e->next;
    if (e != NULL || !add) return e;
    if (t->count >= t->width && grow(t) < 0) goto oom;
    e = malloc(sizeof(Entry) + size);
    if (e == NULL) goto oom;
    memset(e, 0, sizeof(Entry));
    memcpy(e->term, term, size);
    e->hash = h;
    e->size = size;
    e->next = t->buckets[h & (t->width - 1)];
    t->buckets[h & (t->width - 1)] = e;
    t->count++;
    return e;
oom:
    *oom = 1;
    return NULL;
}

int entry_list(Entry *e, int64_t seq) {
    if (e->n > 0 && e->last == seq) return 0;
    uint64_t v = e->n == 0 ? ((uint64_t)seq << 1) ^ (uint64_t)(seq >> 63) : (uint64_t)(seq - e->last);
    if (e->cap - e->len < 10) {
        size_t cap = e->cap ? e->cap * 2 : 8;
        uint8_t *buf = realloc(e->buf, cap);
        if (buf == NULL) return -1;
        e->buf = buf;
        e->cap = cap;
    }
    while (v >= 0x80) {
        e->buf[e->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    e->buf[e->len++] = (uint8_t)v;
    e->last = seq;
    e->n++;
    return 0;
}

static int term_order(const Entry *e, const char *term, size_t size) {
    int c = memcmp(e->term, term, e->size < size ? e->size : size);
    return c != 0 ? c : (e->size > size) - (e->size < size);
}

static int by_term(const void *a, const void *b) {
    const Entry *y = *(Entry *const *)b;
    return term_order(*(Entry *const *)a, y->term, y->size);
}

Entry **table_sorted(const Table *t) {
    Entry **sorted = malloc(sizeof(Entry *) * (t->count ? t->count : 1));
    if (sorted == NULL) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < t->width; i++)
        for (Entry *e = t->buckets[i]; e != NULL; e = e->next) sorted[k++] = e;
    qsort(sorted, t->count, sizeof(Entry *), by_term);
    return sorted;
}

static int reserve(Out *o, size_t more) {
    if (o->cap - o->len >= more) return 0;
    size_t cap = o->cap ? o->cap : BLOCK;
    while (cap - o->len < more) cap *= 2;
    char *p = realloc(o->p, cap);
    if (p == NULL) return -1;
    o->p = p;
    o->cap = cap;
    return 0;
}

static void put(Out *o, const char *text, size_t n) {
    memcpy(o->p + o->len, text, n);
    o->len += n;
}

static void put_int(Out *o, int64_t value) {
    /* sprintf's %lld took half the time of writing the lines */
    char digits[24];
    size_t n = 0;
    uint64_t v = value < 0 ? -(uint64_t)value : (uint64_t)value;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (value < 0) o->p[o->len++] = '-';
    while (n) o->p[o->len++] = digits[--n];
}

/* A JSON string's text as orjson writes it (the field rows' values hold any character): a quote, a backslash
and the control characters escaped, the five with a short escape by it, the rest as they are. */
static void put_text(Out *o, const char *text, size_t n) {
    static const char hex[] = "0123456789abcdef";
    static const char short_escape[32] = {['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r'};
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '"' || ch == '\\') {
            o->p[o->len++] = '\\';
            o->p[o->len++] = (char)ch;
        } else if (ch < 0x20 && short_escape[ch]) {
            o->p[o->len++] = '\\';
            o->p[o->len++] = short_escape[ch];
        } else if (ch < 0x20) {
            put(o, "\\u00", 4);
            o->p[o->len++] = hex[ch >> 4];
            o->p[o->len++] = hex[ch & 15];
        } else {
            o->p[o->len++] = (char)ch;
        }
    }
}

PyObject *out_bytes(Out *o, int failed) {
    PyObject *bytes = failed ? PyErr_NoMemory() : PyBytes_FromStringAndSize(o->p ? o->p : "", (Py_ssize_t)o->len);
    free(o->p);
    o->p = NULL;
    o->len = o->cap = 0;
    return bytes;
}

int out_line(Out *o, const char *prefix, const Entry *e, int count_only, int64_t count, Py_ssize_t *longest) {
    size_t head = strlen(prefix);
    /* a term's byte takes at most 6 written, a seq at most 21 */
    if (reserve(o, 64 + (head + e->size) * 6 + (count_only ? 0 : (size_t)e->n * 21)) < 0) return -1;
    size_t start = o->len;
    put(o, "{\"term\":\"", 9);
    put_text(o, prefix, head);
    put_text(o, e->term, e->size);
    put(o, "\",\"n\":", 6);
    put_int(o, count_only ? count : e->n);
    put(o, ",\"seqs\":[", 9);
    int64_t seq = 0;
    size_t k = 0;
    for (int64_t i = 0; !count_only && i < e->n; i++) {
        uint64_t v = 0;
        int shift = 0;
        while (e->buf[k] & 0x80) {
            v |= (uint64_t)(e->buf[k++] & 0x7f) << shift;
            shift += 7;
        }
        v |= (uint64_t)e->buf[k++] << shift;
        seq = i == 0 ? (int64_t)(v >> 1) ^ -(int64_t)(v & 1) : seq + (int64_t)v;
        if (i) o->p[o->len++] = ',';
        put_int(o, seq);
    }
    put(o, "]}\n", 3);
    if ((Py_ssize_t)(o->len - start) > *longest) *longest = (Py_ssize_t)(o->len - start);
    return 0;
}

int out_merged(Out *o, Run *rows, Run *counted, const char *upto, size_t upto_size, Py_ssize_t *longest) {
    while (o->len < BLOCK) {
        Entry *row = rows->at < rows->count ? rows->entries[rows->at] : NULL;
        Entry *count = counted->at < counted->count ? counted->entries[counted->at] : NULL;
        int order = row != NULL && count != NULL ? term_order(row, count->term, count->size) : 0;
        if (row != NULL && count != NULL && order == 0) {
            counted->at++;
            continue;
        }
        Entry *next = count == NULL || (row != NULL && order < 0) ? row : count;
        if (next == NULL || (upto != NULL && term_order(next, upto, upto_size) >= 0)) break;
        if (out_line(o, "", next, next == count, next->last, longest) < 0) return -1;
        if (next == count) {
            counted->at++;
            continue;
        }
        free(row->buf); /* written: its seqs are not needed again */
        row->buf = NULL;
        row->n = 0;
        rows->at++;
    }
    return 0;
}
