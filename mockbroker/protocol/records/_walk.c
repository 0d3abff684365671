/* The structural walk of a v2 records section in C: record.check_records_python, byte for byte.
 *
 * Optional: built by setuptools where a compiler is (setup.py, optional=True); record.py falls back to
 * the Python walker without it, or under MOCKBROKER_PURE_PYTHON=1. Limited API only (Py_LIMITED_API
 * 3.11, set in setup.py): one abi3 binary wheel per platform serves every CPython from 3.11 on. The Python walker is the reference:
 * this file follows it step by step (the same reads, in the same order, the same error at the same
 * point with the same message), and tests/protocol/test_records_walk_c.py holds the two to each other.
 *
 *   check_records(data, count, keys_required, timestamp_deltas, /)
 *     data: a bytes-like object (the buffer protocol, contiguous); count: an int; keys_required: truthy;
 *     timestamp_deltas: None or (low, high), ints of any size.
 *   -> (errors, max_timestamp_delta) as check_records_python returns them, or a str: the message of the
 *      InvalidRecordError that the Python walker raises (the wrapper in record.py raises it).
 *
 * Every read is bounds-checked against the whole buffer (the Python walker's IndexError, "premature
 * EOF"); positions are 64-bit and grow by at most 2**31 per step before they are checked, so nothing
 * overflows. The GIL is held throughout (the walk is one pass, and stops at the first error).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define MIN_RECORD_BODY 6

enum { WALK_OK = 0, WALK_EOF = 1, WALK_ERROR = 2, WALK_PYERR = 3 };

typedef struct {
    const unsigned char *data;
    int64_t size;
    PyObject *message; /* the error's message (a new reference) once WALK_ERROR */
} Walk;

static int fail(Walk *w, PyObject *message)
{
    if (message == NULL)
        return WALK_PYERR;
    w->message = message;
    return WALK_ERROR;
}

static inline int64_t zigzag(uint64_t raw)
{
    return (int64_t)((raw >> 1) ^ (~(raw & 1) + 1));
}

/* _slow_varint: the raw value of a varint (bits 32: at most 5 bytes; 64: 10) at data[*pos]. */
static int slow_varint(Walk *w, int64_t *pos, int bits, uint64_t *out)
{
    uint64_t result = 0;
    int64_t p = *pos;
    for (int shift = 0; shift < bits; shift += 7) {
        if (p < 0 || p >= w->size)
            return WALK_EOF;
        unsigned int b = w->data[p++];
        result |= (uint64_t)(b & 0x7F) << shift;
        if (b < 0x80) {
            if (bits - shift < 7 && (b >> (bits - shift)) != 0)
                return fail(w, PyUnicode_FromFormat(
                    "Found invalid record structure: varint out of range at offset %lld", (long long)p));
            *pos = p;
            *out = result;
            return WALK_OK;
        }
    }
    return fail(w, PyUnicode_FromFormat("Found invalid record structure: varint too long at offset %lld",
                                        (long long)p));
}

/* The check_records fast path of a varint at data[*pos]: one byte, two bytes, else slow_varint. */
static inline int varint(Walk *w, int64_t *pos, int bits, uint64_t *out)
{
    int64_t p = *pos;
    if (p < 0 || p >= w->size)
        return WALK_EOF;
    unsigned int b = w->data[p];
    if (b < 0x80) {
        *pos = p + 1;
        *out = b;
        return WALK_OK;
    }
    if (p + 1 >= w->size)
        return WALK_EOF;
    unsigned int c = w->data[p + 1];
    if (c < 0x80) {
        *pos = p + 2;
        *out = (b & 0x7F) | (c << 7);
        return WALK_OK;
    }
    return slow_varint(w, pos, bits, out);
}

/* _skip_headers: past header_count headers at data[*pos], inside a record ending at end. */
static int skip_headers(Walk *w, int64_t *pos, int64_t end, int64_t header_count)
{
    int64_t p = *pos;
    uint64_t raw;
    int rc;
    if (header_count < 0)
        return fail(w, PyUnicode_FromFormat("Found invalid number of record headers %lld", (long long)header_count));
    if (header_count > end - p)
        return fail(w, PyUnicode_FromFormat(
            "Found invalid number of record headers. %lld is larger than the remaining size of the buffer",
            (long long)header_count));
    for (int64_t i = 0; i < header_count; i++) {
        if ((rc = slow_varint(w, &p, 32, &raw)) != WALK_OK)
            return rc;
        int64_t key_len = zigzag(raw);
        if (key_len < 0)
            return fail(w, PyUnicode_FromFormat("Invalid negative header key size %lld", (long long)key_len));
        p += key_len;
        if ((rc = slow_varint(w, &p, 32, &raw)) != WALK_OK)
            return rc;
        int64_t value_len = zigzag(raw);
        if (value_len > 0)
            p += value_len;
        if (p > end)
            return fail(w, PyUnicode_FromString("Found invalid record structure: a header runs past the record"));
    }
    *pos = p;
    return WALK_OK;
}

/* The bounds of the timestamp deltas, as int64 (the Python ints may lie outside it). */
typedef struct {
    int check;   /* timestamp_deltas given */
    int none_in; /* no int64 lies inside the bounds */
    int64_t low, high;
} Bounds;

static int read_bound(PyObject *value, int64_t *out, int *overflow)
{
    long long v = PyLong_AsLongLongAndOverflow(value, overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    *out = *overflow < 0 ? INT64_MIN : *overflow > 0 ? INT64_MAX : (int64_t)v;
    return 0;
}

static int read_bounds(PyObject *deltas, Bounds *bounds)
{
    PyObject *low, *high;
    int low_overflow, high_overflow;
    bounds->check = deltas != Py_None;
    bounds->none_in = 0;
    bounds->low = bounds->high = 0;
    if (!bounds->check)
        return 0;
    PyObject *pair = PySequence_Fast(deltas, "timestamp_deltas must be None or (low, high)");
    if (pair == NULL)
        return -1;
    if (PySequence_Size(pair) != 2) {
        PyErr_SetString(PyExc_ValueError, "timestamp_deltas must be None or (low, high)");
        Py_DECREF(pair);
        return -1;
    }
    /* PySequence_GetItem, not the PySequence_Fast_GET_ITEM macro: the limited API (abi3) has no macros
       that read a list's or tuple's insides; the items come back as new references. */
    low = PySequence_GetItem(pair, 0);
    high = PySequence_GetItem(pair, 1);
    int rc = low == NULL || high == NULL
             || read_bound(low, &bounds->low, &low_overflow) < 0 || read_bound(high, &bounds->high, &high_overflow) < 0;
    Py_XDECREF(low);
    Py_XDECREF(high);
    Py_DECREF(pair);
    if (rc)
        return -1;
    bounds->none_in = low_overflow > 0 || high_overflow < 0;
    return 0;
}

static int add_finding(PyObject *found, int64_t index, PyObject *delta /* stolen; NULL on error */)
{
    if (delta == NULL)
        return -1;
    PyObject *item = Py_BuildValue("(LN)", (long long)index, delta);
    if (item == NULL)
        return -1;
    int rc = PyList_Append(found, item);
    Py_DECREF(item);
    return rc;
}

/* The loop of check_records over `count` records; `found` and `max_delta` filled as it goes. */
static int walk_records(Walk *w, int64_t count, int keys_required, const Bounds *bounds, PyObject *found,
                        int *have_max, int64_t *max_delta, int64_t *final_pos)
{
    int64_t pos = 0;
    uint64_t b, key;
    int rc;
    for (int64_t index = 0; index < count; index++) {
        /* length: not negative (raw even), inside the data, at least the smallest body */
        if ((rc = varint(w, &pos, 32, &b)) != WALK_OK)
            return rc;
        int64_t length = (int64_t)(b >> 1);
        int64_t end = pos + length;
        if ((b & 1) || end > w->size || length < MIN_RECORD_BODY) {
            int64_t declared = zigzag(b), remaining = w->size - pos;
            if (declared > remaining)
                return fail(w, PyUnicode_FromFormat(
                    "Invalid record size: expected %lld bytes in record payload, but instead the buffer has only "
                    "%lld remaining bytes.", (long long)declared, (long long)remaining));
            return fail(w, PyUnicode_FromFormat("Found invalid record structure: record %lld declares %lld bytes",
                                                (long long)index, (long long)declared));
        }
        /* attributes (not checked, as Kafka), timestamp delta */
        pos += 1;
        if ((rc = varint(w, &pos, 64, &b)) != WALK_OK)
            return rc;
        int64_t ts_delta = zigzag(b);
        if (!*have_max || ts_delta > *max_delta) {
            *max_delta = ts_delta;
            *have_max = 1;
        }
        /* offset delta: the index (raw 2 * index) */
        if ((rc = varint(w, &pos, 32, &b)) != WALK_OK)
            return rc;
        if (b != (uint64_t)index << 1)
            return fail(w, PyUnicode_FromFormat("Inner record offset delta %lld should be %lld",
                                                (long long)zigzag(b), (long long)index));
        /* key: a negative length (raw odd) is null */
        if ((rc = varint(w, &pos, 32, &key)) != WALK_OK)
            return rc;
        if (!(key & 1)) {
            pos += (int64_t)(key >> 1);
            if (pos > end)
                return fail(w, PyUnicode_FromFormat(
                    "Found invalid record structure: record %lld key runs past the record", (long long)index));
        }
        /* value */
        if ((rc = varint(w, &pos, 32, &b)) != WALK_OK)
            return rc;
        if (!(b & 1)) {
            pos += (int64_t)(b >> 1);
            if (pos > end)
                return fail(w, PyUnicode_FromFormat(
                    "Found invalid record structure: record %lld value runs past the record", (long long)index));
        }
        /* headers: none (one zero byte) is the usual case */
        if (pos >= w->size)
            return WALK_EOF;
        if (w->data[pos]) {
            if ((rc = slow_varint(w, &pos, 32, &b)) != WALK_OK)
                return rc;
            if ((rc = skip_headers(w, &pos, end, zigzag(b))) != WALK_OK)
                return rc;
        } else {
            pos += 1;
        }
        if (pos != end)
            return fail(w, PyUnicode_FromFormat(
                "Invalid record size: expected to read %lld bytes in record payload, but instead read %lld",
                (long long)length, (long long)(length + pos - end)));
        if (keys_required && (key & 1)) {
            Py_INCREF(Py_None);
            if (add_finding(found, index, Py_None) < 0)
                return WALK_PYERR;
        } else if (bounds->check && (bounds->none_in || ts_delta < bounds->low || ts_delta > bounds->high)) {
            if (add_finding(found, index, PyLong_FromLongLong(ts_delta)) < 0)
                return WALK_PYERR;
        }
    }
    *final_pos = pos;
    return WALK_OK;
}

static PyObject *check_records(PyObject *module, PyObject *args)
{
    Py_buffer view;
    PyObject *count_obj, *deltas;
    int keys_required;
    Bounds bounds;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*O!pO:check_records", &view, &PyLong_Type, &count_obj, &keys_required, &deltas))
        return NULL;
    PyObject *result = NULL, *found = NULL;
    int overflow;
    long long count = PyLong_AsLongLongAndOverflow(count_obj, &overflow);
    if (count == -1 && PyErr_Occurred())
        goto done;
    if (overflow)  /* past int64: as many records as the data holds (the walk ends at its end), or none */
        count = overflow > 0 ? INT64_MAX : 0;
    if (read_bounds(deltas, &bounds) < 0)
        goto done;
    found = PyList_New(0);
    if (found == NULL)
        goto done;
    Walk w = {(const unsigned char *)view.buf, (int64_t)view.len, NULL};
    int have_max = 0;
    int64_t max_delta = 0, pos = 0;
    int rc = walk_records(&w, count, keys_required, &bounds, found, &have_max, &max_delta, &pos);
    if (rc == WALK_OK && pos != w.size)
        rc = fail(&w, PyUnicode_FromString("Incorrect declared batch size, records still remaining in file"));
    if (rc == WALK_EOF)
        rc = fail(&w, PyUnicode_FromString("Incorrect declared batch size, premature EOF reached"));
    if (rc == WALK_ERROR)
        result = w.message;
    else if (rc == WALK_OK) {
        if (have_max)
            result = Py_BuildValue("(ON)", found, PyLong_FromLongLong(max_delta));
        else
            result = Py_BuildValue("(OO)", found, Py_None);
    }
done:
    Py_XDECREF(found);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef walk_methods[] = {
    {"check_records", check_records, METH_VARARGS,
     "check_records(data, count, keys_required, timestamp_deltas, /) -> (errors, max_timestamp_delta) | str\n\n"
     "record.check_records_python in C: its findings, or the message of its InvalidRecordError."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef walk_module = {
    PyModuleDef_HEAD_INIT, "_walk", "The structural walk of a v2 records section, in C (see record.py).", -1,
    walk_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__walk(void)
{
    return PyModule_Create(&walk_module);
}
