/* substrate._native: one event sealed into a frame, and written, in one call (the
 * per-append path).
 *
 * Sealer(key, key_id).seal(entry_id, ts, agent, kind, content, attrs, prev_hash, nonce)
 * returns (frame bytes, frame hash), byte for byte what substrate.codec.seal's Python
 * path returns: the XML record of substrate.xmlcodec.encode_event, the msgpack header
 * of substrate.frame.pack_header, AES-256-GCM with the header as associated data, and
 * the CRC-32 prefix and SHA-256 chain hash of substrate.frame.build_frame.
 *
 * It returns None for anything off the common path (a str or dict subclass, a mapping
 * that is not a dict, a lone surrogate, a character XML 1.0 cannot carry, an empty
 * agent, a ts that is not finite, a header or body over its limit): the caller then
 * runs the Python path, which seals it or raises the error that names the field. So
 * what is refused, and how, is decided in one place.
 *
 * Sealer.append seals the same way and writes the frame (see Sealer_append).
 *
 * The GIL is held while a frame is sealed, so no two calls use a Sealer's cipher
 * context at once; append releases it only around write(), as os.write does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <zlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define NONCE_BYTES 12
#define HASH_BYTES 32
#define TAG_BYTES 16
#define MAX_HEADER 65535

typedef struct {
    PyObject_HEAD
    EVP_CIPHER_CTX *ctx;
    EVP_MD_CTX *md_ctx; /* reused for each frame's hash: no fetch or allocation per call */
    EVP_MD *sha256;
    unsigned long key_id;
} Sealer;

/* -- the XML record ------------------------------------------------------------------ */

typedef struct {
    const char *s;
    Py_ssize_t n;
} Text;

/* Byte classes: 0 copied as it is; 1 escaped in text and attributes (& < > CR LF);
 * 2 escaped in attributes only (" TAB); 3 a C0 control XML 1.0 cannot carry; 4 the
 * first byte of U+FFFE or U+FFFF (EF BF BE/BF), which it cannot carry either. Filled
 * by the module's init. */
static unsigned char CLASS[256];
/* The most one byte grows to ("&quot;"). */
#define GROWTH 6

static void fill_classes(void) {
    for (int c = 0; c < 0x20; c++) CLASS[c] = 3;
    CLASS['&'] = CLASS['<'] = CLASS['>'] = CLASS['\r'] = CLASS['\n'] = 1;
    CLASS['"'] = CLASS['\t'] = 2;
    CLASS[0xEF] = 4;
}

/* The first byte at or after `p` whose CLASS is not 0, or `end` (in text mode it may
 * also pass a '"', which text copies as it is). Sixteen bytes at a time where SSE2 is
 * there (every x86-64): a chunk with no byte below 0x20, none of & < > (nor '"' in
 * attribute mode) and no 0xEF is passed whole. */
static const unsigned char *plain_run(const unsigned char *p, const unsigned char *end,
                                      int attr) {
#ifdef __SSE2__
    const __m128i space = _mm_set1_epi8(0x20), amp = _mm_set1_epi8('&'),
        lt = _mm_set1_epi8('<'), gt = _mm_set1_epi8('>'), quot = _mm_set1_epi8('"'),
        ef = _mm_set1_epi8((char)0xEF);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        /* below 0x20 (unsigned): max(v, 0x20) != v */
        __m128i hit = _mm_xor_si128(_mm_cmpeq_epi8(_mm_max_epu8(v, space), v),
                                    _mm_set1_epi8(-1));
        hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, amp));
        hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, lt));
        hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, gt));
        hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, ef));
        if (attr) hit = _mm_or_si128(hit, _mm_cmpeq_epi8(v, quot));
        if (_mm_movemask_epi8(hit)) break;
        p += 16;
    }
#endif
    while (p < end && CLASS[*p] == 0) p++;
    return p;
}

static char *put(char *w, const char *s, size_t n) {
    memcpy(w, s, n);
    return w + n;
}

/* `t` escaped at `w` (attribute mode also escapes '"' and TAB); the end of what was
 * written, or NULL if `t` holds a byte or character XML 1.0 cannot carry. */
static char *put_escaped(char *w, Text t, int attr) {
    const unsigned char *p = (const unsigned char *)t.s, *end = p + t.n;
    while (p < end) {
        const unsigned char *run = p;
        p = plain_run(p, end, attr);
        w = put(w, (const char *)run, (size_t)(p - run));
        if (p == end) break;
        unsigned char c = *p++;
        switch (CLASS[c]) {
        case 3: return NULL;
        case 4:
            if (end - p >= 2 && p[0] == 0xBF && (p[1] == 0xBE || p[1] == 0xBF)) return NULL;
            *w++ = (char)c;
            continue;
        case 2:
            if (!attr) { *w++ = (char)c; continue; }
            break;
        }
        switch (c) {
        case '&': w = put(w, "&amp;", 5); break;
        case '<': w = put(w, "&lt;", 4); break;
        case '>': w = put(w, "&gt;", 4); break;
        case '\r': w = put(w, "&#13;", 5); break;
        case '\n': w = put(w, "&#10;", 5); break;
        case '"': w = put(w, "&quot;", 6); break;
        default: w = put(w, "&#9;", 4); break; /* TAB */
        }
    }
    return w;
}

/* The texts of one event, and the UTF-8 copies made for them. */
#define MAX_ATTRS 64
typedef struct {
    PyObject *held[3 + 2 * MAX_ATTRS];
    int n_held;
} Held;

/* The UTF-8 of an exact str, or 0 (with no exception set) for anything else. An ASCII
 * str is its own UTF-8; another is encoded into a bytes object kept in `held` until the
 * call ends (PyUnicode_AsUTF8AndSize would cache the copy on the str for its lifetime:
 * twice the memory of every non-ASCII text the caller keeps). */
static int utf8_of(PyObject *o, Text *t, Held *held) {
    if (!PyUnicode_CheckExact(o)) return 0;
    if (PyUnicode_IS_COMPACT_ASCII(o)) {
        t->s = (const char *)PyUnicode_DATA(o);
        t->n = PyUnicode_GET_LENGTH(o);
        return 1;
    }
    PyObject *b = PyUnicode_AsUTF8String(o);
    if (b == NULL) { PyErr_Clear(); return 0; } /* a lone surrogate */
    held->held[held->n_held++] = b;
    t->s = PyBytes_AS_STRING(b);
    t->n = PyBytes_GET_SIZE(b);
    return 1;
}

/* -- the msgpack header ------------------------------------------------------------- */

static unsigned char *pack_uint(unsigned char *w, unsigned long long v) {
    if (v < 0x80) { *w++ = (unsigned char)v; return w; }
    int bytes;
    if (v <= 0xFF) { *w++ = 0xcc; bytes = 1; }
    else if (v <= 0xFFFF) { *w++ = 0xcd; bytes = 2; }
    else if (v <= 0xFFFFFFFFULL) { *w++ = 0xce; bytes = 4; }
    else { *w++ = 0xcf; bytes = 8; }
    for (int i = bytes - 1; i >= 0; i--) *w++ = (unsigned char)(v >> (8 * i));
    return w;
}

static size_t uint_len(unsigned long long v) {
    return v < 0x80 ? 1 : v <= 0xFF ? 2 : v <= 0xFFFF ? 3 : v <= 0xFFFFFFFFULL ? 5 : 9;
}

static size_t str_len(Py_ssize_t n) {
    return (size_t)n + (n < 32 ? 1 : n <= 0xFF ? 2 : n <= 0xFFFF ? 3 : 5);
}

static unsigned char *pack_str(unsigned char *w, Text t) {
    size_t n = (size_t)t.n;
    if (n < 32) *w++ = (unsigned char)(0xa0 | n);
    else if (n <= 0xFF) { *w++ = 0xd9; *w++ = (unsigned char)n; }
    else if (n <= 0xFFFF) { *w++ = 0xda; *w++ = (unsigned char)(n >> 8); *w++ = (unsigned char)n; }
    else {
        *w++ = 0xdb;
        for (int i = 3; i >= 0; i--) *w++ = (unsigned char)(n >> (8 * i));
    }
    memcpy(w, t.s, n);
    return w + n;
}

static unsigned char *pack_double(unsigned char *w, double d) {
    unsigned long long bits;
    memcpy(&bits, &d, 8);
    *w++ = 0xcb;
    for (int i = 7; i >= 0; i--) *w++ = (unsigned char)(bits >> (8 * i));
    return w;
}

static void put_le32(unsigned char *w, unsigned long v) {
    for (int i = 0; i < 4; i++) w[i] = (unsigned char)(v >> (8 * i));
}

/* -- Sealer -------------------------------------------------------------------------- */

static int Sealer_init(Sealer *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"key", "key_id", NULL};
    Py_buffer key;
    unsigned long key_id;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*k", kwlist, &key, &key_id)) return -1;
    if (key.len != 32 || key_id < 1 || key_id > 0xFFFF) {
        PyBuffer_Release(&key);
        PyErr_SetString(PyExc_ValueError, "a Sealer takes a 32-byte key and a key id in 1..65535");
        return -1;
    }
    if (self->ctx == NULL) self->ctx = EVP_CIPHER_CTX_new();
    if (self->md_ctx == NULL) self->md_ctx = EVP_MD_CTX_new();
    if (self->sha256 == NULL) self->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    int ok = self->ctx != NULL && self->md_ctx != NULL && self->sha256 != NULL
        && EVP_EncryptInit_ex(self->ctx, EVP_aes_256_gcm(), NULL, key.buf, NULL) == 1;
    PyBuffer_Release(&key);
    if (!ok) {
        PyErr_SetString(PyExc_RuntimeError, "OpenSSL could not set up AES-256-GCM");
        return -1;
    }
    self->key_id = key_id;
    return 0;
}

static void Sealer_dealloc(Sealer *self) {
    if (self->ctx != NULL) EVP_CIPHER_CTX_free(self->ctx); /* cleanses the key schedule */
    if (self->md_ctx != NULL) EVP_MD_CTX_free(self->md_ctx);
    if (self->sha256 != NULL) EVP_MD_free(self->sha256);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The frame of the event in args[0..7] (a new reference) with its hash in `digest`;
 * a new reference to None when the event is off the common path; NULL on an error. */
static PyObject *seal_frame(Sealer *self, PyObject *const *args,
                            unsigned char digest[HASH_BYTES]) {
    PyObject *id_o = args[0], *ts_o = args[1], *attrs = args[5];
    PyObject *prev = args[6], *nonce = args[7], *result = NULL;
    Text agent, kind, content, keys[MAX_ATTRS], values[MAX_ATTRS];
    Held held;
    held.n_held = 0;
    char *xml = NULL, *ts_text = NULL;
    if (!PyLong_CheckExact(id_o) || !PyFloat_CheckExact(ts_o)
        || !PyBytes_CheckExact(prev) || PyBytes_GET_SIZE(prev) != HASH_BYTES
        || !PyBytes_CheckExact(nonce) || PyBytes_GET_SIZE(nonce) != NONCE_BYTES
        || !utf8_of(args[2], &agent, &held) || agent.n == 0
        || !utf8_of(args[3], &kind, &held) || kind.n == 0
        || !utf8_of(args[4], &content, &held))
        goto fallback;
    long long entry_id = PyLong_AsLongLong(id_o);
    if (entry_id < 1) { PyErr_Clear(); goto fallback; }
    double ts = PyFloat_AS_DOUBLE(ts_o);
    if (!isfinite(ts)) goto fallback;

    Py_ssize_t n_attrs = 0;
    if (attrs != Py_None) {
        if (!PyDict_CheckExact(attrs) || PyDict_GET_SIZE(attrs) > MAX_ATTRS) goto fallback;
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(attrs, &pos, &k, &v)) {
            if (!utf8_of(k, &keys[n_attrs], &held) || !utf8_of(v, &values[n_attrs], &held))
                goto fallback;
            n_attrs++;
        }
    }

    /* the record, into a buffer of the most it can take */
    char id_text[24];
    int id_len = 0;
    for (unsigned long long v = (unsigned long long)entry_id; v; v /= 10)
        id_text[sizeof id_text - 1 - id_len++] = (char)('0' + v % 10);
    memmove(id_text, id_text + sizeof id_text - id_len, (size_t)id_len);
    ts_text = PyOS_double_to_string(ts, 'r', 0, Py_DTSF_ADD_DOT_0, NULL); /* repr(ts) */
    if (ts_text == NULL) goto done;
    size_t ts_len = strlen(ts_text);
    static const char HEAD0[] = "<event id=\"", HEAD1[] = "\" ts=\"", HEAD2[] = "\" agent=\"",
        HEAD3[] = "\" kind=\"", HEAD4[] = "\"><content>", EMPTY[] = "</content><attrs/></event>",
        ATTRS0[] = "</content><attrs>", ATTR0[] = "<attr name=\"", ATTR1[] = "\">",
        ATTR2[] = "</attr>", ATTRS1[] = "</attrs></event>";
#define LIT(s) (sizeof(s) - 1)
    size_t text = (size_t)(agent.n + kind.n + content.n);
    for (Py_ssize_t i = 0; i < n_attrs; i++) text += (size_t)(keys[i].n + values[i].n);
    size_t most = LIT(HEAD0) + LIT(HEAD1) + LIT(HEAD2) + LIT(HEAD3) + LIT(HEAD4) + LIT(EMPTY)
        + LIT(ATTRS0) + LIT(ATTRS1) + (size_t)id_len + ts_len + GROWTH * text
        + (size_t)n_attrs * (LIT(ATTR0) + LIT(ATTR1) + LIT(ATTR2));
    char *w = xml = PyMem_Malloc(most);
    if (xml == NULL) { PyErr_NoMemory(); goto done; }
    w = put(w, HEAD0, LIT(HEAD0)); w = put(w, id_text, (size_t)id_len);
    w = put(w, HEAD1, LIT(HEAD1)); w = put(w, ts_text, ts_len);
    w = put(w, HEAD2, LIT(HEAD2));
    if ((w = put_escaped(w, agent, 1)) == NULL) goto fallback;
    w = put(w, HEAD3, LIT(HEAD3));
    if ((w = put_escaped(w, kind, 1)) == NULL) goto fallback;
    w = put(w, HEAD4, LIT(HEAD4));
    if ((w = put_escaped(w, content, 0)) == NULL) goto fallback;
    if (n_attrs == 0) {
        w = put(w, EMPTY, LIT(EMPTY));
    } else {
        w = put(w, ATTRS0, LIT(ATTRS0));
        for (Py_ssize_t i = 0; i < n_attrs; i++) {
            w = put(w, ATTR0, LIT(ATTR0));
            if ((w = put_escaped(w, keys[i], 1)) == NULL) goto fallback;
            w = put(w, ATTR1, LIT(ATTR1));
            if ((w = put_escaped(w, values[i], 0)) == NULL) goto fallback;
            w = put(w, ATTR2, LIT(ATTR2));
        }
        w = put(w, ATTRS1, LIT(ATTRS1));
    }
#undef LIT
    size_t xml_len = (size_t)(w - xml);
    size_t header_len = 1 + uint_len((unsigned long long)entry_id) + 9 + str_len(agent.n)
        + str_len(kind.n) + uint_len(self->key_id) + 2 + NONCE_BYTES + 2 + HASH_BYTES;
    size_t body_len = 2 + header_len + xml_len + TAG_BYTES;
    if (header_len > MAX_HEADER || body_len > 0xFFFFFFFFULL || xml_len > INT_MAX)
        goto fallback;

    /* the frame: prefix (length, crc), header length, header, ciphertext and tag */
    PyObject *frame = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(8 + body_len));
    if (frame == NULL) goto done;
    unsigned char *f = (unsigned char *)PyBytes_AS_STRING(frame);
    unsigned char *body = f + 8, *hdr = body + 2, *h = hdr;
    body[0] = (unsigned char)header_len; body[1] = (unsigned char)(header_len >> 8);
    *h++ = 0x97;
    h = pack_uint(h, (unsigned long long)entry_id);
    h = pack_double(h, ts);
    h = pack_str(h, agent);
    h = pack_str(h, kind);
    h = pack_uint(h, self->key_id);
    *h++ = 0xc4; *h++ = NONCE_BYTES; memcpy(h, PyBytes_AS_STRING(nonce), NONCE_BYTES);
    h += NONCE_BYTES;
    *h++ = 0xc4; *h++ = HASH_BYTES; memcpy(h, PyBytes_AS_STRING(prev), HASH_BYTES);
    h += HASH_BYTES;
    int out_len, ok = EVP_EncryptInit_ex(self->ctx, NULL, NULL, NULL,
                                         (const unsigned char *)PyBytes_AS_STRING(nonce)) == 1
        && EVP_EncryptUpdate(self->ctx, NULL, &out_len, hdr, (int)header_len) == 1
        && EVP_EncryptUpdate(self->ctx, h, &out_len, (unsigned char *)xml, (int)xml_len) == 1
        && EVP_EncryptFinal_ex(self->ctx, h + out_len, &out_len) == 1
        && EVP_CIPHER_CTX_ctrl(self->ctx, EVP_CTRL_GCM_GET_TAG, TAG_BYTES, h + xml_len) == 1;
    if (!ok) {
        Py_DECREF(frame);
        PyErr_SetString(PyExc_RuntimeError, "OpenSSL failed to seal a frame");
        goto done;
    }
    put_le32(f, (unsigned long)body_len);
    put_le32(f + 4, crc32(crc32(0L, Z_NULL, 0), body, (uInt)body_len));
    unsigned int digest_len = 0;
    if (EVP_DigestInit_ex2(self->md_ctx, self->sha256, NULL) != 1
        || EVP_DigestUpdate(self->md_ctx, body, body_len) != 1
        || EVP_DigestFinal_ex(self->md_ctx, digest, &digest_len) != 1) {
        Py_DECREF(frame);
        PyErr_SetString(PyExc_RuntimeError, "OpenSSL failed to hash a frame");
        goto done;
    }
    result = frame;
    goto done;

fallback: /* off the common path: the Python path seals it or names what is wrong */
    result = Py_None;
    Py_INCREF(result);
done:
    PyMem_Free(xml);
    PyMem_Free(ts_text);
    for (int i = 0; i < held.n_held; i++) Py_DECREF(held.held[i]);
    return result;
}

static PyObject *Sealer_seal(Sealer *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError,
                        "seal(entry_id, ts, agent, kind, content, attrs, prev_hash, nonce)");
        return NULL;
    }
    unsigned char digest[HASH_BYTES];
    PyObject *frame = seal_frame(self, args, digest);
    if (frame == NULL || frame == Py_None) return frame;
    return Py_BuildValue("(Ny#)", frame, digest, (Py_ssize_t)HASH_BYTES);
}

/* append(fd, size, room, <seal's eight arguments>): seal the event and write its frame
 * to `fd`, a segment file opened O_APPEND to which this substrate wrote `size` bytes.
 * Returns (frame length, frame hash) once all of it is written; None, having written
 * nothing, when the event is off the common path or its frame is longer than `room`
 * (room < 0: any length); or, having written nothing, the file's length when it is not
 * `size` (another process wrote to it or cut it). Raises OSError when the write fails
 * (a short write is EIO): part of the frame may then be in the file, for the caller to
 * cut. The GIL is released around write(), as os.write does. */
static PyObject *Sealer_append(Sealer *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "append(fd, size, room, entry_id, ts, agent, kind, "
                                         "content, attrs, prev_hash, nonce)");
        return NULL;
    }
    long fd_l = PyLong_AsLong(args[0]);
    long long size = PyLong_AsLongLong(args[1]), room = PyLong_AsLongLong(args[2]);
    if (PyErr_Occurred()) return NULL;
    if (fd_l < 0 || fd_l > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "append: fd must be an open file descriptor");
        return NULL;
    }
    int fd = (int)fd_l;
    unsigned char digest[HASH_BYTES];
    PyObject *frame = seal_frame(self, args + 3, digest);
    if (frame == NULL || frame == Py_None) return frame;
    Py_ssize_t length = PyBytes_GET_SIZE(frame);
    if (room >= 0 && length > room) {
        Py_DECREF(frame);
        Py_RETURN_NONE;
    }
    off_t on_disk = lseek(fd, 0, SEEK_END);
    if (on_disk < 0) {
        Py_DECREF(frame);
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    if ((long long)on_disk != size) {
        Py_DECREF(frame);
        return PyLong_FromLongLong((long long)on_disk);
    }
    ssize_t n;
    int err;
    do {
        Py_BEGIN_ALLOW_THREADS
        n = write(fd, PyBytes_AS_STRING(frame), (size_t)length);
        err = errno;
        Py_END_ALLOW_THREADS
    } while (n < 0 && err == EINTR && PyErr_CheckSignals() == 0);
    Py_DECREF(frame);
    if (n < 0) {
        if (!PyErr_Occurred()) {
            errno = err;
            PyErr_SetFromErrno(PyExc_OSError);
        }
        return NULL;
    }
    if (n != length) {
        errno = EIO; /* regular files: the disk is full */
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return Py_BuildValue("(ny#)", length, digest, (Py_ssize_t)HASH_BYTES);
}

static PyMethodDef Sealer_methods[] = {
    {"seal", (PyCFunction)(void (*)(void))Sealer_seal, METH_FASTCALL,
     "seal(entry_id, ts, agent, kind, content, attrs, prev_hash, nonce) -> "
     "(frame, hash) or None (see the module)"},
    {"append", (PyCFunction)(void (*)(void))Sealer_append, METH_FASTCALL,
     "append(fd, size, room, entry_id, ts, agent, kind, content, attrs, prev_hash, nonce) "
     "-> (frame length, hash), None or the file's length (see Sealer_append)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SealerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "substrate._native.Sealer",
    .tp_basicsize = sizeof(Sealer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Seals events into frames with one AES-256-GCM key (see the module).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Sealer_init,
    .tp_dealloc = (destructor)Sealer_dealloc,
    .tp_methods = Sealer_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "substrate._native",
    "One event sealed into a frame in one call (see substrate/_native.c).", -1, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    fill_classes();
    if (PyType_Ready(&SealerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&SealerType);
    if (PyModule_AddObject(m, "Sealer", (PyObject *)&SealerType) < 0) {
        Py_DECREF(&SealerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
