/* pyabi.h - the part of CPython's stable ABI (the limited API, Python 3.10 and later, builds with
   the GIL) that src/_accel.c uses, declared here so the accelerator builds where Python.h is not
   installed (a Python without its -dev package). Every name below is part of the stable ABI:
   its layout or value is guaranteed not to change across Python 3 versions (PEP 384, PEP 652).
   build_native.py uses it only when Python.h is missing, and never for free-threaded builds,
   whose object layout differs. */
#ifndef RMMH_PYABI_H
#define RMMH_PYABI_H
#include <stddef.h>
#include <sys/types.h>

typedef ssize_t Py_ssize_t;
typedef struct _typeobject PyTypeObject;
typedef struct _object {
    Py_ssize_t ob_refcnt;
    PyTypeObject *ob_type;
} PyObject;
typedef struct _ts PyThreadState;
typedef struct _is PyInterpreterState;
#define PyObject_HEAD PyObject ob_base;
#define Py_TYPE(o) (((PyObject *)(o))->ob_type)
#define Py_REFCNT(o) (((PyObject *)(o))->ob_refcnt) /* (the limited API's, for builds with the GIL) */

typedef PyObject *(*PyCFunction)(PyObject *, PyObject *);
typedef int (*visitproc)(PyObject *, void *);
typedef PyObject *(*allocfunc)(PyTypeObject *, Py_ssize_t);
typedef void (*freefunc)(void *);
typedef PyObject *(*getter)(PyObject *, void *);
typedef int (*setter)(PyObject *, PyObject *, void *);
typedef int (*traverseproc)(PyObject *, visitproc, void *);
typedef int (*inquiry)(PyObject *);

typedef struct PyMethodDef {
    const char *ml_name;
    PyCFunction ml_meth;
    int ml_flags;
    const char *ml_doc;
} PyMethodDef;
typedef struct PyMemberDef {
    const char *name;
    int type;
    Py_ssize_t offset;
    int flags;
    const char *doc;
} PyMemberDef;
typedef struct PyGetSetDef {
    const char *name;
    getter get;
    setter set;
    const char *doc;
    void *closure;
} PyGetSetDef;
typedef struct {
    int slot;
    void *pfunc;
} PyType_Slot;
typedef struct {
    const char *name;
    int basicsize;
    int itemsize;
    unsigned int flags;
    PyType_Slot *slots;
} PyType_Spec;
typedef struct PyModuleDef_Base {
    PyObject ob_base;
    PyObject *(*m_init)(void);
    Py_ssize_t m_index;
    PyObject *m_copy;
} PyModuleDef_Base;
struct PyModuleDef_Slot;
typedef struct PyModuleDef {
    PyModuleDef_Base m_base;
    const char *m_name;
    const char *m_doc;
    Py_ssize_t m_size;
    PyMethodDef *m_methods;
    struct PyModuleDef_Slot *m_slots;
    traverseproc m_traverse;
    inquiry m_clear;
    freefunc m_free;
} PyModuleDef;
#define PyModuleDef_HEAD_INIT {{1, NULL}, NULL, 0, NULL}

#define METH_VARARGS 0x0001
#define METH_KEYWORDS 0x0002
#define METH_NOARGS 0x0004
#define METH_FASTCALL 0x0080
#define Py_TPFLAGS_BASETYPE (1UL << 10)
#define Py_TPFLAGS_HAVE_GC (1UL << 14)
#define Py_TPFLAGS_DEFAULT (1UL << 18)
#define Py_TPFLAGS_LONG_SUBCLASS (1UL << 24)
#define Py_tp_alloc 47
#define Py_tp_dealloc 52
#define Py_tp_doc 56
#define Py_tp_init 60
#define Py_tp_methods 64
#define Py_tp_new 65
#define Py_tp_traverse 71
#define Py_tp_members 72
#define Py_tp_getset 73
#define Py_tp_free 74
#define Py_tp_finalize 80
#define PYTHON_ABI_VERSION 3
#define PyMODINIT_FUNC __attribute__((visibility("default"))) PyObject *

extern PyObject *PyExc_AttributeError, *PyExc_ImportError, *PyExc_KeyError, *PyExc_RuntimeError,
    *PyExc_TypeError, *PyExc_KeyboardInterrupt;

void Py_IncRef(PyObject *);
void Py_DecRef(PyObject *);
#define Py_XDECREF(o) do { PyObject *rmmh_o_ = (PyObject *)(o); if (rmmh_o_) Py_DecRef(rmmh_o_); } while (0)
#define Py_CLEAR(o) do { PyObject *rmmh_t_ = (PyObject *)(o); if (rmmh_t_) { (o) = NULL; Py_DecRef(rmmh_t_); } } while (0)
#define Py_VISIT(o) do { if (o) { int rmmh_v_ = visit((PyObject *)(o), arg); if (rmmh_v_) return rmmh_v_; } } while (0)

unsigned long PyType_GetFlags(PyTypeObject *);
void *PyType_GetSlot(PyTypeObject *, int);
PyObject *PyType_FromSpec(PyType_Spec *);
#define PyLong_Check(o) ((PyType_GetFlags(Py_TYPE(o)) & Py_TPFLAGS_LONG_SUBCLASS) != 0)
PyObject *PyModule_Create2(PyModuleDef *, int);
#define PyModule_Create(m) PyModule_Create2((m), PYTHON_ABI_VERSION)
int PyModule_AddObject(PyObject *, const char *, PyObject *);

PyObject *PyErr_Occurred(void);
void PyErr_SetString(PyObject *, const char *);
void PyErr_SetObject(PyObject *, PyObject *);
PyObject *PyErr_Format(PyObject *, const char *, ...);
void PyErr_Clear(void);
void PyErr_Fetch(PyObject **, PyObject **, PyObject **);
void PyErr_Restore(PyObject *, PyObject *, PyObject *);
int PyErr_ExceptionMatches(PyObject *);
void PyErr_SetInterrupt(void);
void PyErr_WriteUnraisable(PyObject *);

PyObject *PyObject_GetAttr(PyObject *, PyObject *);
PyObject *PyObject_CallFunctionObjArgs(PyObject *, ...);
PyObject *PyObject_CallObject(PyObject *, PyObject *);
PyObject *PyObject_CallFunction(PyObject *, const char *, ...); /* (no '#' formats: PY_SSIZE_T_CLEAN changes nothing) */
PyObject *PyObject_CallMethodObjArgs(PyObject *, PyObject *, ...);
int PyObject_IsInstance(PyObject *, PyObject *);
int PyObject_IsTrue(PyObject *);
void PyObject_GC_UnTrack(void *);

Py_ssize_t PyTuple_Size(PyObject *);
PyObject *PyTuple_GetItem(PyObject *, Py_ssize_t);
int PyDict_Next(PyObject *, Py_ssize_t *, PyObject **, PyObject **);
PyObject *PyDict_GetItem(PyObject *, PyObject *);
PyObject *PyDict_GetItemString(PyObject *, const char *);
PyObject *PyDict_Values(PyObject *);
Py_ssize_t PyList_Size(PyObject *);
PyObject *PyList_GetItem(PyObject *, Py_ssize_t);
int PyList_SetSlice(PyObject *, Py_ssize_t, Py_ssize_t, PyObject *);
int PyList_Append(PyObject *, PyObject *);

PyObject *PyLong_FromLong(long);
PyObject *PyLong_FromSize_t(size_t);
PyObject *PyLong_FromVoidPtr(void *);
long PyLong_AsLong(PyObject *);
size_t PyLong_AsSize_t(PyObject *);
void *PyLong_AsVoidPtr(PyObject *);

int PyUnicode_Compare(PyObject *, PyObject *);
PyObject *PyUnicode_InternFromString(const char *);
PyObject *PyUnicode_AsUTF8String(PyObject *);
char *PyBytes_AsString(PyObject *);

PyThreadState *PyEval_SaveThread(void);
PyInterpreterState *PyInterpreterState_Get(void); /* (stable ABI since 3.9) */
void PyEval_RestoreThread(PyThreadState *);
#endif /* RMMH_PYABI_H */
