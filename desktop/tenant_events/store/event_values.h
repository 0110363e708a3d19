/* An event's field values as field_lists.c files them: each held for the call, cut at a NUL, and checked against
the event's JSON. */

#ifndef EVENT_VALUES_H
#define EVENT_VALUES_H

#include "term_lists.h"

typedef struct {
    PyObject *text;  /* held for the call: what it was given in may change while Python runs */
    const char *p;   /* its UTF-8 */
    Py_ssize_t size; /* all of it */
    Py_ssize_t cut;  /* up to a NUL, as SQLite's GLOB reads the value */
    int column, odd; /* odd: its JSON may spell it otherwise */
} Value;

typedef struct {
    Value *at;
    size_t count, cap;
    char *quoted, *low; /* a quoted value being looked for; the event's JSON lower-cased */
    size_t quoted_cap, low_cap;
} Values;

/* The values of `fields` (a sequence of str, or None, for each of `columns` fields), held; 0, or -1 with an error
set and none held. */
int values_gather(Values *vs, PyObject *fields, int columns);
/* Each value's `odd`; 0, or -1 with an error set. Python may run meanwhile. */
int values_check(Values *vs, PyObject *raw);
/* The values let go. */
void values_drop(Values *vs);
void values_free(Values *vs);

#endif
