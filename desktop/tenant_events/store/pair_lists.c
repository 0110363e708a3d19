/* The pairs of tokens that stand side by side in an event's ASCII text, for archive_pairs.PairRows: the words
it has seen (a word and the first seq from which its pairs are listed), each pair of two such words with the
events holding it, the events whose pairs cannot be listed (text past ASCII), and the events covered. Python
works out what is worked out once per value (a value's words, its mark), when it is first seen; each event's
values are looked up, and its tokens and pairs, a hundred or more, found here: in Python they cost a third of
the archive writer's CPU, and the values' loop alone as much as the pairs. */

#include "term_lists.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    Table words; /* a word -> the first seq its pairs are listed from (Entry.last) */
    Table pairs; /* "<a> <b>" -> the seqs of the events holding the pair */
    Entry unsure; /* the events whose pairs are not listed */
    int64_t events, latest;
    int has_latest, ready, busy;
    PyObject *seen;       /* a value -> its mark (quoted, apart) or None */
    PyObject *first_seen; /* first_seen(lists, seq, value): a value's words listed, and its mark */
    char *text, *key;
    size_t text_cap, key_cap, text_size;
    Entry **words_sorted, **pairs_sorted;
    size_t stage, at;
    Py_ssize_t longest;
} PairLists;

/* FTS5's tokens of ASCII text: runs of a-z and 0-9, lower-cased; \x01 kept: it keeps two tokens from being a
pair (archive_pairs._APART) */
static inline char token_byte(char c) {
    unsigned char u = (unsigned char)ascii_lower(c);
    int keep = ascii_token_char(u) | (u == 1);
    return keep ? (char)u : ' ';
}

static int PairLists_init(PairLists *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"first_seen", NULL};
    PyObject *first_seen;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:PairLists", kwlist, &first_seen)) return -1;
    if (self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "PairLists is made once");
        return -1;
    }
    if (!PyCallable_Check(first_seen)) {
        PyErr_SetString(PyExc_TypeError, "first_seen must be callable");
        return -1;
    }
    if ((self->seen = PyDict_New()) == NULL) return -1;
    self->first_seen = Py_NewRef(first_seen);
    if (table_init(&self->words) < 0 || table_init(&self->pairs) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    self->ready = 1;
    return 0;
}

static void PairLists_dealloc(PairLists *self) {
    Py_XDECREF(self->seen);
    Py_XDECREF(self->first_seen);
    table_free(&self->words);
    table_free(&self->pairs);
    free(self->unsure.buf);
    free(self->text);
    free(self->key);
    free(self->words_sorted);
    free(self->pairs_sorted);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int usable(PairLists *self) {
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "PairLists was not made");
        return 0;
    }
    if (self->busy || self->stage) {
        PyErr_SetString(PyExc_RuntimeError, "the pairs are being written: nothing more can be added");
        return 0;
    }
    return 1;
}

static int next_seq(PairLists *self, long long seq) {
    if (self->has_latest && seq <= self->latest) {
        PyErr_SetString(PyExc_ValueError, "each seq must be above every seq added before it");
        return -1;
    }
    self->latest = seq;
    self->has_latest = 1;
    self->events++;
    return 0;
}

/* word(word, seq): a word of a value first seen at `seq`; its pairs are listed from the first seq given. */
static PyObject *PairLists_word(PairLists *self, PyObject *args) {
    const char *word;
    Py_ssize_t size;
    long long seq;
    if (!usable(self) || !PyArg_ParseTuple(args, "y#L:word", &word, &size, &seq)) return NULL;
    int oom = 0;
    if (table_get(&self->words, word, (uint32_t)size, 0, &oom) != NULL) Py_RETURN_NONE;
    Entry *e = table_get(&self->words, word, (uint32_t)size, 1, &oom);
    if (e == NULL) return PyErr_NoMemory();
    e->last = seq;
    Py_RETURN_NONE;
}

/* The event's text as its tokens are read: the event id, the summary and the lower-cased JSON kept apart, each
\x01 of theirs a space (it keeps tokens apart only as a marker), then each mark's quoted value in the JSON
replaced by its tokens kept apart (its field rows confirm a phrase inside it), in the order given, as
bytes.replace would. */
static int compose(PairLists *self, const char *parts[3], const Py_ssize_t sizes[3], PyObject *marks) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(marks);
    size_t raw_size = (size_t)sizes[2];
    if (room_for((void **)&self->key, &self->key_cap, raw_size + 1, 1) < 0) return -1;
    char *restrict low = self->key; /* restrict: a local pointer the compiler need not reload */
    const char *restrict json = parts[2];
    for (size_t i = 0; i < raw_size; i++) {
        char c = ascii_lower(json[i]);
        low[i] = c == 1 ? ' ' : c;
    }
    for (Py_ssize_t m = 0; m < n; m++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(marks, m);
        char *find, *with;
        Py_ssize_t find_size, with_size;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            PyBytes_AsStringAndSize(PyTuple_GET_ITEM(pair, 0), &find, &find_size) < 0 ||
            PyBytes_AsStringAndSize(PyTuple_GET_ITEM(pair, 1), &with, &with_size) < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a mark is a pair of bytes");
            return -2;
        }
        if (find_size == 0) continue;
        const char *at = memmem(self->key, raw_size, find, (size_t)find_size);
        if (at == NULL) continue;
        size_t most = raw_size + (with_size > find_size ? (raw_size / (size_t)find_size + 1) * (size_t)(with_size - find_size) : 0);
        if (room_for((void **)&self->text, &self->text_cap, most + 1, 1) < 0) return -1;
        size_t from = 0, to = 0;
        while (at != NULL) {
            size_t k = (size_t)(at - self->key);
            memcpy(self->text + to, self->key + from, k - from);
            to += k - from;
            memcpy(self->text + to, with, (size_t)with_size);
            to += (size_t)with_size;
            from = k + (size_t)find_size;
            at = memmem(self->key + from, raw_size - from, find, (size_t)find_size);
        }
        memcpy(self->text + to, self->key + from, raw_size - from);
        to += raw_size - from;
        char *swap = self->key; /* the replaced text becomes the one the next mark reads */
        size_t swap_cap = self->key_cap;
        self->key = self->text, self->key_cap = self->text_cap;
        self->text = swap, self->text_cap = swap_cap;
        raw_size = to;
    }
    /* the whole: id, summary, then the JSON (in key) moved after them */
    size_t whole = (size_t)sizes[0] + 3 + (size_t)sizes[1] + 3 + raw_size;
    if (room_for((void **)&self->text, &self->text_cap, whole + 1, 1) < 0) return -1;
    memmove(self->text + whole - raw_size, self->key, raw_size);
    size_t to = 0;
    for (int p = 0; p < 2; p++) {
        for (Py_ssize_t i = 0; i < sizes[p]; i++) self->text[to++] = parts[p][i] == 1 ? ' ' : parts[p][i];
        memcpy(self->text + to, " \x01 ", 3);
        to += 3;
    }
    self->text_size = whole;
    return 0;
}

/* The marks of an event's values (a sequence per field, or None) in their order, each value's worked out by
first_seen when it is first seen; those of `spelled` (its JSON may spell them otherwise) and values with no
mark left out. A new list, or NULL. */
static PyObject *marks_of(PairLists *self, long long seq, PyObject *values, PyObject *spelled) {
    PyObject *fields = PySequence_Fast(values, "values must be a sequence");
    if (fields == NULL) return NULL;
    PyObject *marks = PyList_New(0);
    Py_ssize_t any_spelled = marks == NULL ? -1 : PySequence_Size(spelled);
    for (Py_ssize_t f = 0; any_spelled >= 0 && f < PySequence_Fast_GET_SIZE(fields); f++) {
        PyObject *held = PySequence_Fast_GET_ITEM(fields, f);
        if (held == Py_None) continue;
        PyObject *each = PySequence_Fast(held, "a field's values must be a sequence");
        if (each == NULL) goto failed;
        for (Py_ssize_t v = 0; v < PySequence_Fast_GET_SIZE(each); v++) {
            PyObject *value = PySequence_Fast_GET_ITEM(each, v);
            PyObject *mark = PyDict_GetItemWithError(self->seen, value); /* borrowed */
            if (mark == NULL) {
                if (PyErr_Occurred()) goto failed_each;
                mark = PyObject_CallFunction(self->first_seen, "OLO", (PyObject *)self, seq, value);
                if (mark == NULL || PyDict_SetItem(self->seen, value, mark) < 0) {
                    Py_XDECREF(mark);
                    goto failed_each;
                }
                Py_DECREF(mark); /* the dictionary holds it */
            }
            if (mark == Py_None) continue;
            int left_out = any_spelled > 0 ? PySequence_Contains(spelled, value) : 0;
            if (left_out < 0 || (!left_out && PyList_Append(marks, mark) < 0)) goto failed_each;
        }
        Py_DECREF(each);
        continue;
    failed_each:
        Py_DECREF(each);
        goto failed;
    }
    Py_DECREF(fields);
    if (any_spelled < 0) Py_CLEAR(marks);
    return marks;
failed:
    Py_DECREF(fields);
    Py_XDECREF(marks);
    return NULL;
}

/* add(seq, event_id, summary, text, values, spelled): one event; when its texts are all ASCII, each pair of seen
words side by side in them listed under its seq, else the event listed as one whose pairs are not. */
static PyObject *PairLists_add(PairLists *self, PyObject *args) {
    PyObject *texts[3], *values, *spelled;
    const char *parts[3];
    Py_ssize_t sizes[3];
    long long seq;
    if (!usable(self) || !PyArg_ParseTuple(args, "LUUUOO:add", &seq, &texts[0], &texts[1], &texts[2], &values,
                                           &spelled))
        return NULL;
    if (!(PyUnicode_IS_ASCII(texts[0]) && PyUnicode_IS_ASCII(texts[1]) && PyUnicode_IS_ASCII(texts[2]))) {
        if (next_seq(self, seq) < 0) return NULL;
        if (entry_list(&self->unsure, seq) < 0) return PyErr_NoMemory();
        Py_RETURN_NONE;
    }
    for (int p = 0; p < 3; p++)
        if ((parts[p] = PyUnicode_AsUTF8AndSize(texts[p], &sizes[p])) == NULL) return NULL;
    PyObject *marks = marks_of(self, seq, values, spelled);
    if (marks == NULL) return NULL;
    int made = compose(self, parts, sizes, marks);
    Py_DECREF(marks);
    if (made == -1) return PyErr_NoMemory();
    if (made < 0 || next_seq(self, seq) < 0) return NULL;
    char *text = self->text;
    size_t size = self->text_size;
    for (size_t i = 0; i < size; i++) text[i] = token_byte(text[i]);
    text[size] = ' ';
    int oom = 0, before = 0; /* before: the token before this one is a seen word */
    const char *prev = NULL;
    size_t prev_size = 0;
    for (size_t i = 0; i < size;) {
        if (text[i] == ' ') {
            i++;
            continue;
        }
        size_t start = i;
        while (text[i] != ' ') i++;
        const char *token = text + start;
        size_t n = i - start;
        int seen = table_get(&self->words, token, (uint32_t)n, 0, &oom) != NULL;
        if (seen && before) {
            if (room_for((void **)&self->key, &self->key_cap, prev_size + 1 + n, 1) < 0) return PyErr_NoMemory();
            memcpy(self->key, prev, prev_size);
            self->key[prev_size] = ' ';
            memcpy(self->key + prev_size + 1, token, n);
            Entry *e = table_get(&self->pairs, self->key, (uint32_t)(prev_size + 1 + n), 1, &oom);
            if (e == NULL || entry_list(e, seq) < 0) return PyErr_NoMemory();
        }
        before = seen;
        prev = token;
        prev_size = n;
    }
    Py_RETURN_NONE;
}

/* block(): the next JSON lines of the rows, in term order (archive_pairs: UNSURE, COVER, the words, the pairs); b""
once all are given. */
static PyObject *PairLists_block(PairLists *self, PyObject *Py_UNUSED(ignored)) {
    if (!self->ready || self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the pairs are being added");
        return NULL;
    }
    if (self->stage == 0) {
        self->words_sorted = table_sorted(&self->words);
        self->pairs_sorted = table_sorted(&self->pairs);
        if (self->words_sorted == NULL || self->pairs_sorted == NULL) return PyErr_NoMemory();
        self->stage = 1;
    }
    Out out = {NULL, 0, 0};
    int failed = 0;
    Entry none = {0};
    if (self->stage == 1) {
        failed = out_line(&out, "#|!", &self->unsure, 0, 0, &self->longest) < 0 ||
                 out_line(&out, "#|#", &none, 1, self->events, &self->longest) < 0;
        self->stage = 2;
    }
    while (!failed && self->stage == 2 && out.len < BLOCK) {
        if (self->at == self->words.count) {
            self->stage = 3;
            self->at = 0;
            break;
        }
        Entry *e = self->words_sorted[self->at++];
        failed = out_line(&out, "#|=", e, 1, e->last, &self->longest) < 0;
    }
    while (!failed && self->stage == 3 && out.len < BLOCK && self->at < self->pairs.count) {
        Entry *e = self->pairs_sorted[self->at++];
        failed = out_line(&out, "#|", e, 0, 0, &self->longest) < 0;
    }
    return out_bytes(&out, failed);
}

static PyObject *PairLists_longest(PairLists *self, void *Py_UNUSED(closure)) {
    return PyLong_FromSsize_t(self->longest);
}

static PyMethodDef PairLists_methods[] = {
    {"word", (PyCFunction)PairLists_word, METH_VARARGS, "word(word, seq): a word first seen at seq"},
    {"add", (PyCFunction)PairLists_add, METH_VARARGS,
     "add(seq, event_id, summary, text, values, spelled): an event, its pairs listed when its texts are ASCII"},
    {"block", (PyCFunction)PairLists_block, METH_NOARGS, "The next JSON lines of the rows; b'' when all are given"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef PairLists_getset[] = {
    {"longest", (getter)PairLists_longest, NULL, "the longest line written so far, in bytes", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PairListsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tenant_events.store._postings.PairLists",
    .tp_basicsize = sizeof(PairLists),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The pairs of seen words side by side in an archive file's events (archive_pairs.PairRows).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)PairLists_init,
    .tp_dealloc = (destructor)PairLists_dealloc,
    .tp_methods = PairLists_methods,
    .tp_getset = PairLists_getset,
};
