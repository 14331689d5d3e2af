/* The checks of big JSONL histories' ops that no annotation says, in C: ``check_lines``
 * of core/formats/jsonl_fast.py (the reference, and what runs where this is not built)
 * with the op fields read at their slots. A value that is not a scalar or a short list of
 * scalars is handed to a Python callable, as the Python loop does.
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

static PyMethodDef methods[] = {
    {"check_lines", check_lines, METH_VARARGS,
     "check_lines(ops, op_type, previous, max_time, complex_ok): the last op's index, or -2 "
     "at the first op that fails a check (core/formats/jsonl_fast.py)."},
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
