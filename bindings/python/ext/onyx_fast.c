/* onyxruntime.capi._onyx_fast: InferenceSession.run's hot path in C.
 *
 * The cffi binding (ABI mode) covers the whole C API; what it costs per call
 * (a few hundred ns per struct field written through cffi, per C call, per
 * output array built) adds up to microseconds on a small model. This module
 * does the same work as capi/_fastrun.py's pure-Python path, for the same
 * cases: a dict of C-contiguous, aligned, native-order numpy arrays of the
 * plain numeric types in, numpy arrays out, one SessionRunTensors call with
 * the GIL released. Anything else returns None and Python takes over.
 *
 * It sees only the public C header: the OnyxApi table comes from the cffi
 * binding (init), so the module neither links nor loads the library itself.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <stdint.h>
#include <string.h>

#include "onyxruntime/onyxruntime_c_api.h"

/* Outputs up to this size are copied and their value released at once; larger
 * ones become arrays over the library's memory, the value released with them. */
#define COPY_LIMIT_BYTES 16384
/* Inputs and outputs handled without a heap allocation for their C arrays. */
#define STACK_ARGS 16

static const OnyxApi* g_api;
/* exception_for_code(code, message) -> the onyxruntime exception to raise. */
static PyObject* g_exception_for_code;

static int OnyxToNumpy(int32_t onyx) {
  switch (onyx) {
    case 1: return NPY_FLOAT32;
    case 2: return NPY_UINT8;
    case 3: return NPY_INT8;
    case 4: return NPY_UINT16;
    case 5: return NPY_INT16;
    case 6: return NPY_INT32;
    case 7: return NPY_INT64;
    case 9: return NPY_BOOL;
    case 10: return NPY_FLOAT16;
    case 11: return NPY_FLOAT64;
    case 12: return NPY_UINT32;
    case 13: return NPY_UINT64;
    case 14: return NPY_COMPLEX64;
    case 15: return NPY_COMPLEX128;
    default: return -1;
  }
}

static size_t ItemSize(int npy) {
  switch (npy) {
    case NPY_UINT8: case NPY_INT8: case NPY_BOOL: return 1;
    case NPY_UINT16: case NPY_INT16: case NPY_FLOAT16: return 2;
    case NPY_FLOAT32: case NPY_INT32: case NPY_UINT32: return 4;
    case NPY_COMPLEX128: return 16;
    default: return 8;  /* float64, int64, uint64, complex64 */
  }
}

static int32_t NumpyToOnyx(int npy) {
  switch (npy) {
    case NPY_FLOAT32: return 1;
    case NPY_UINT8: return 2;
    case NPY_INT8: return 3;
    case NPY_UINT16: return 4;
    case NPY_INT16: return 5;
    case NPY_INT32: return 6;
    case NPY_INT64: return 7;
    case NPY_BOOL: return 9;
    case NPY_FLOAT16: return 10;
    case NPY_FLOAT64: return 11;
    case NPY_UINT32: return 12;
    case NPY_UINT64: return 13;
    case NPY_COMPLEX64: return 14;
    case NPY_COMPLEX128: return 15;
    /* long long / unsigned long long alias the 64-bit types on LP64 */
    case NPY_LONGLONG: return sizeof(long long) == 8 ? 7 : 0;
    case NPY_ULONGLONG: return sizeof(unsigned long long) == 8 ? 13 : 0;
    default: return 0;
  }
}

/* Raises the onyxruntime exception for `status` and releases it. */
static void RaiseStatus(OnyxStatus* status) {
  const int code = (int)g_api->StatusGetCode(status);
  PyObject* exc = PyObject_CallFunction(g_exception_for_code, "is", code, g_api->StatusGetMessage(status));
  g_api->StatusRelease(status);
  if (exc != NULL) {
    PyErr_SetObject((PyObject*)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
}

/* The base object of a zero-copy output array: releases the value with it. */
static void ReleaseValueCapsule(PyObject* capsule) {
  OnyxValue* value = (OnyxValue*)PyCapsule_GetPointer(capsule, "onyxruntime.OnyxValue");
  if (value != NULL) g_api->ValueRelease(value);
}

typedef struct {
  PyObject_HEAD
  OnyxSession* session;
  PyObject* owner;         /* keeps the session handle alive */
  PyObject* feed_index;    /* name -> position (inputs, then overridable initializers) */
  PyObject* output_index;  /* name -> position */
  Py_ssize_t n_feeds, n_required, n_outputs;
} Runner;

static void Runner_dealloc(Runner* self) {
  Py_XDECREF(self->owner);
  Py_XDECREF(self->feed_index);
  Py_XDECREF(self->output_index);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

/* Runner(session_address, owner, feed_names, n_required, output_names) */
static int Runner_init(Runner* self, PyObject* args, PyObject* kwds) {
  unsigned long long address;
  PyObject *owner, *feeds, *outputs;
  Py_ssize_t n_required;
  (void)kwds;
  if (!PyArg_ParseTuple(args, "KOO!nO!", &address, &owner, &PyTuple_Type, &feeds, &n_required, &PyTuple_Type,
                        &outputs))
    return -1;
  self->session = (OnyxSession*)(uintptr_t)address;
  Py_INCREF(owner);
  Py_XSETREF(self->owner, owner);
  PyObject* fi = PyDict_New();
  PyObject* oi = PyDict_New();
  if (fi == NULL || oi == NULL) {
    Py_XDECREF(fi);
    Py_XDECREF(oi);
    return -1;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(feeds); ++i) {
    PyObject* pos = PyLong_FromSsize_t(i);
    if (pos == NULL || PyDict_SetItem(fi, PyTuple_GET_ITEM(feeds, i), pos) < 0) {
      Py_XDECREF(pos);
      Py_DECREF(fi);
      Py_DECREF(oi);
      return -1;
    }
    Py_DECREF(pos);
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(outputs); ++i) {
    PyObject* pos = PyLong_FromSsize_t(i);
    if (pos == NULL || PyDict_SetItem(oi, PyTuple_GET_ITEM(outputs, i), pos) < 0) {
      Py_XDECREF(pos);
      Py_DECREF(fi);
      Py_DECREF(oi);
      return -1;
    }
    Py_DECREF(pos);
  }
  Py_XSETREF(self->feed_index, fi);
  Py_XSETREF(self->output_index, oi);
  self->n_feeds = PyTuple_GET_SIZE(feeds);
  self->n_required = n_required;
  self->n_outputs = PyTuple_GET_SIZE(outputs);
  return 0;
}

/* One output as a numpy array, or (for what this module does not convert:
 * strings, narrow types, sequences, maps, optionals) the value's address as
 * an int, for Python to wrap. Takes ownership of r->value on success. */
static PyObject* ConvertResult(const OnyxTensorResult* r) {
  const int npy = r->kind == ONYX_VALUE_TENSOR ? OnyxToNumpy((int32_t)r->type) : -1;
  if (npy < 0) return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)r->value);
  npy_intp dims[NPY_MAXDIMS];
  if (r->rank > NPY_MAXDIMS) return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)r->value);
  size_t nbytes = ItemSize(npy);
  for (size_t d = 0; d < r->rank; ++d) {
    dims[d] = (npy_intp)r->shape[d];
    nbytes *= (size_t)r->shape[d];
  }
  if (nbytes <= COPY_LIMIT_BYTES) {
    PyObject* arr = PyArray_SimpleNew((int)r->rank, dims, npy);
    if (arr == NULL) return NULL;
    if (nbytes) memcpy(PyArray_DATA((PyArrayObject*)arr), r->data, nbytes);
    g_api->ValueRelease(r->value);
    return arr;
  }
  PyObject* arr = PyArray_SimpleNewFromData((int)r->rank, dims, npy, r->data);
  if (arr == NULL) return NULL;
  PyObject* base = PyCapsule_New(r->value, "onyxruntime.OnyxValue", ReleaseValueCapsule);
  if (base == NULL || PyArray_SetBaseObject((PyArrayObject*)arr, base) < 0) {
    Py_XDECREF(base);
    Py_DECREF(arr);
    return NULL;
  }
  return arr;
}

/* run(output_names, feeds, run_options_address) -> list, or None when the
 * call is not one this path handles (Python's paths then take it). */
static PyObject* Runner_run(Runner* self, PyObject* args) {
  PyObject *output_names, *feeds;
  unsigned long long ro_address;
  if (!PyArg_ParseTuple(args, "OOK", &output_names, &feeds, &ro_address)) return NULL;
  if (!PyDict_CheckExact(feeds) || PyDict_GET_SIZE(feeds) > self->n_feeds) Py_RETURN_NONE;

  size_t in_idx_stack[STACK_ARGS], out_idx_stack[STACK_ARGS];
  OnyxTensorArg args_stack[STACK_ARGS];
  OnyxTensorResult results_stack[STACK_ARGS];
  const Py_ssize_t n_in = PyDict_GET_SIZE(feeds);
  Py_ssize_t n_out = self->n_outputs;
  const int explicit_outputs = output_names != Py_None && PyObject_IsTrue(output_names) == 1;
  PyObject* out_seq = NULL;
  if (explicit_outputs) {
    if (!PyList_CheckExact(output_names) && !PyTuple_CheckExact(output_names)) Py_RETURN_NONE;
    out_seq = output_names;
    n_out = PySequence_Fast_GET_SIZE(out_seq);
    if (n_out > self->n_outputs) Py_RETURN_NONE;
  }
  size_t* in_idx = in_idx_stack;
  size_t* out_idx = out_idx_stack;
  OnyxTensorArg* targs = args_stack;
  OnyxTensorResult* results = results_stack;
  PyObject* ret = NULL;
  int handled = 1;
  if (n_in > STACK_ARGS || n_out > STACK_ARGS) {
    in_idx = (size_t*)PyMem_Malloc(sizeof(size_t) * (size_t)(n_in + 1));
    out_idx = (size_t*)PyMem_Malloc(sizeof(size_t) * (size_t)(n_out + 1));
    targs = (OnyxTensorArg*)PyMem_Malloc(sizeof(OnyxTensorArg) * (size_t)(n_in + 1));
    results = (OnyxTensorResult*)PyMem_Malloc(sizeof(OnyxTensorResult) * (size_t)(n_out + 1));
    if (!in_idx || !out_idx || !targs || !results) {
      PyErr_NoMemory();
      goto done;
    }
  }
  if (out_seq != NULL) {
    for (Py_ssize_t k = 0; k < n_out; ++k) {
      PyObject* pos = PyDict_GetItemWithError(self->output_index, PySequence_Fast_GET_ITEM(out_seq, k));
      if (pos == NULL) {
        /* an unhashable or unknown name: Python's path reports it */
        PyErr_Clear();
        handled = 0;
        goto done;
      }
      out_idx[k] = (size_t)PyLong_AsSsize_t(pos);
    }
  }
  Py_ssize_t pos = 0, k = 0, required = 0;
  PyObject *name, *value;
  while (PyDict_Next(feeds, &pos, &name, &value)) {
    PyObject* where = PyDict_GetItemWithError(self->feed_index, name);
    if (where == NULL || !PyArray_CheckExact(value)) {
      PyErr_Clear();
      handled = 0;
      goto done;
    }
    PyArrayObject* arr = (PyArrayObject*)value;
    const int32_t code = NumpyToOnyx(PyArray_TYPE(arr));
    if (code == 0 || !PyArray_ISCARRAY_RO(arr) || !PyArray_ISNOTSWAPPED(arr)) {
      handled = 0;
      goto done;
    }
    const Py_ssize_t i = PyLong_AsSsize_t(where);
    if (i < self->n_required) ++required;
    in_idx[k] = (size_t)i;
    targs[k].data = PyArray_DATA(arr);
    targs[k].data_bytes = (size_t)PyArray_NBYTES(arr);
    targs[k].shape = (const int64_t*)PyArray_DIMS(arr); /* npy_intp is int64_t here (checked at init) */
    targs[k].rank = (size_t)PyArray_NDIM(arr);
    targs[k].type = (OnyxElementType)code;
    ++k;
  }
  if (required != self->n_required) {
    handled = 0;  /* a missing input: Python's path names it */
    goto done;
  }
  OnyxStatus* status;
  /* The dict holds the arrays for the whole call, so their buffers stay put
   * while the GIL is released. */
  Py_BEGIN_ALLOW_THREADS
  status = g_api->SessionRunTensors(self->session, (const OnyxRunOptions*)(uintptr_t)ro_address, in_idx, targs,
                                    (size_t)n_in, out_seq != NULL ? out_idx : NULL, (size_t)n_out, results);
  Py_END_ALLOW_THREADS
  if (status != NULL) {
    RaiseStatus(status);
    goto done;
  }
  ret = PyList_New(n_out);
  Py_ssize_t converted = 0;
  if (ret != NULL) {
    for (; converted < n_out; ++converted) {
      PyObject* o = ConvertResult(&results[converted]);
      if (o == NULL) break;
      PyList_SET_ITEM(ret, converted, o);
    }
  }
  if (ret == NULL || converted < n_out) {
    /* values not yet handed to Python would leak */
    for (Py_ssize_t j = converted; j < n_out; ++j) g_api->ValueRelease(results[j].value);
    Py_CLEAR(ret);
  }
done:
  if (in_idx != in_idx_stack) {
    PyMem_Free(in_idx);
    PyMem_Free(out_idx);
    PyMem_Free(targs);
    PyMem_Free(results);
  }
  if (ret == NULL && !PyErr_Occurred() && !handled) Py_RETURN_NONE;
  return ret;
}

static PyMethodDef Runner_methods[] = {
    {"run", (PyCFunction)Runner_run, METH_VARARGS,
     "run(output_names, feeds, run_options_address) -> list of outputs, or None when not handled here"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject RunnerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "onyxruntime.capi._onyx_fast.Runner",
    .tp_basicsize = sizeof(Runner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Runner(session_address, owner, feed_names, n_required, output_names): the run hot path of one session",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Runner_init,
    .tp_dealloc = (destructor)Runner_dealloc,
    .tp_methods = Runner_methods,
};

/* init(api_address, api_version, exception_for_code) */
static PyObject* ModuleInit(PyObject* self, PyObject* args) {
  unsigned long long address;
  unsigned int version;
  PyObject* factory;
  (void)self;
  if (!PyArg_ParseTuple(args, "KIO", &address, &version, &factory)) return NULL;
  if (version < 4) {
    PyErr_Format(PyExc_ImportError, "onyxruntime's C extension needs API version 4 or later, got %u", version);
    return NULL;
  }
  g_api = (const OnyxApi*)(uintptr_t)address;
  Py_INCREF(factory);
  Py_XSETREF(g_exception_for_code, factory);
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"init", ModuleInit, METH_VARARGS, "init(api_address, api_version, exception_for_code)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_onyx_fast",
                                        "InferenceSession.run's hot path in C (see capi/_fastrun.py).", -1,
                                        module_methods};

PyMODINIT_FUNC PyInit__onyx_fast(void) {
  if (sizeof(npy_intp) != sizeof(int64_t)) {
    PyErr_SetString(PyExc_ImportError, "onyxruntime's C extension needs a 64-bit npy_intp");
    return NULL;
  }
  import_array();
  if (PyType_Ready(&RunnerType) < 0) return NULL;
  PyObject* m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  Py_INCREF(&RunnerType);
  if (PyModule_AddObject(m, "Runner", (PyObject*)&RunnerType) < 0) {
    Py_DECREF(&RunnerType);
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
