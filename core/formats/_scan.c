/* The checks of big JSONL histories' ops that no annotation says, in C: ``check_lines``
 * of core/formats/jsonl_fast.py (the reference, and what runs where this is not built)
 * with the op fields read at their slots. A value that is not a scalar or a short list of
 * scalars is handed to a Python callable, as the Python loop does. ``first_break`` is
 * core/history.py's: where the ops first break the op semantics (pairing, f, key, time).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include "../struct_slots.h"

#define FAIL (-2)

/* An exact int within 64 bits, signed or unsigned (-2**63 <= n < 2**64): 1, else 0. */
static int
within_64_bits(PyObject *n)
{
    int overflow = 0;
    PyLong_AsLongLongAndOverflow(n, &overflow);
    if (overflow == 0)
        return !PyErr_Occurred();
    if (overflow < 0)
        return 0;
    PyLong_AsUnsignedLongLong(n);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

static int
scalar(PyObject *v)
{
    return v == Py_None || PyUnicode_CheckExact(v) || PyBool_Check(v);
}

/* jsonl_fast._plain: a list of at most 16 scalars and 64-bit ints. */
static int
plain_list(PyObject *v)
{
    Py_ssize_t n = PyList_GET_SIZE(v);
    if (n > 16)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyList_GET_ITEM(v, i);
        if (PyLong_CheckExact(x)) {
            if (!within_64_bits(x))
                return 0;
        }
        else if (!scalar(x)) {
            return 0;
        }
    }
    return 1;
}

static PyObject *
check_lines(PyObject *self, PyObject *args)
{
    PyObject *lines, *complex_ok;
    PyTypeObject *op_type;
    long long previous, max_time;
    if (!PyArg_ParseTuple(args, "O!O!LLO", &PyList_Type, &lines, &PyType_Type, &op_type,
                          &previous, &max_time, &complex_ok))
        return NULL;
    Py_ssize_t o_index, o_time, o_value, o_key;
    if (slot_offset(op_type, "index", &o_index) < 0 ||
        slot_offset(op_type, "time", &o_time) < 0 ||
        slot_offset(op_type, "value", &o_value) < 0 || slot_offset(op_type, "key", &o_key) < 0)
        return PyLong_FromLong(FAIL);
    Py_ssize_t n = PyList_GET_SIZE(lines);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyList_GET_ITEM(lines, i);
        if (Py_TYPE(x) != op_type)
            return PyLong_FromLong(FAIL);
        PyObject *value = FIELD(x, o_value), *key = FIELD(x, o_key);
        PyObject *index = FIELD(x, o_index), *time = FIELD(x, o_time);
        if (value == NULL || key == NULL || index == NULL || time == NULL)
            return PyLong_FromLong(FAIL);
        if (PyLong_CheckExact(value)) {
            if (!within_64_bits(value))
                return PyLong_FromLong(FAIL);
        }
        else if (!scalar(value) && !(PyList_CheckExact(value) && plain_list(value))) {
            PyObject *r = PyObject_CallOneArg(complex_ok, value);
            if (r == NULL)
                return NULL;
            int ok = PyObject_IsTrue(r);
            Py_DECREF(r);
            if (ok < 0)
                return NULL;
            if (!ok)
                return PyLong_FromLong(FAIL);
        }
        if (PyLong_CheckExact(key)) {
            if (!within_64_bits(key))
                return PyLong_FromLong(FAIL);
        }
        else if (key != Py_None && !PyUnicode_CheckExact(key)) {
            return PyLong_FromLong(FAIL);
        }
        long long ix = PyLong_AsLongLong(index), t = PyLong_AsLongLong(time);
        if (PyErr_Occurred())
            return NULL;
        if (ix <= previous || t > max_time)
            return PyLong_FromLong(FAIL);
        previous = ix;
    }
    return PyLong_FromLongLong(previous);
}

/* A str equal to the ASCII literal ``lit`` of length ``n``. */
static int
eq_ascii(PyObject *s, const char *lit, Py_ssize_t n)
{
    return PyUnicode_CheckExact(s) && PyUnicode_GET_LENGTH(s) == n &&
           PyUnicode_KIND(s) == PyUnicode_1BYTE_KIND &&
           memcmp(PyUnicode_DATA(s), lit, (size_t)n) == 0;
}

/* Whether the fields at ``off`` of two ops are equal (-1 on a Python error). */
static int
same(PyObject *a, PyObject *b, Py_ssize_t off)
{
    PyObject *x = FIELD(a, off), *y = FIELD(b, off);
    if (x == NULL || y == NULL)
        return x == y;
    return PyObject_RichCompareBool(x, y, Py_EQ);
}

/* The position of the first op breaking the op semantics, -1 if none, -2 on an error. */
static Py_ssize_t
find_break(PyObject *ops, PyTypeObject *op_type, PyObject *open_, PyObject *retired)
{
    Py_ssize_t o_process, o_type, o_f, o_key, o_time;
    if (slot_offset(op_type, "process", &o_process) < 0 ||
        slot_offset(op_type, "type", &o_type) < 0 || slot_offset(op_type, "f", &o_f) < 0 ||
        slot_offset(op_type, "key", &o_key) < 0 || slot_offset(op_type, "time", &o_time) < 0) {
        PyErr_SetString(PyExc_TypeError, "not an op type");
        return -2;
    }
    Py_ssize_t n = PyList_GET_SIZE(ops);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyList_GET_ITEM(ops, i);
        if (Py_TYPE(x) != op_type) {
            PyErr_SetString(PyExc_TypeError, "not an op");
            return -2;
        }
        PyObject *p = FIELD(x, o_process), *t = FIELD(x, o_type);
        if (p == NULL || t == NULL)
            return i;
        if (eq_ascii(p, "nemesis", 7)) { /* one fault at a time; a lone info is a note */
            int busy = PyDict_Contains(open_, p);
            if (busy < 0)
                return -2;
            if (busy && PyDict_DelItem(open_, p) < 0)
                return -2;
            if (!eq_ascii(t, "invoke", 6))
                continue;
            if (busy)
                return i;
            if (PyDict_SetItem(open_, p, x) < 0)
                return -2;
            continue;
        }
        if (eq_ascii(t, "invoke", 6)) {
            int busy = PyDict_Contains(open_, p);
            if (busy < 0)
                return -2;
            int gone = busy ? 0 : PySet_Contains(retired, p);
            if (gone < 0)
                return -2;
            if (busy || gone)
                return i;
            if (PyDict_SetItem(open_, p, x) < 0)
                return -2;
            continue;
        }
        PyObject *inv = PyDict_GetItemWithError(open_, p);
        if (inv == NULL)
            return PyErr_Occurred() ? -2 : i;
        int same_f = same(x, inv, o_f);
        if (same_f <= 0)
            return same_f < 0 ? -2 : i;
        int same_key = same(x, inv, o_key);
        if (same_key <= 0)
            return same_key < 0 ? -2 : i;
        PyObject *t1 = FIELD(x, o_time), *t0 = FIELD(inv, o_time);
        if (t1 == NULL || t0 == NULL)
            return i;
        int early = PyObject_RichCompareBool(t1, t0, Py_LT);
        if (early != 0)
            return early < 0 ? -2 : i;
        if (eq_ascii(t, "info", 4) && PySet_Add(retired, p) < 0)
            return -2;
        if (PyDict_DelItem(open_, p) < 0)
            return -2;
    }
    return -1;
}

static PyObject *
first_break(PyObject *self, PyObject *args)
{
    PyObject *ops;
    PyTypeObject *op_type;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &ops, &PyType_Type, &op_type))
        return NULL;
    PyObject *open_ = PyDict_New(), *retired = PySet_New(NULL);
    Py_ssize_t at = (open_ == NULL || retired == NULL)
                        ? -2
                        : find_break(ops, op_type, open_, retired);
    Py_XDECREF(open_);
    Py_XDECREF(retired);
    return at == -2 ? NULL : PyLong_FromSsize_t(at);
}

static PyMethodDef methods[] = {
    {"check_lines", check_lines, METH_VARARGS,
     "check_lines(ops, op_type, previous, max_time, complex_ok): the last op's index, or -2 "
     "at the first op that fails a check (core/formats/jsonl_fast.py)."},
    {"first_break", first_break, METH_VARARGS,
     "first_break(ops, op_type): the position of the first op breaking the op semantics, or "
     "-1 (core/history.py's first_break)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scan",
    "The checks of big JSONL histories' ops in C (see core/formats/jsonl_fast.py).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    return PyModule_Create(&module);
}
