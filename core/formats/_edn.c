/* A fast path for Jepsen EDN histories (core/formats/edn_fast.py): the text read into ops
 * in C, for the files histories usually are.
 *
 * It reads a file of op maps - one vector or list of them, or one map per top-level form -
 * whose keys are keywords and whose values are nil, true, false, integers of at most 18
 * digits, keywords, strings without escapes, and vectors or lists of those; and it checks
 * each op's fields as ``core.formats.fields.make_op`` does (an error vector, such as
 * ``[:timeout nil]``, made text by ``render``, the plain reader's ``dumps``). At anything else (a float, a
 * symbol, a set, a nested map, an escape, a tag, a comment's neighbour it cannot tell, a
 * byte outside ASCII outside a string, a field of the wrong type, a key given twice) it
 * gives up (None), and the plain reader (``core.formats.jepsen_edn``) reads the file and
 * says what is wrong, where, and what to do, exactly as before. So it never words an
 * error, and what it accepts it reads as the plain reader does: the same ops.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "../struct_slots.h"

#define MAX_INT ((1LL << 62) - 1)
#define MAX_DIGITS 18   /* every integer of this many digits fits in 64 bits */
#define MAX_NEST 8      /* nested vectors in a value (the plain reader allows 32) */
#define MAX_ITEMS 100000 /* elements in one value, as core.formats.fields */
#define POLL_EVERY 4096 /* op maps read between two calls of ``poll`` */
#define KEYWORDS 64     /* keywords made once and shared */

enum { F_PROCESS, F_TYPE, F_F, F_VALUE, F_KEY, F_ERROR, F_NODE, F_TIME, N_FIELDS };
static const char *const FIELD_NAMES[N_FIELDS] = {"process", "type", "f",    "value",
                                                  "key",     "error", "node", "time"};
static const Py_ssize_t FIELD_LENGTHS[N_FIELDS] = {7, 4, 1, 5, 3, 5, 4, 4};

typedef struct {
    const char *p, *end;
    int give_up;   /* set where this path does not read the text */
    Py_ssize_t items; /* elements of the value being read */
    struct {
        const char *s;
        Py_ssize_t n;
        PyObject *str;
    } kw[KEYWORDS];
    int n_kw;
} Reader;

/* What each byte is to an atom: part of it (ATOM), a delimiter ending it, or a byte
 * this path does not read (OTHER: a control character, a byte outside ASCII). One table
 * look-up per byte: the reading of an atom and of whitespace was most of a file's time. */
enum { OTHER = 0, ATOM = 1, DELIMITER = 2 };
static unsigned char BYTES[256];

static void
init_bytes(void)
{
    for (int c = 0x21; c <= 0x7e; c++)
        BYTES[c] = ATOM;
    const char *delimiters = " \t\n\r,[](){}\";";
    for (const char *d = delimiters; *d; d++)
        BYTES[(unsigned char)*d] = DELIMITER;
}

/* Whether the ``n`` bytes at ``a`` and ``b`` are the same (short names: no libc call). */
static int
same(const char *a, const char *b, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if (a[i] != b[i])
            return 0;
    }
    return 1;
}

/* Skip whitespace, commas and comments. A byte the plain reader's ``\s`` might also take
 * for whitespace (another control character, a byte outside ASCII) is left for the
 * caller, which gives up at it. */
static void
skip(Reader *r)
{
    while (r->p < r->end) {
        char c = *r->p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',') {
            r->p++;
        }
        else if (c == ';') {
            while (r->p < r->end && *r->p != '\n')
                r->p++;
        }
        else {
            return;
        }
    }
}

/* The atom at ``r->p`` (up to a delimiter): its length, 0 (``give_up`` set) where it
 * holds a byte this path does not read. */
static Py_ssize_t
atom_len(Reader *r)
{
    const char *q = r->p;
    while (q < r->end) {
        unsigned char kind = BYTES[(unsigned char)*q];
        if (kind == DELIMITER)
            break;
        if (kind == OTHER) {
            r->give_up = 1;
            return 0;
        }
        q++;
    }
    return q - r->p;
}

/* A keyword's name (the atom without its colon) as a new reference, made once. */
static PyObject *
keyword(Reader *r, const char *s, Py_ssize_t n)
{
    for (int i = 0; i < r->n_kw; i++) {
        if (r->kw[i].n == n && same(r->kw[i].s, s, n))
            return Py_NewRef(r->kw[i].str);
    }
    PyObject *str = PyUnicode_FromStringAndSize(s, n);
    if (str == NULL || r->n_kw == KEYWORDS)
        return str;
    r->kw[r->n_kw].s = s;
    r->kw[r->n_kw].n = n;
    r->kw[r->n_kw].str = Py_NewRef(str);
    r->n_kw++;
    return str;
}

/* The value at ``r->p`` (a new reference); NULL where it gives up (``give_up``) or on a
 * Python error. */
static PyObject *
value(Reader *r, int depth)
{
    if (r->p >= r->end) {
        r->give_up = 1;
        return NULL;
    }
    char c = *r->p;
    if (c == '"') {
        const char *s = ++r->p;
        while (r->p < r->end && *r->p != '"') {
            if (*r->p == '\\') {
                r->give_up = 1;
                return NULL;
            }
            r->p++;
        }
        if (r->p >= r->end) {
            r->give_up = 1;
            return NULL;
        }
        PyObject *str = PyUnicode_DecodeUTF8(s, r->p - s, "strict");
        r->p++;
        return str;
    }
    if (c == '[' || c == '(') {
        char closer = c == '[' ? ']' : ')';
        if (depth >= MAX_NEST) {
            r->give_up = 1;
            return NULL;
        }
        r->p++;
        PyObject *list = PyList_New(0);
        if (list == NULL)
            return NULL;
        for (;;) {
            skip(r);
            if (r->p < r->end && *r->p == closer) {
                r->p++;
                return list;
            }
            if (++r->items > MAX_ITEMS) {
                r->give_up = 1;
                Py_DECREF(list);
                return NULL;
            }
            PyObject *x = value(r, depth + 1);
            if (x == NULL || PyList_Append(list, x) < 0) {
                Py_XDECREF(x);
                Py_DECREF(list);
                return NULL;
            }
            Py_DECREF(x);
        }
    }
    Py_ssize_t n = atom_len(r);
    if (n == 0) {
        r->give_up = 1; /* a map, a set, a tag, a character, a closer out of place */
        return NULL;
    }
    const char *s = r->p;
    r->p += n;
    if (s[0] == ':') {
        if (n == 1) {
            r->give_up = 1;
            return NULL;
        }
        return keyword(r, s + 1, n - 1);
    }
    if (n == 3 && memcmp(s, "nil", 3) == 0)
        return Py_NewRef(Py_None);
    if (n == 4 && memcmp(s, "true", 4) == 0)
        return Py_NewRef(Py_True);
    if (n == 5 && memcmp(s, "false", 5) == 0)
        return Py_NewRef(Py_False);
    Py_ssize_t i = s[0] == '-' ? 1 : 0;
    if (n - i < 1 || n - i > MAX_DIGITS) {
        r->give_up = 1;
        return NULL;
    }
    long long x = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            r->give_up = 1; /* a float, a symbol, 12N: the plain reader's */
            return NULL;
        }
        x = 10 * x + (s[i] - '0');
    }
    return PyLong_FromLongLong(s[0] == '-' ? -x : x);
}

/* One op map's fields (new references in ``fields``, NULL where absent): 1, or 0 where it
 * gives up or on a Python error. */
static int
op_map(Reader *r, PyObject **fields, int kv)
{
    r->p++; /* the '{' */
    for (;;) {
        skip(r);
        if (r->p >= r->end) {
            r->give_up = 1;
            return 0;
        }
        if (*r->p == '}') {
            r->p++;
            return 1;
        }
        if (*r->p != ':') {
            r->give_up = 1; /* a key that is not a keyword */
            return 0;
        }
        Py_ssize_t n = atom_len(r);
        if (n < 2)
            return (r->give_up = 1, 0);
        const char *name = r->p + 1;
        r->p += n;
        int field = -1;
        for (int k = 0; k < N_FIELDS; k++) {
            if (FIELD_LENGTHS[k] == n - 1 && same(FIELD_NAMES[k], name, n - 1)) {
                field = k;
                break;
            }
        }
        if (field < 0 ? kv : (fields[field] != NULL || (kv && field > F_KEY)))
            return (r->give_up = 1, 0); /* an unknown key of a kv op; a key given twice */
        skip(r);
        if (r->p < r->end && *r->p == '}')
            return (r->give_up = 1, 0); /* a key without a value */
        r->items = 0;
        PyObject *v = value(r, 0);
        if (v == NULL)
            return 0;
        if (field < 0)
            Py_DECREF(v);
        else
            fields[field] = v;
    }
}

static int
is_ascii(PyObject *s, const char *lit)
{
    return PyUnicode_CompareWithASCIIString(s, lit) == 0;
}

/* Whether the fields of one op are as ``make_op`` wants them (``timed``: the file's ops
 * have times). */
static int
fields_ok(PyObject **f, int timed, int kv)
{
    PyObject *p = f[F_PROCESS], *t = f[F_TYPE], *fn = f[F_F];
    if (p == NULL || t == NULL || fn == NULL || (kv && f[F_KEY] == NULL))
        return 0;
    if (PyLong_CheckExact(p)) {
        long long n = PyLong_AsLongLong(p);
        if (n < 0 || n > MAX_INT)
            return 0;
    }
    else if (!PyUnicode_CheckExact(p) || PyUnicode_GET_LENGTH(p) == 0) {
        return 0;
    }
    if (!PyUnicode_CheckExact(t) || !(is_ascii(t, "invoke") || is_ascii(t, "ok") ||
                                      is_ascii(t, "fail") || is_ascii(t, "info")))
        return 0;
    if (!PyUnicode_CheckExact(fn) || PyUnicode_GET_LENGTH(fn) == 0)
        return 0;
    PyObject *k = f[F_KEY];
    if (k != NULL && k != Py_None && !PyUnicode_CheckExact(k) && !PyLong_CheckExact(k))
        return 0;
    PyObject *e = f[F_ERROR], *node = f[F_NODE];
    if (e != NULL && e != Py_None && !PyUnicode_CheckExact(e) && !PyList_CheckExact(e))
        return 0; /* a vector is rendered as text (``render``); a number is refused */
    if (node != NULL && node != Py_None && !PyUnicode_CheckExact(node))
        return 0;
    if (timed) {
        PyObject *time = f[F_TIME];
        if (time == NULL || !PyLong_CheckExact(time))
            return 0;
        long long n = PyLong_AsLongLong(time);
        if (n < 0 || n > MAX_INT)
            return 0;
    }
    return 1;
}

/* The op type's fields in the order ``read_ops`` gives them, and where each lives. */
#define N_ARGS 9
static const char *const ARG_NAMES[N_ARGS] = {"index", "time",  "process", "type", "f",
                                              "value", "key",   "error",   "node"};

/* The offsets of ``op_type``'s nine fields, where a new op can be filled at its slots:
 * a type of exactly those nine object slots, not tracked by the cyclic collector (a
 * msgspec struct with gc=False, as ``core.ops.Op``). Its ``__post_init__`` checks the op
 * type, which ``fields_ok`` has checked: filling the slots gives the op the call would,
 * without a Python call per op. 0, or -1 where the type is not such (the call then). */
static int
arg_offsets(PyObject *op_type, Py_ssize_t *off)
{
    if (!PyType_Check(op_type))
        return -1;
    PyTypeObject *t = (PyTypeObject *)op_type;
    if (PyType_IS_GC(t) || t->tp_alloc == NULL ||
        t->tp_basicsize != (Py_ssize_t)(sizeof(PyObject) + N_ARGS * sizeof(PyObject *)))
        return -1;
    for (int k = 0; k < N_ARGS; k++) {
        if (slot_offset(t, ARG_NAMES[k], &off[k]) < 0)
            return -1;
    }
    return 0;
}

/* A new op of ``op_type`` with the fields ``call`` (``off``: ``arg_offsets``'s, or NULL
 * to call the type). */
static PyObject *
new_op(PyObject *op_type, PyObject *const *call, const Py_ssize_t *off)
{
    if (off == NULL)
        return PyObject_Vectorcall(op_type, call, N_ARGS, NULL);
    PyTypeObject *t = (PyTypeObject *)op_type;
    PyObject *op = t->tp_alloc(t, 0);
    if (op == NULL)
        return NULL;
    for (int k = 0; k < N_ARGS; k++)
        FIELD(op, off[k]) = Py_NewRef(call[k]);
    return op;
}

static void
clear_fields(PyObject **fields, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XDECREF(fields[i]);
}

static PyObject *
read_ops(PyObject *self, PyObject *args)
{
    PyObject *text, *op_type, *poll, *render;
    int kv;
    if (!PyArg_ParseTuple(args, "UOpOO", &text, &op_type, &kv, &poll, &render))
        return NULL;
    Py_ssize_t size;
    const char *data = PyUnicode_AsUTF8AndSize(text, &size);
    if (data == NULL) {
        PyErr_Clear(); /* a lone surrogate: the plain reader's */
        Py_RETURN_NONE;
    }
    Reader r;
    memset(&r, 0, sizeof r);
    r.p = data;
    r.end = data + size;
    PyObject **fields = NULL; /* N_FIELDS per op */
    Py_ssize_t n_ops = 0, cap = 0;
    PyObject *result = NULL;
    int failed = 0; /* a Python error to raise (the poll's) */
    skip(&r);
    char closer = 0;
    int closed = 0;
    if (r.p < r.end && (*r.p == '[' || *r.p == '(')) {
        closer = *r.p == '[' ? ']' : ')';
        r.p++;
    }
    for (;;) {
        skip(&r);
        if (r.p >= r.end)
            break;
        if (closer && *r.p == closer) {
            r.p++;
            closed = 1;
            skip(&r);
            if (r.p < r.end)
                r.give_up = 1; /* text after the history vector */
            break;
        }
        if (*r.p != '{') {
            r.give_up = 1;
            break;
        }
        if (n_ops == cap) {
            Py_ssize_t grown = cap ? 2 * cap : 1024;
            PyObject **more = PyMem_Realloc(fields, (size_t)grown * N_FIELDS * sizeof(PyObject *));
            if (more == NULL) {
                PyErr_NoMemory();
                failed = 1;
                break;
            }
            fields = more;
            cap = grown;
        }
        PyObject **f = fields + n_ops * N_FIELDS;
        memset(f, 0, N_FIELDS * sizeof(PyObject *));
        n_ops++;
        if (!op_map(&r, f, kv)) {
            failed = PyErr_Occurred() != NULL && !r.give_up;
            break;
        }
        if (n_ops % POLL_EVERY == 0 && poll != Py_None) {
            PyObject *got = PyObject_CallNoArgs(poll);
            if (got == NULL) {
                failed = 1;
                break;
            }
            Py_DECREF(got);
        }
    }
    if (failed)
        goto done;
    if (r.give_up || n_ops == 0 || (closer && !closed)) {
        PyErr_Clear();
        result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t offsets[N_ARGS];
    const Py_ssize_t *off = arg_offsets(op_type, offsets) == 0 ? offsets : NULL;
    int timed = 0;
    for (Py_ssize_t i = 0; i < n_ops && !timed; i++)
        timed = fields[i * N_FIELDS + F_TIME] != NULL;
    PyObject *ops = PyList_New(n_ops);
    if (ops == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n_ops; i++) {
        PyObject **f = fields + i * N_FIELDS;
        if (!fields_ok(f, timed, kv)) {
            if (PyErr_Occurred())
                PyErr_Clear();
            Py_DECREF(ops);
            result = Py_NewRef(Py_None);
            goto done;
        }
        if (f[F_ERROR] != NULL && PyList_CheckExact(f[F_ERROR])) {
            /* An error vector, such as [:timeout nil], is kept as its EDN text. */
            PyObject *said = PyObject_CallOneArg(render, f[F_ERROR]);
            if (said == NULL)
                PyErr_Clear(); /* the plain reader's to say */
            else
                Py_SETREF(f[F_ERROR], said);
            if (said == NULL || !PyUnicode_CheckExact(said)) {
                Py_DECREF(ops);
                result = Py_NewRef(Py_None);
                goto done;
            }
        }
        PyObject *index = PyLong_FromSsize_t(i);
        if (index == NULL) {
            Py_DECREF(ops);
            goto done;
        }
        PyObject *call[N_ARGS] = {index, timed ? f[F_TIME] : index, f[F_PROCESS], f[F_TYPE],
                             f[F_F], f[F_VALUE] ? f[F_VALUE] : Py_None,
                             f[F_KEY] ? f[F_KEY] : Py_None, f[F_ERROR] ? f[F_ERROR] : Py_None,
                             f[F_NODE] ? f[F_NODE] : Py_None};
        PyObject *op = new_op(op_type, call, off);
        Py_DECREF(index);
        if (op == NULL) {
            Py_DECREF(ops);
            goto done;
        }
        PyList_SET_ITEM(ops, i, op);
    }
    result = ops;
done:
    if (fields != NULL) {
        clear_fields(fields, n_ops * N_FIELDS);
        PyMem_Free(fields);
    }
    for (int i = 0; i < r.n_kw; i++)
        Py_DECREF(r.kw[i].str);
    return result;
}

static PyMethodDef methods[] = {
    {"read_ops", read_ops, METH_VARARGS,
     "read_ops(text, op_type, kv, poll, render): the ops of a Jepsen EDN history's text, "
     "or None where this path does not read it (the plain reader then does); ``poll`` (or "
     "None) is called every 4,096 op maps, and what it raises is raised; ``render`` gives "
     "the text of an error that is a vector."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_edn",
    "Jepsen EDN histories read into ops in C (see core/formats/edn_fast.py).", -1, methods,
};

PyMODINIT_FUNC
PyInit__edn(void)
{
    init_bytes();
    return PyModule_Create(&module);
}
