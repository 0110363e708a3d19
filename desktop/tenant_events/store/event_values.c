/* An event's field values (event_values.h): what field_lists.c's add reads of its arguments, and the check of
each value against the event's JSON. */

#include "event_values.h"

#include <string.h>

int values_gather(Values *vs, PyObject *fields, int columns) {
    PyObject *all = PySequence_Tuple(fields);
    if (all == NULL) return -1;
    vs->count = 0;
    if (PyTuple_GET_SIZE(all) != columns) {
        PyErr_Format(PyExc_ValueError, "an event has values for %d fields", columns);
        goto failed;
    }
    for (int c = 0; c < columns; c++) {
        PyObject *col = PyTuple_GET_ITEM(all, c);
        if (col == Py_None) continue;
        PyObject *held = PySequence_Fast(col, "a field's values must be a sequence");
        if (held == NULL) goto failed;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(held);
        if (room_for((void **)&vs->at, &vs->cap, vs->count + (size_t)n, sizeof(Value)) < 0) {
            Py_DECREF(held);
            PyErr_NoMemory();
            goto failed;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            Value *v = &vs->at[vs->count];
            v->text = PySequence_Fast_GET_ITEM(held, i);
            v->p = PyUnicode_Check(v->text) ? PyUnicode_AsUTF8AndSize(v->text, &v->size) : NULL;
            if (v->p == NULL) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a field's values must be str");
                Py_DECREF(held);
                goto failed;
            }
            const char *nul = memchr(v->p, 0, (size_t)v->size);
            v->cut = nul != NULL ? nul - v->p : v->size;
            v->column = c;
            Py_INCREF(v->text);
            vs->count++;
        }
        Py_DECREF(held);
    }
    Py_DECREF(all);
    return 0;
failed:
    values_drop(vs);
    Py_DECREF(all);
    return -1;
}

void values_drop(Values *vs) {
    for (size_t k = 0; k < vs->count; k++) Py_DECREF(vs->at[k].text);
    vs->count = 0;
}

void values_free(Values *vs) {
    free(vs->at);
    free(vs->quoted);
    free(vs->low);
}

/* Whether the JSON `json` holds `v` as a whole JSON string (vs->quoted large enough). */
static int quoted_in(Values *vs, const Value *v, const char *json, Py_ssize_t json_size) {
    size_t size = (size_t)v->cut + 2;
    if ((size_t)json_size < size) return 0;
    vs->quoted[0] = '"';
    memcpy(vs->quoted + 1, v->p, size - 2);
    vs->quoted[size - 1] = '"';
    return memmem(json, (size_t)json_size, vs->quoted, size) != NULL;
}

/* A value is odd when it holds what a JSON string escapes, or no whole JSON string of it stands in the JSON, in
its case or lower-cased (str.lower(): past ASCII, Python's own). */
int values_check(Values *vs, PyObject *raw) {
    Py_ssize_t raw_size, low_size = -1;
    const char *json = PyUnicode_AsUTF8AndSize(raw, &raw_size), *low = NULL;
    PyObject *lowered = NULL;
    int ascii = PyUnicode_IS_ASCII(raw), failed = 0;
    if (json == NULL) return -1;
    if (ascii) {
        if (room_for((void **)&vs->low, &vs->low_cap, (size_t)raw_size + 1, 1) < 0) goto oom;
        /* locals the compiler need not reload after each byte written: the loop runs many bytes a step */
        char *restrict out = vs->low;
        const char *restrict in = json;
        size_t n = (size_t)raw_size;
        for (size_t i = 0; i < n; i++) out[i] = ascii_lower(in[i]);
        low = vs->low, low_size = raw_size;
    }
    for (size_t k = 0; k < vs->count && !failed; k++) {
        Value *v = &vs->at[k];
        int upper = 0;
        v->odd = 0;
        for (Py_ssize_t i = 0; i < v->cut && !v->odd; i++) {
            unsigned char c = (unsigned char)v->p[i];
            v->odd = c < 0x20 || c == '"' || c == '\\';
            upper |= c >= 'A' && c <= 'Z';
        }
        if (v->odd) continue;
        if (room_for((void **)&vs->quoted, &vs->quoted_cap, (size_t)v->cut + 2, 1) < 0) goto oom;
        if (ascii) {
            /* lower-casing ASCII changes A-Z alone: a value with none of them is in the JSON only if it is in the
            lowered JSON too, and one with any is only in the JSON as it is */
            v->odd = !quoted_in(vs, v, upper ? json : low, raw_size);
            continue;
        }
        if (quoted_in(vs, v, json, raw_size)) continue;
        if (lowered == NULL) {
            /* the values are held (Value.text): Python may run here */
            lowered = PyObject_CallMethod(raw, "lower", NULL);
            failed = lowered == NULL || (low = PyUnicode_AsUTF8AndSize(lowered, &low_size)) == NULL;
        }
        v->odd = !failed && !quoted_in(vs, v, low, low_size);
    }
    Py_XDECREF(lowered);
    return failed ? -1 : 0;
oom:
    Py_XDECREF(lowered);
    PyErr_NoMemory();
    return -1;
}
