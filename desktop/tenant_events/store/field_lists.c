/* The field rows of an archive file (archive_fields.FieldRows): for each value an event holds in a field, the
rows `<head><rest>` of every place a word starts in it that is filed, under the field's spelled head when the
event's JSON may spell the value otherwise, and the row of every event covered. Each event's values are checked
and filed in one call: in Python the check and the filing took three times the CPU (docs/archive.md "Field
words").

Python says what the rows are called (the heads, the cover's term, the fields filed at every word): this file
knows only how values are checked and cut. */

#include "event_values.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    Table rows;         /* term -> the seqs of the events holding it */
    Table known;        /* a value's rows, worked out once (file_value) */
    Table counted;      /* rows made elsewhere: a count each (Entry.last), no seqs */
    Entry *cover;       /* the row of every event added, one of `rows` */
    char **heads;       /* per field, then the joint name: the head of a row, then of a spelled one */
    char *every;        /* per field, then the joint name: filed from every word, not only where no piece is */
    int columns, user, email, piece, busy;
    int64_t latest;
    int has_latest;
    Values values;      /* the event being added */
    char *key;          /* a term being made */
    size_t key_cap;
    Run sorted, counted_sorted; /* made by the first `block` */
    Py_ssize_t longest;
} FieldLists;

/* FieldLists(heads, every, piece, user, email, cover): `heads` a pair (a row's head, a spelled row's) per field,
then the joint name's; `every` whether each is filed from every word; a word whose first `piece` characters hold
a digit is a piece of an identifier; `user` and `email` the fields whose shared values go under the joint name. */
static int FieldLists_init(FieldLists *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"heads", "every", "piece", "user", "email", "cover", NULL};
    PyObject *heads, *every, *cover;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!iiiU:FieldLists", kwlist, &PyTuple_Type, &heads,
                                     &PyTuple_Type, &every, &self->piece, &self->user, &self->email, &cover))
        return -1;
    if (self->heads != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "FieldLists is made once");
        return -1;
    }
    Py_ssize_t names = PyTuple_GET_SIZE(heads);
    if (names < 3 || names > 256 || PyTuple_GET_SIZE(every) != names || self->user < 0 || self->email < 0 ||
        self->user >= names - 1 || self->email >= names - 1 || self->user == self->email) {
        PyErr_SetString(PyExc_ValueError, "each field and the joint name need heads and a flag; user and email two");
        return -1;
    }
    self->columns = (int)names - 1;
    if ((self->heads = calloc((size_t)names * 2, sizeof(char *))) == NULL ||
        (self->every = calloc((size_t)names, 1)) == NULL || table_init(&self->rows) < 0 ||
        table_init(&self->known) < 0 || table_init(&self->counted) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < names; i++) {
        PyObject *pair = PyTuple_GET_ITEM(heads, i);
        const char *head[2];
        int flag = PyObject_IsTrue(PyTuple_GET_ITEM(every, i));
        if (flag < 0) return -1;
        self->every[i] = (char)flag;
        if (!PyTuple_Check(pair) || !PyArg_ParseTuple(pair, "ss:FieldLists", &head[0], &head[1])) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a field's heads are a pair of str");
            return -1;
        }
        for (int k = 0; k < 2; k++)
            if ((self->heads[i * 2 + k] = strdup(head[k])) == NULL) {
                PyErr_NoMemory();
                return -1;
            }
    }
    Py_ssize_t size;
    const char *term = PyUnicode_AsUTF8AndSize(cover, &size);
    int oom = 0;
    if (term == NULL) return -1;
    if ((self->cover = table_get(&self->rows, term, (uint32_t)size, 1, &oom)) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void FieldLists_dealloc(FieldLists *self) {
    if (self->heads != NULL)
        for (int i = 0; i < (self->columns + 1) * 2; i++) free(self->heads[i]);
    free(self->heads);
    free(self->every);
    table_free(&self->rows);
    table_free(&self->known);
    table_free(&self->counted);
    values_free(&self->values);
    free(self->key);
    free(self->sorted.entries);
    free(self->counted_sorted.entries);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int usable(FieldLists *self) {
    if (self->cover == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "FieldLists was not made");
        return 0;
    }
    if (self->busy || self->sorted.entries != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "the field rows are being written: nothing more can be added");
        return 0;
    }
    return 1;
}

static inline int word_byte(unsigned char c) {
    /* a-z, 0-9 and every character past ASCII (the values are lower-cased): each byte of one is past 0x7f */
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80;
}

/* Whether the run of word bytes from `p` holds a digit in its first `piece` characters. */
static int piece_at(const char *p, const char *end, int piece) {
    for (int chars = 0; p < end && word_byte((unsigned char)*p); p++) {
        unsigned char c = (unsigned char)*p;
        if ((c & 0xc0) == 0x80) continue; /* a character's later byte */
        if (++chars > piece) return 0;
        if (c >= '0' && c <= '9') return 1;
    }
    return 0;
}

/* `seq` listed under each row of `v`: `head` then the value from each place a word starts that is filed. Values
repeat (users, organizations): a value's rows are worked out once, kept (their entries in its Entry.buf), and an
event's value costs a lookup and its seqs listed. */
static int file_value(FieldLists *self, const Value *v, int name, int64_t seq) {
    size_t size = (size_t)v->cut, head_size = strlen(self->heads[name * 2 + v->odd]);
    if (room_for((void **)&self->key, &self->key_cap, head_size + size + 2, 1) < 0) return -1;
    self->key[0] = (char)name, self->key[1] = (char)v->odd;
    memcpy(self->key + 2, v->p, size);
    int oom = 0;
    Entry *known = table_get(&self->known, self->key, (uint32_t)(size + 2), 1, &oom);
    if (known == NULL) return -1;
    if (!known->last) { /* first seen */
        memcpy(self->key, self->heads[name * 2 + v->odd], head_size);
        const char *p = v->p, *end = v->p + size;
        int runs = 0;
        for (size_t i = 0; i < size; i++) {
            if (!word_byte((unsigned char)p[i]) || (i > 0 && word_byte((unsigned char)p[i - 1]))) continue;
            if (runs++ > 0 && !self->every[name] && piece_at(p + i, end, self->piece)) continue;
            memcpy(self->key + head_size, p + i, size - i);
            Entry *e = table_get(&self->rows, self->key, (uint32_t)(head_size + size - i), 1, &oom);
            if (e == NULL || room_for((void **)&known->buf, &known->cap, (known->len + 1) * sizeof e, 1) < 0) return -1;
            memcpy(known->buf + known->len, &e, sizeof e);
            known->len += sizeof e;
        }
        known->last = 1;
    }
    for (size_t k = 0; k < known->len; k += sizeof(Entry *)) {
        Entry *e;
        memcpy(&e, known->buf + k, sizeof e);
        if (entry_list(e, seq) < 0) return -1;
    }
    return 0;
}

static int held_in(const Values *vs, const Value *v, int column) {
    for (size_t k = 0; k < vs->count; k++) {
        const Value *w = &vs->at[k];
        if (w->column == column && w->size == v->size && memcmp(w->p, v->p, (size_t)v->size) == 0) return 1;
    }
    return 0;
}

/* add(seq, raw, fields): one event's rows, `raw` its JSON and `fields` its values (archive_layout.field_values);
returns those of its values, each up to a NUL, the JSON may spell otherwise (filed under the spelled head). */
static PyObject *FieldLists_add(FieldLists *self, PyObject *args) {
    long long seq;
    PyObject *raw, *fields;
    if (!usable(self) || !PyArg_ParseTuple(args, "LUO:add", &seq, &raw, &fields)) return NULL;
    if (self->has_latest && seq <= self->latest) {
        PyErr_SetString(PyExc_ValueError, "each seq must be above every seq added before it");
        return NULL;
    }
    PyObject *spelled = PyList_New(0);
    if (spelled == NULL) return NULL;
    self->busy = 1; /* Python may run in values_check: nothing else is added meanwhile */
    Values *vs = &self->values;
    int failed = values_gather(vs, fields, self->columns) < 0 || values_check(vs, raw) < 0;
    for (size_t k = 0; k < vs->count && !failed; k++) {
        Value *v = &vs->at[k];
        if (!v->odd) continue;
        PyObject *cut = v->cut == v->size ? Py_NewRef(v->text) : PyUnicode_FromStringAndSize(v->p, v->cut);
        failed = cut == NULL || PyList_Append(spelled, cut) < 0;
        Py_XDECREF(cut);
    }
    if (!failed) {
        self->latest = seq;
        self->has_latest = 1;
        failed = entry_list(self->cover, seq) < 0;
        int joint = self->columns; /* the joint name's heads follow the fields' */
        for (size_t k = 0; k < vs->count && !failed; k++) {
            const Value *v = &vs->at[k];
            int name = v->column;
            if (name == self->user && held_in(vs, v, self->email))
                name = joint; /* filed once under the joint name */
            else if (name == self->email && held_in(vs, v, self->user))
                continue; /* filed under the joint name with the user's */
            failed = file_value(self, v, name, seq) < 0;
        }
        if (failed) PyErr_NoMemory();
    }
    values_drop(vs);
    self->busy = 0;
    if (failed) Py_CLEAR(spelled);
    return spelled;
}

/* count(counted): rows made elsewhere ({term: n}), written in their place with their count and no seqs; a term
this file's rows hold is written as theirs. */
static PyObject *FieldLists_count(FieldLists *self, PyObject *counted) {
    PyObject *items = usable(self) ? PyMapping_Items(counted) : NULL;
    int failed = items == NULL;
    for (Py_ssize_t i = 0; !failed && i < PyList_GET_SIZE(items); i++) {
        const char *term;
        Py_ssize_t size;
        long long n;
        int oom = 0;
        Entry *e = NULL;
        if (PyArg_ParseTuple(PyList_GET_ITEM(items, i), "s#L:count", &term, &size, &n) &&
            (e = table_get(&self->counted, term, (uint32_t)size, 1, &oom)) == NULL)
            PyErr_NoMemory();
        failed = e == NULL;
        if (e != NULL) e->last = n;
    }
    Py_XDECREF(items);
    return failed ? NULL : Py_NewRef(Py_None);
}

/* block(upto=None): the next JSON lines (term, n, seqs) of the rows and the counted ones, in term order (bytewise:
Python's order of str), of terms before `upto`; b"" when the next is not. */
static PyObject *FieldLists_block(FieldLists *self, PyObject *args) {
    const char *upto = NULL;
    Py_ssize_t upto_size = 0;
    if (!PyArg_ParseTuple(args, "|z#:block", &upto, &upto_size)) return NULL;
    if (self->cover == NULL || self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "the field rows are being added");
        return NULL;
    }
    int failed = 0;
    Out out = {NULL, 0, 0};
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    if (self->sorted.entries == NULL) {
        self->sorted = (Run){table_sorted(&self->rows), self->rows.count, 0};
        self->counted_sorted = (Run){table_sorted(&self->counted), self->counted.count, 0};
        if ((failed = self->sorted.entries == NULL || self->counted_sorted.entries == NULL)) {
            free(self->sorted.entries); /* none made: the next call sorts again */
            free(self->counted_sorted.entries);
            self->sorted.entries = self->counted_sorted.entries = NULL;
        }
    }
    if (!failed)
        failed = out_merged(&out, &self->sorted, &self->counted_sorted, upto, (size_t)upto_size, &self->longest) < 0;
    Py_END_ALLOW_THREADS
    self->busy = 0;
    return out_bytes(&out, failed);
}

static PyObject *FieldLists_longest(FieldLists *self, void *Py_UNUSED(closure)) {
    return PyLong_FromSsize_t(self->longest);
}

static PyMethodDef FieldLists_methods[] = {
    {"add", (PyCFunction)FieldLists_add, METH_VARARGS,
     "add(seq, raw, fields): one event's rows; returns its values the JSON may spell otherwise"},
    {"count", (PyCFunction)FieldLists_count, METH_O, "count(counted): rows of a count each ({term: n}) written too"},
    {"block", (PyCFunction)FieldLists_block, METH_VARARGS,
     "block(upto=None): the next JSON lines of the rows before upto; b'' when there are none"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef FieldLists_getset[] = {
    {"longest", (getter)FieldLists_longest, NULL, "the longest line written so far, in bytes", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject FieldListsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tenant_events.store._postings.FieldLists",
    .tp_basicsize = sizeof(FieldLists),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The field rows of an archive file's events (archive_fields.FieldRows).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)FieldLists_init,
    .tp_dealloc = (destructor)FieldLists_dealloc,
    .tp_methods = FieldLists_methods,
    .tp_getset = FieldLists_getset,
};
