/* An event type's field values read straight from its JSON text, for the archive writer (archive_layout.
field_values_of). Parsing the whole JSON into Python objects and reading a few of them back cost a quarter of the
writer's CPU; this walks the text once, makes only the values it reads, and skips the rest.

It answers only for JSON it is sure of: strict JSON (RFC 8259) without \u escapes, numbers of up to 18 digits and
small exponents, no key the fields read given twice in one object, no escaped key where a field reads, and no
object or array where a value is read. For any other text it returns None and the caller parses the JSON as before
(orjson), so what the archive files is the same either way. */

#include "term_lists.h"

#include <string.h>

#define MAX_NODES 64
#define NUMBER 23   /* the longest number read: longer ones are left to the caller */
#define MAX_DEPTH 256 /* deeper JSON is left to the caller (orjson refuses past 1,024) */

typedef struct {
    const char *key;
    Py_ssize_t size;
    int leaf;         /* its place among the values read, or -1 */
    int first, next;  /* its first child and its next sibling, or -1 */
    int order;        /* its place among its siblings (the bit that says it was seen) */
} Node;

typedef struct {
    PyObject_HEAD
    PyObject *keys; /* holds the nodes' key text */
    PyObject *places;
    PyObject *sql_text;
    Node nodes[MAX_NODES];
    int count, leaves, ready;
} FieldScan;

static int child_of(FieldScan *self, int parent, const char *key, Py_ssize_t size, int add) {
    int last = -1, order = 0;
    for (int c = self->nodes[parent].first; c >= 0; last = c, c = self->nodes[c].next, order++)
        if (self->nodes[c].size == size && memcmp(self->nodes[c].key, key, (size_t)size) == 0) return c;
    if (!add) return -1;
    if (self->count >= MAX_NODES || order >= 64) {
        PyErr_SetString(PyExc_ValueError, "too many keys for FieldScan");
        return -2;
    }
    int n = self->count++;
    self->nodes[n] = (Node){key, size, -1, -1, -1, order};
    if (last < 0)
        self->nodes[parent].first = n;
    else
        self->nodes[last].next = n;
    return n;
}

static const char *text_of(FieldScan *self, PyObject *key, Py_ssize_t *size) {
    if (!PyUnicode_Check(key) || PyList_Append(self->keys, key) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a key must be a str");
        return NULL;
    }
    return PyUnicode_AsUTF8AndSize(key, size);
}

/* FieldScan(holders, places, sql_text): holders as archive_layout's plans give them ((keys to an object, keys
read in it), …), the values read numbered in that order; places: for each field, the numbers of its values;
sql_text: the text of a value that is not a JSON string (as archive_layout._sql_text). */
static int FieldScan_init(FieldScan *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"holders", "places", "sql_text", NULL};
    PyObject *holders, *places, *sql_text;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O:FieldScan", kwlist, &PyTuple_Type, &holders, &PyTuple_Type,
                                     &places, &sql_text))
        return -1;
    if (self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "FieldScan is made once");
        return -1;
    }
    if ((self->keys = PyList_New(0)) == NULL) return -1;
    self->nodes[0] = (Node){"", 0, -1, -1, -1, 0};
    self->count = 1;
    for (Py_ssize_t h = 0; h < PyTuple_GET_SIZE(holders); h++) {
        PyObject *holder = PyTuple_GET_ITEM(holders, h);
        if (!PyTuple_Check(holder) || PyTuple_GET_SIZE(holder) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(holder, 0)) ||
            !PyTuple_Check(PyTuple_GET_ITEM(holder, 1))) {
            PyErr_SetString(PyExc_TypeError, "a holder is (keys, keys read)");
            return -1;
        }
        int node = 0;
        PyObject *path = PyTuple_GET_ITEM(holder, 0), *read = PyTuple_GET_ITEM(holder, 1);
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(path) + PyTuple_GET_SIZE(read); k++) {
            int is_leaf = k >= PyTuple_GET_SIZE(path);
            PyObject *key = is_leaf ? PyTuple_GET_ITEM(read, k - PyTuple_GET_SIZE(path)) : PyTuple_GET_ITEM(path, k);
            Py_ssize_t size;
            const char *text = text_of(self, key, &size);
            int c = text == NULL ? -2 : child_of(self, node, text, size, 1);
            if (c < 0) return -1;
            if (is_leaf) {
                if (self->nodes[c].leaf < 0) self->nodes[c].leaf = self->leaves++;
            } else {
                node = c;
            }
        }
    }
    for (Py_ssize_t f = 0; f < PyTuple_GET_SIZE(places); f++) {
        PyObject *field = PyTuple_GET_ITEM(places, f);
        for (Py_ssize_t i = 0; PyTuple_Check(field) && i < PyTuple_GET_SIZE(field); i++) {
            long at = PyLong_AsLong(PyTuple_GET_ITEM(field, i));
            if (at < 0 || at >= self->leaves) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a place names no value read");
                return -1;
            }
        }
        if (!PyTuple_Check(field)) {
            PyErr_SetString(PyExc_TypeError, "a field's places are a tuple");
            return -1;
        }
    }
    self->places = Py_NewRef(places);
    self->sql_text = Py_NewRef(sql_text);
    self->ready = 1;
    return 0;
}

static void FieldScan_dealloc(FieldScan *self) {
    Py_XDECREF(self->keys);
    Py_XDECREF(self->places);
    Py_XDECREF(self->sql_text);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

typedef struct {
    FieldScan *self;
    const char *end;
    PyObject **values;
    int python_failed; /* an error is set: not a mere "not sure" */
} Scan;

static inline const char *space(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

/* After the string at `p` (its opening quote); NULL when it is not one this scan is sure of. `escaped`: it holds
an escape. */
static const char *string_end(const char *p, const char *e, int *escaped) {
    *escaped = 0;
    for (p++; p < e; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c < 0x20) return NULL;
        if (c == '\\') {
            if (++p >= e || strchr("\"\\/bfnrt", *p) == NULL || *p == '\0') return NULL; /* \u: not sure */
            *escaped = 1;
        }
    }
    return NULL;
}

static const char *number_end(const char *p, const char *e, int *real) {
    const char *start = p;
    *real = 0;
    if (p < e && *p == '-') p++;
    if (p >= e || *p < '0' || *p > '9') return NULL;
    const char *digits = p;
    if (*p == '0')
        p++;
    else
        while (p < e && *p >= '0' && *p <= '9') p++;
    if (p - digits > 18) return NULL; /* past a 64-bit integer, perhaps: orjson refuses those */
    if (p < e && *p == '.') {
        *real = 1;
        if (++p >= e || *p < '0' || *p > '9') return NULL;
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        *real = 1;
        if (++p < e && (*p == '+' || *p == '-')) p++;
        digits = p;
        while (p < e && *p >= '0' && *p <= '9') p++;
        if (p == digits || p - digits > 2) return NULL; /* past a double's range, perhaps */
    }
    return p - start > NUMBER ? NULL : p;
}

static const char *value_end(const char *p, const char *e, int depth);

static const char *container_end(const char *p, const char *e, int depth) {
    char close = *p == '{' ? '}' : ']';
    int object = close == '}', escaped;
    if (depth > MAX_DEPTH) return NULL;
    p = space(p + 1, e);
    if (p < e && *p == close) return p + 1;
    for (;;) {
        if (object) {
            if (p >= e || *p != '"' || (p = string_end(p, e, &escaped)) == NULL) return NULL;
            p = space(p, e);
            if (p >= e || *p != ':') return NULL;
            p = space(p + 1, e);
        }
        if ((p = value_end(p, e, depth + 1)) == NULL) return NULL;
        p = space(p, e);
        if (p < e && *p == close) return p + 1;
        if (p >= e || *p != ',') return NULL;
        p = space(p + 1, e);
    }
}

static const char *value_end(const char *p, const char *e, int depth) {
    int flag;
    if (p >= e) return NULL;
    switch (*p) {
    case '"':
        return string_end(p, e, &flag);
    case '{':
    case '[':
        return container_end(p, e, depth);
    case 't':
        return e - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f':
        return e - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n':
        return e - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default:
        return number_end(p, e, &flag);
    }
}

/* The value read at `p` into s->values[leaf]: a string's text lower-cased (ASCII letters only, as SQLite's
lower()), null as none, anything else but an object or array as sql_text gives it. After it, or NULL. */
static const char *read_value(Scan *s, const char *p, int leaf) {
    const char *e = s->end, *after;
    PyObject *value = NULL;
    int flag;
    if (p >= e || *p == '{' || *p == '[') return NULL;
    if (*p == '"') {
        if ((after = string_end(p, e, &flag)) == NULL || flag) return NULL;
        Py_ssize_t n = after - p - 2;
        char small[256], *low = n <= (Py_ssize_t)sizeof small ? small : PyMem_Malloc((size_t)n);
        if (low == NULL) {
            PyErr_NoMemory();
            s->python_failed = 1;
            return NULL;
        }
        unsigned char any_high = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)p[1 + i];
            any_high |= c;
            low[i] = ascii_lower((char)c);
        }
        value = any_high < 0x80 ? PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, low, n)
                                : PyUnicode_DecodeUTF8(low, n, "strict");
        if (low != small) PyMem_Free(low);
    } else if ((after = value_end(p, e, 0)) == NULL) {
        return NULL;
    } else if (*p == 'n') {
        return after; /* null: no value */
    } else {
        PyObject *parsed;
        if (*p == 't' || *p == 'f') {
            parsed = Py_NewRef(*p == 't' ? Py_True : Py_False);
        } else {
            char digits[NUMBER + 1];
            int real;
            number_end(p, e, &real);
            memcpy(digits, p, (size_t)(after - p));
            digits[after - p] = '\0';
            parsed = real ? PyFloat_FromDouble(PyOS_string_to_double(digits, NULL, NULL)) : PyLong_FromString(digits, NULL, 10);
        }
        value = parsed == NULL ? NULL : PyObject_CallOneArg(s->self->sql_text, parsed);
        Py_XDECREF(parsed);
        if (value == Py_None) Py_CLEAR(value);
        else if (value != NULL && !PyUnicode_Check(value)) {
            Py_DECREF(value);
            PyErr_SetString(PyExc_TypeError, "sql_text must give a str or None");
            value = NULL;
        }
        if (value == NULL && !PyErr_Occurred()) return after;
    }
    if (value == NULL) {
        s->python_failed = 1;
        return NULL;
    }
    Py_XSETREF(s->values[leaf], value);
    return after;
}

/* The object at `p`, whose keys `node`'s children name: the values read in it. After it, or NULL. */
static const char *read_object(Scan *s, const char *p, int node, int depth) {
    const char *e = s->end;
    Node *nodes = s->self->nodes;
    uint64_t seen = 0;
    int escaped;
    p = space(p + 1, e);
    if (p < e && *p == '}') return p + 1;
    for (;;) {
        const char *key = p;
        if (p >= e || *p != '"' || (p = string_end(p, e, &escaped)) == NULL) return NULL;
        int c = -1;
        if (escaped) {
            if (nodes[node].first >= 0) return NULL; /* it might spell a key read here */
        } else {
            for (c = nodes[node].first; c >= 0; c = nodes[c].next)
                if (nodes[c].size == p - key - 2 && memcmp(nodes[c].key, key + 1, (size_t)nodes[c].size) == 0) break;
        }
        p = space(p, e);
        if (p >= e || *p != ':') return NULL;
        p = space(p + 1, e);
        if (c >= 0) {
            if (seen & ((uint64_t)1 << nodes[c].order)) return NULL; /* given twice: the last one counts */
            seen |= (uint64_t)1 << nodes[c].order;
        }
        if (c >= 0 && nodes[c].leaf >= 0)
            p = read_value(s, p, nodes[c].leaf);
        else if (c >= 0 && nodes[c].first >= 0 && p < e && *p == '{')
            p = read_object(s, p, c, depth + 1);
        else
            p = value_end(p, e, depth + 1);
        if (p == NULL) return NULL;
        p = space(p, e);
        if (p < e && *p == '}') return p + 1;
        if (p >= e || *p != ',') return NULL;
        p = space(p + 1, e);
    }
}

/* scan(raw): the values of each field (a list of str per field, as archive_layout.field_values gives them) read
from the JSON text `raw`; None when this scan is not sure of the text. */
static PyObject *FieldScan_scan(FieldScan *self, PyObject *raw) {
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "FieldScan was not made");
        return NULL;
    }
    if (!PyUnicode_Check(raw)) {
        PyErr_SetString(PyExc_TypeError, "raw must be a str");
        return NULL;
    }
    Py_ssize_t size;
    const char *text = PyUnicode_AsUTF8AndSize(raw, &size);
    if (text == NULL) {
        PyErr_Clear(); /* not UTF-8 (a lone surrogate): orjson decides */
        Py_RETURN_NONE;
    }
    PyObject *values[MAX_NODES] = {NULL};
    Scan s = {self, text + size, values, 0};
    const char *p = space(text, s.end), *after;
    after = p < s.end && *p == '{' ? read_object(&s, p, 0, 0) : value_end(p, s.end, 0);
    PyObject *out = NULL;
    if (s.python_failed) goto done;
    if (after == NULL || space(after, s.end) != s.end) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t fields = PyTuple_GET_SIZE(self->places);
    if ((out = PyList_New(fields)) == NULL) goto done;
    for (Py_ssize_t f = 0; f < fields; f++) {
        PyObject *field = PyTuple_GET_ITEM(self->places, f), *list = PyList_New(0);
        if (list == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, f, list);
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(field); i++) {
            PyObject *v = values[PyLong_AsLong(PyTuple_GET_ITEM(field, i))];
            if (v != NULL && PyList_Append(list, v) < 0) {
                Py_CLEAR(out);
                goto done;
            }
        }
    }
done:
    for (int i = 0; i < self->leaves; i++) Py_XDECREF(values[i]);
    return out;
}

static PyMethodDef FieldScan_methods[] = {
    {"scan", (PyCFunction)FieldScan_scan, METH_O, "The fields' values read from a JSON text, or None when unsure."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject FieldScanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tenant_events.store._postings.FieldScan",
    .tp_basicsize = sizeof(FieldScan),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An event type's field values read from its JSON text (archive_layout.field_values_of).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)FieldScan_init,
    .tp_dealloc = (destructor)FieldScan_dealloc,
    .tp_methods = FieldScan_methods,
};
