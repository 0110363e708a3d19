/* An archive file's full-text postings: every token of its events, with the seqs of the events holding it.

The tokens are SQLite FTS5's own: each text goes through FTS5's unicode61 tokenizer (remove_diacritics 2, as the
live index, schema.py), asked for through the fts5_api of a private in-memory database, so the archive splits
text exactly where the live tier does. What FTS5's index added to that (its segments, then a vocabulary table
read back row by row) cost more than the tokens themselves; here each token's seqs go straight into a list of
its own, as variable-length deltas, and come out sorted by token (bytewise, as SQLite's BINARY collation), one
JSON line (term, n, seqs) a token, as archive_build.tokens_select reads them.

The texts of a call are tokenized with Python's lock released: a month's build runs beside the window. */

#include "term_lists.h"

#include <sqlite3.h>
#include <string.h>

#define MAX_TOKEN 32768 /* FTS5 cuts a longer token there (FTS5_MAX_TOKEN_SIZE) */

extern PyTypeObject PairListsType, FieldListsType, FieldScanType;

typedef struct {
    PyObject_HEAD
    sqlite3 *db;
    fts5_tokenizer api;
    Fts5Tokenizer *tok;
    Table terms;
    int64_t seq;    /* the seq being tokenized */
    int64_t latest; /* the last seq added */
    int has_latest;
    int failed;     /* out of memory in a callback */
    int busy;       /* a call is running with the lock released */
    char *low;      /* an ASCII text lower-cased (ascii_tokens) */
    size_t low_cap;
    Entry **sorted; /* made by the first `block`; the entries are written from `at` on */
    size_t at;
    Py_ssize_t longest;
} Postings;

static int on_token(void *ctx, int flags, const char *token, int size, int start, int end) {
    (void)flags, (void)start, (void)end;
    Postings *self = ctx;
    if (size > MAX_TOKEN) size = MAX_TOKEN;
    if (size <= 0) return SQLITE_OK;
    Entry *e = table_get(&self->terms, token, (uint32_t)size, 1, &self->failed);
    if (e == NULL || entry_list(e, self->seq) < 0) {
        self->failed = 1;
        return SQLITE_NOMEM;
    }
    return SQLITE_OK;
}

static void Postings_dealloc(Postings *self) {
    if (self->tok != NULL) self->api.xDelete(self->tok);
    if (self->db != NULL) sqlite3_close(self->db);
    table_free(&self->terms);
    free(self->sorted);
    free(self->low);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static fts5_api *fts5_of(sqlite3 *db) {
    fts5_api *api = NULL;
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, NULL) != SQLITE_OK) return NULL;
    sqlite3_bind_pointer(stmt, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    return api;
}

static int Postings_init(Postings *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, ":Postings", kwlist)) return -1;
    if (self->db != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Postings is made once");
        return -1;
    }
    if (sqlite3_open(":memory:", &self->db) != SQLITE_OK) {
        PyErr_SetString(PyExc_MemoryError, "SQLite could not open an in-memory database");
        return -1;
    }
    fts5_api *fts5 = fts5_of(self->db);
    void *user = NULL;
    const char *argv[] = {"remove_diacritics", "2"}; /* as the live index (schema.py) */
    if (fts5 == NULL || fts5->xFindTokenizer(fts5, "unicode61", &user, &self->api) != SQLITE_OK ||
        self->api.xCreate(user, argv, 2, &self->tok) != SQLITE_OK) {
        self->tok = NULL;
        PyErr_SetString(PyExc_RuntimeError, "this SQLite has no FTS5 unicode61 tokenizer");
        return -1;
    }
    if (table_init(&self->terms) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

typedef struct {
    const char *p;
    Py_ssize_t n;
    int ascii;
} Text;

/* unicode61's tokens of ASCII text, as its tokenizer gives them: runs of letters and digits, lower-cased.
Splitting here a kilobyte of lower-cased text costs a fifth of what the tokenizer's calls do per byte. */
static int ascii_tokens(Postings *self, const char *text, Py_ssize_t n) {
    if (room_for((void **)&self->low, &self->low_cap, (size_t)n + 1, 1) < 0) return SQLITE_NOMEM;
    char *restrict low = self->low; /* locals the compiler need not reload: the loop runs many bytes a step */
    const char *restrict in = text;
    size_t size = (size_t)n;
    for (size_t i = 0; i < size; i++) low[i] = ascii_lower(in[i]);
    low[size] = ' ';
    for (size_t i = 0; i < size;) {
        unsigned char c = (unsigned char)low[i];
        if (!ascii_token_char(c)) {
            i++;
            continue;
        }
        size_t start = i;
        do c = (unsigned char)low[++i];
        while (ascii_token_char(c));
        int rc = on_token(self, 0, low + start, (int)(i - start), 0, 0);
        if (rc != SQLITE_OK) return rc;
    }
    return SQLITE_OK;
}

static int gather(PyObject *args, Py_ssize_t columns, Py_ssize_t events, PyObject *cols, Text *texts) {
    for (Py_ssize_t c = 0; c < columns; c++) {
        /* a tuple of the texts: it holds them while the lock is let go, whatever another thread does to the
           caller's list meanwhile */
        PyObject *col = PySequence_Tuple(PyTuple_GET_ITEM(args, c + 1));
        if (col == NULL) return -1;
        PyTuple_SET_ITEM(cols, c, col);
        if (PyTuple_GET_SIZE(col) != events) {
            PyErr_SetString(PyExc_ValueError, "each column must hold a text for every seq");
            return -1;
        }
        for (Py_ssize_t i = 0; i < events; i++) {
            Text *t = &texts[i * columns + c];
            t->p = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(col, i), &t->n);
            if (t->p == NULL) return -1;
            t->ascii = PyUnicode_IS_ASCII(PyTuple_GET_ITEM(col, i));
            if (t->n > INT_MAX) {
                PyErr_SetString(PyExc_ValueError, "a text is too long to index");
                return -1;
            }
        }
    }
    return 0;
}

/* add(seqs, *columns): each event's texts (one of each column, at its index) tokenized under its seq. */
static PyObject *Postings_add(Postings *self, PyObject *args) {
    Py_ssize_t columns = PyTuple_GET_SIZE(args) - 1;
    if (self->tok == NULL || columns < 0) {
        PyErr_SetString(PyExc_TypeError, "add() takes the seqs, then the texts of each column");
        return NULL;
    }
    if (self->busy || self->sorted != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "postings are being written: nothing more can be added");
        return NULL;
    }
    PyObject *seqs = PySequence_Fast(PyTuple_GET_ITEM(args, 0), "seqs must be a sequence");
    if (seqs == NULL) return NULL;
    Py_ssize_t events = PySequence_Fast_GET_SIZE(seqs);
    PyObject *cols = PyTuple_New(columns);
    int64_t *at = PyMem_Malloc(sizeof(int64_t) * (events ? events : 1));
    Text *texts = PyMem_Malloc(sizeof(Text) * (events * columns > 0 ? events * columns : 1));
    PyObject *result = NULL;
    if (cols == NULL || at == NULL || texts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t before = self->latest;
    int has = self->has_latest;
    for (Py_ssize_t i = 0; i < events; i++) {
        long long seq = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seqs, i));
        if (seq == -1 && PyErr_Occurred()) goto done;
        if (has && seq <= before) {
            PyErr_SetString(PyExc_ValueError, "each seq must be above every seq added before it");
            goto done;
        }
        at[i] = before = seq;
        has = 1;
    }
    if (gather(args, columns, events, cols, texts) < 0) goto done;
    int rc = SQLITE_OK;
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < events && rc == SQLITE_OK; i++) {
        self->seq = at[i];
        for (Py_ssize_t c = 0; c < columns && rc == SQLITE_OK; c++) {
            Text *t = &texts[i * columns + c];
            rc = t->ascii ? ascii_tokens(self, t->p, t->n)
                          : self->api.xTokenize(self->tok, self, FTS5_TOKENIZE_DOCUMENT, t->p, (int)t->n, on_token);
        }
    }
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (events) {
        self->latest = at[events - 1];
        self->has_latest = 1;
    }
    if (self->failed || rc == SQLITE_NOMEM) {
        PyErr_NoMemory();
        goto done;
    }
    if (rc != SQLITE_OK) {
        PyErr_Format(PyExc_RuntimeError, "the FTS5 tokenizer failed (SQLite error %d)", rc);
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    Py_DECREF(seqs);
    Py_XDECREF(cols);
    PyMem_Free(at);
    PyMem_Free(texts);
    return result;
}

/* block(): the next JSON lines, in term order, of a megabyte or more; b"" once all are given. */
static PyObject *Postings_block(Postings *self, PyObject *Py_UNUSED(ignored)) {
    if (self->busy || self->tok == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "postings are being added");
        return NULL;
    }
    int failed = 0;
    self->busy = 1;
    Out out = {NULL, 0, 0};
    Py_BEGIN_ALLOW_THREADS
    if (self->sorted == NULL) failed = (self->sorted = table_sorted(&self->terms)) == NULL;
    while (!failed && self->at < self->terms.count && out.len < BLOCK) {
        Entry *e = self->sorted[self->at];
        failed = out_line(&out, "", e, 0, 0, &self->longest) < 0;
        if (failed) break;
        free(e->buf); /* written: its seqs are not needed again */
        e->buf = NULL;
        e->n = 0;
        self->at++;
    }
    Py_END_ALLOW_THREADS
    self->busy = 0;
    return out_bytes(&out, failed);
}

static PyObject *Postings_longest(Postings *self, void *Py_UNUSED(closure)) {
    return PyLong_FromSsize_t(self->longest);
}

static PyObject *Postings_terms(Postings *self, void *Py_UNUSED(closure)) {
    return PyLong_FromSize_t(self->terms.count);
}

static PyMethodDef Postings_methods[] = {
    {"add", (PyCFunction)Postings_add, METH_VARARGS,
     "add(seqs, *columns): the events' texts (a sequence per column, a text per seq) tokenized under their seqs"},
    {"block", (PyCFunction)Postings_block, METH_NOARGS,
     "The next JSON lines (term, n, seqs) in term order; b'' when all are written"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Postings_getset[] = {
    {"longest", (getter)Postings_longest, NULL, "the longest line written so far, in bytes", NULL},
    {"terms", (getter)Postings_terms, NULL, "the tokens listed", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PostingsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tenant_events.store._postings.Postings",
    .tp_basicsize = sizeof(Postings),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An archive file's FTS5 tokens, each with the seqs of the events that hold it.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Postings_init,
    .tp_dealloc = (destructor)Postings_dealloc,
    .tp_methods = Postings_methods,
    .tp_getset = Postings_getset,
};

/* json_lines(array): the bytes orjson wrote of a list whose every record is followed by a line break (an
orjson.Fragment of b"\n": no JSON text orjson writes holds a line break of its own), as JSON lines: each "\n,"
and the comma before it one line break, the brackets gone. DuckDB reads lines for less than half the work of
finding each record in one array; in Python, the replacing cost more than that. */
static PyObject *json_lines(PyObject *Py_UNUSED(module), PyObject *array) {
    char *p;
    Py_ssize_t n;
    if (PyBytes_AsStringAndSize(array, &p, &n) < 0) return NULL;
    if (n < 2 || p[0] != '[' || p[n - 1] != ']') goto shape;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL) return NULL;
    char *o = PyBytes_AS_STRING(out);
    Py_ssize_t k = 0;
    const char *at = p + 1, *end = p + n - 1;
    while (at < end) {
        const char *nl = memchr(at, '\n', (size_t)(end - at));
        if (nl == NULL || nl - at < 2 || nl[-1] != ',' || (nl + 1 < end && (nl[1] != ',' || nl + 2 == end))) {
            Py_DECREF(out);
            goto shape;
        }
        memcpy(o + k, at, (size_t)(nl - 1 - at));
        k += nl - 1 - at;
        o[k++] = '\n';
        at = nl + 1 < end ? nl + 2 : nl + 1;
    }
    if (_PyBytes_Resize(&out, k) < 0) return NULL;
    return out;
shape:
    PyErr_SetString(PyExc_ValueError, "not a JSON array of records each followed by a line break");
    return NULL;
}

static PyMethodDef module_methods[] = {
    {"json_lines", json_lines, METH_O, "A JSON array of records each followed by a line break, as JSON lines."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_methods = module_methods,
    .m_name = "_postings",
    .m_doc = "An archive file's full-text postings, pairs of words and field rows, made in one pass over its events, and its events' field values read from their JSON.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__postings(void) {
    if (PyType_Ready(&PostingsType) < 0 || PyType_Ready(&PairListsType) < 0 || PyType_Ready(&FieldListsType) < 0 ||
        PyType_Ready(&FieldScanType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Postings", (PyObject *)&PostingsType) < 0 ||
        PyModule_AddObjectRef(m, "PairLists", (PyObject *)&PairListsType) < 0 ||
        PyModule_AddObjectRef(m, "FieldLists", (PyObject *)&FieldListsType) < 0 ||
        PyModule_AddObjectRef(m, "FieldScan", (PyObject *)&FieldScanType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
