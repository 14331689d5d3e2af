/* A msgspec struct's fields read at their slots, for the C modules that read ops
 * (checkers/linear/_registers.c, core/formats/_scan.c): ``slot_offset`` finds the offset
 * of field ``name`` of ``type`` (a member descriptor holding an object; -1 if it is not
 * one), ``FIELD`` reads the field of an instance at that offset (a borrowed reference).
 */

#ifndef HARNESS_STRUCT_SLOTS_H
#define HARNESS_STRUCT_SLOTS_H

#include <Python.h>
#include <structmember.h>

static int
slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *out)
{
    PyObject *d = PyDict_GetItemString(type->tp_dict, name);
    if (d == NULL || !PyObject_TypeCheck(d, &PyMemberDescr_Type))
        return -1;
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type != T_OBJECT_EX && m->type != T_OBJECT)
        return -1;
    *out = m->offset;
    return 0;
}

#define FIELD(op, off) (*(PyObject **)((char *)(op) + (off)))

#endif
