/* The register path (checkers/linear/registers.py) in C.
 *
 * The same reading of the ops, the same partitions in the same order and the same search,
 * step for step: the same verdicts, steps and configurations as the Python module, which
 * is the reference (tests compare the two) and runs wherever this is not built. What C
 * adds is speed: op fields read at their slots, integers instead of objects, the memo an
 * open-addressing table of bitsets. It gives up (None) wherever the Python module does,
 * and also on a process or key that is not an int, bool or str, and past ``max_memo``
 * bytes of one partition's memo.
 *
 * Every byte it allocates is accounted (``Limits.used``: its arrays, its memo, and an
 * estimate of each entry it puts in a Python dict) before it is taken, against
 * ``max_bytes``, what the check's memory budget has left: past it (or where malloc
 * fails) it stops and says how much it needed, and the check is unknown, never aborted.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include "../../core/struct_slots.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DROPPED (-1)
#define CANNOT (-2)
#define READ 0
#define WRITE 1
#define CAS 2
#define CAS_FAILED 3
#define CAS_ANY 4
#define CERTAIN 8
#define SMALL (1LL << 24)
#define MAX_VALUES (1LL << 26)
#define MASK ((1LL << 26) - 1)
#define SMALL_IDS (1LL << 22) /* processes and keys below this are looked up in arrays */

enum { T_INVOKE, T_OK, T_FAIL, T_INFO };

/* ---- the limits, and the bytes accounted against them ---- */

typedef struct {
    int64_t max_steps;
    int64_t check_every;
    double started, left;  /* left < 0: no deadline */
    Py_ssize_t max_memo;   /* one partition's memo: beyond, this path gives up */
    Py_ssize_t max_bytes;  /* everything allocated: beyond, out of memory (< 0: no limit) */
    Py_ssize_t used;       /* bytes accounted so far */
    Py_ssize_t needed;     /* out of memory: the bytes it would have taken (else 0) */
} Limits;

/* Account ``n`` more bytes: 0, or -1 (``needed`` set) when they would pass ``max_bytes``. */
static int
spend(Limits *lim, Py_ssize_t n)
{
    if (lim->max_bytes >= 0 && lim->used + n > lim->max_bytes) {
        lim->needed = lim->used + n;
        return -1;
    }
    lim->used += n;
    return 0;
}

/* malloc or realloc of ``n`` bytes, ``old`` of them held before (accounted already). NULL
 * when the limit or malloc refuses (``needed`` set either way). */
static void *
grow(Limits *lim, void *p, Py_ssize_t old, Py_ssize_t n)
{
    if (spend(lim, n - old) < 0)
        return NULL;
    void *q = realloc(p, (size_t)(n ? n : 1));
    if (q == NULL) {
        lim->used -= n - old;
        lim->needed = lim->used + n;
    }
    return q;
}

/* free ``p``, of ``n`` accounted bytes. */
static void
release(Limits *lim, void *p, Py_ssize_t n)
{
    free(p);
    if (p != NULL)
        lim->used -= n;
}

#define PY_ENTRY_BYTES 112 /* an entry put in a Python dict: its slot share, key, int */

/* ---- growable arrays ---- */

typedef struct {
    int64_t *v;
    Py_ssize_t n, cap;
} I64s;

static int
i64s_push(Limits *lim, I64s *a, int64_t x)
{
    if (a->n == a->cap) {
        Py_ssize_t cap = a->cap ? 2 * a->cap : 64;
        int64_t *v = grow(lim, a->v, a->cap * (Py_ssize_t)sizeof(int64_t),
                          cap * (Py_ssize_t)sizeof(int64_t));
        if (v == NULL)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

static void
i64s_free(Limits *lim, I64s *a)
{
    release(lim, a->v, a->cap * (Py_ssize_t)sizeof(int64_t));
}

/* Grow ``*a`` (of ``*n`` items) to hold index ``i``, new items set to ``fill``. */
static int
i64s_reach(Limits *lim, int64_t **a, Py_ssize_t *n, Py_ssize_t i, int64_t fill)
{
    if (i < *n)
        return 0;
    Py_ssize_t cap = *n ? *n : 64;
    while (cap <= i)
        cap *= 2;
    int64_t *v = grow(lim, *a, *n * (Py_ssize_t)sizeof(int64_t),
                      cap * (Py_ssize_t)sizeof(int64_t));
    if (v == NULL)
        return -1;
    for (Py_ssize_t j = *n; j < cap; j++)
        v[j] = fill;
    *a = v;
    *n = cap;
    return 0;
}

/* ---- op fields, read at their slots ---- */

typedef struct {
    Py_ssize_t process, type, f, value, key;
} Offsets;

static int
eq_ascii(PyObject *s, const char *lit, Py_ssize_t n)
{
    return PyUnicode_Check(s) && PyUnicode_GET_LENGTH(s) == n &&
           PyUnicode_KIND(s) == PyUnicode_1BYTE_KIND &&
           memcmp(PyUnicode_DATA(s), lit, (size_t)n) == 0;
}

/* ---- values as small integers (registers.py's _Values) ---- */

typedef struct {
    PyObject *ids; /* dict: value -> int */
    int64_t next;
} Values;

/* The value's number, or -1 where it is not a plain scalar (or one too many), -2 on a
 * Python error. */
static int64_t
value_id(Values *vs, PyObject *v)
{
    if (PyLong_CheckExact(v) || PyBool_Check(v)) {
        int overflow = 0;
        long long n = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (!overflow && n >= 0 && n < SMALL - 1)
            return (int64_t)n + 1;
        if (n == -1 && PyErr_Occurred())
            return -2;
    }
    else if (v == Py_None) {
        return 0;
    }
    else if (!PyUnicode_CheckExact(v)) {
        return -1;
    }
    PyObject *got = PyDict_GetItemWithError(vs->ids, v);
    if (got != NULL)
        return (int64_t)PyLong_AsLongLong(got);
    if (PyErr_Occurred())
        return -2;
    int64_t id = SMALL + vs->next;
    if (id >= MAX_VALUES)
        return -1;
    PyObject *n = PyLong_FromLongLong(id);
    if (n == NULL || PyDict_SetItem(vs->ids, v, n) < 0) {
        Py_XDECREF(n);
        return -2;
    }
    Py_DECREF(n);
    vs->next++;
    return id;
}

/* registers.py's _written: what a write or cas wrote (a borrowed reference; NULL with
 * ``*changed`` set when its completion says another value, NULL alone on an error). */
static PyObject *
written(const Offsets *o, PyObject *inv, PyObject *comp, int *changed)
{
    PyObject *v = FIELD(inv, o->value);
    *changed = 0;
    if (v == NULL || comp == NULL)
        return v;
    PyObject *done = FIELD(comp, o->value);
    if (v == Py_None)
        return done;
    if (done == NULL || done == Py_None || done == v)
        return v;
    int eq = PyObject_RichCompareBool(done, v, Py_EQ);
    if (eq < 0)
        return NULL;
    *changed = !eq;
    return eq ? v : NULL;
}

/* registers.py's _code: the code of an invocation and its completion (NULL: it never
 * completed), CANNOT where this path cannot read it, -3 on a Python error. */
static int64_t
entry_code(const Offsets *o, Values *vs, PyObject *inv, PyObject *comp, int t,
           int fail_cas_happened, int nil_read_any)
{
    PyObject *f = FIELD(inv, o->f);
    if (f == NULL)
        return CANNOT;
    if (eq_ascii(f, "read", 4)) {
        if (t != T_OK || comp == NULL)
            return DROPPED;
        PyObject *v = FIELD(comp, o->value);
        if (v == NULL)
            return CANNOT;
        if (v == Py_None && nil_read_any)
            return DROPPED;
        int64_t a = value_id(vs, v);
        if (a == -2)
            return -3;
        return a < 0 ? CANNOT : (READ | CERTAIN | a << 4);
    }
    if (eq_ascii(f, "write", 5)) {
        if (t == T_FAIL)
            return DROPPED;
        int changed;
        PyObject *v = written(o, inv, comp, &changed);
        if (v == NULL)
            return changed || !PyErr_Occurred() ? CANNOT : -3;
        int64_t a = value_id(vs, v);
        if (a == -2)
            return -3;
        if (a < 0)
            return CANNOT;
        return WRITE | (t == T_OK ? CERTAIN : 0) | a << 4;
    }
    if (eq_ascii(f, "cas", 3)) {
        int changed;
        PyObject *raw = written(o, inv, comp, &changed);
        if (raw == NULL && !changed && PyErr_Occurred())
            return -3;
        if (raw == NULL || !PyList_CheckExact(raw) || PyList_GET_SIZE(raw) != 2)
            return CANNOT;
        int64_t a = value_id(vs, PyList_GET_ITEM(raw, 0));
        if (a == -2)
            return -3;
        int64_t b = value_id(vs, PyList_GET_ITEM(raw, 1));
        if (b == -2)
            return -3;
        if (a < 0 || b < 0)
            return CANNOT;
        int64_t ab = a << 4 | b << 30;
        if (t == T_OK)
            return CAS | CERTAIN | ab;
        if (t == T_FAIL)
            return fail_cas_happened ? (CAS_FAILED | CERTAIN | ab) : DROPPED;
        return CAS_ANY | ab;
    }
    return CANNOT;
}

/* ---- the clock ---- */

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the memo: configurations (state, set of linearized entries) ---- */

/* A configuration's set of linearized entries is kept lean. Its bitset numbers the
 * certain entries first (in order of invocation), then the uncertain ones (entries that
 * constrain nothing have no bit), in two segments of whole words; a record keeps, of
 * each segment, the words from the first that is not all ones (``lo``: those below are)
 * to the last that is not zero. The search linearizes entries mostly in order, so a set
 * is mostly a prefix of each segment and a record a few words, where the whole bitset
 * would be a word per 64 entries (quadratic in all). The same sets, so the same
 * verdicts, steps and configurations. */

typedef struct {
    int64_t *slots;   /* index of a record in ``arena``, -1 when empty */
    Py_ssize_t cap;   /* a power of two */
    Py_ssize_t count;
    uint64_t *arena;  /* records of a head (``MEMO_HEAD``) and the words of both sets */
    Py_ssize_t used, size;
} Memo;

#define MEMO_HEAD 4 /* hash, state, lo << 32 | length of the certain and uncertain sets */

/* One segment of a bitset: words ``[start, end)``; ``lo`` the first that is not all
 * ones, ``hi`` one past the last that is not zero (``start`` when none). */
typedef struct {
    Py_ssize_t start, end, lo, hi;
} Seg;

static Py_ssize_t
seg_len(const Seg *g)
{
    return g->hi > g->lo ? g->hi - g->lo : 0;
}

/* A bitset in two segments: the certain entries' and the uncertain ones'. */
typedef struct {
    uint64_t *w;
    Seg a, b;
} Bits;

static void
bits_set(Bits *bs, int64_t pos)
{
    Py_ssize_t i = (Py_ssize_t)(pos >> 6);
    Seg *g = i < bs->a.end ? &bs->a : &bs->b;
    bs->w[i] |= 1ULL << (pos & 63);
    if (i >= g->hi)
        g->hi = i + 1;
    while (g->lo < g->end && bs->w[g->lo] == ~0ULL)
        g->lo++;
}

static void
bits_clear(Bits *bs, int64_t pos)
{
    Py_ssize_t i = (Py_ssize_t)(pos >> 6);
    Seg *g = i < bs->a.end ? &bs->a : &bs->b;
    bs->w[i] &= ~(1ULL << (pos & 63));
    if (i < g->lo)
        g->lo = i;
    while (g->hi > g->start && bs->w[g->hi - 1] == 0)
        g->hi--;
}

static int
memo_init(Memo *m, Limits *lim)
{
    m->cap = 1024;
    m->size = 1024 * (MEMO_HEAD + 2);
    m->slots = grow(lim, NULL, 0, m->cap * (Py_ssize_t)sizeof(int64_t));
    if (m->slots == NULL)
        return -1;
    m->arena = grow(lim, NULL, 0, m->size * (Py_ssize_t)sizeof(uint64_t));
    if (m->arena == NULL) {
        release(lim, m->slots, m->cap * (Py_ssize_t)sizeof(int64_t));
        return -1;
    }
    memset(m->slots, 0xff, (size_t)m->cap * sizeof(int64_t));
    m->count = m->used = 0;
    return 0;
}

static void
memo_free(Memo *m, Limits *lim)
{
    release(lim, m->slots, m->cap * (Py_ssize_t)sizeof(int64_t));
    release(lim, m->arena, m->size * (Py_ssize_t)sizeof(uint64_t));
}

static Py_ssize_t
record_len(const uint64_t *r)
{
    return MEMO_HEAD + (Py_ssize_t)(r[2] & 0xFFFFFFFF) + (Py_ssize_t)(r[3] & 0xFFFFFFFF);
}

static int
memo_grow(Memo *m, Limits *lim)
{
    Py_ssize_t cap = 2 * m->cap;
    int64_t *slots = grow(lim, NULL, 0, cap * (Py_ssize_t)sizeof(int64_t));
    if (slots == NULL)
        return -1;
    memset(slots, 0xff, (size_t)cap * sizeof(int64_t));
    for (Py_ssize_t r = 0; r < m->used; r += record_len(m->arena + r)) {
        Py_ssize_t i = (Py_ssize_t)(m->arena[r] & (uint64_t)(cap - 1));
        while (slots[i] >= 0)
            i = (i + 1) & (cap - 1);
        slots[i] = r;
    }
    release(lim, m->slots, m->cap * (Py_ssize_t)sizeof(int64_t));
    m->slots = slots;
    m->cap = cap;
    return 0;
}

/* Whether ``n`` words are equal (a few, mostly: a loop costs less than memcmp's call). */
static int
words_eq(const uint64_t *a, const uint64_t *b, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        if (a[i] != b[i])
            return 0;
    }
    return 1;
}

/* Whether record ``r`` is (state, the lean set ``bs``). */
static int
record_is(const uint64_t *r, uint64_t hash, int64_t state, const Bits *bs, Py_ssize_t la,
          Py_ssize_t lb)
{
    return r[0] == hash && (int64_t)r[1] == state &&
           r[2] == ((uint64_t)bs->a.lo << 32 | (uint64_t)la) &&
           r[3] == ((uint64_t)bs->b.lo << 32 | (uint64_t)lb) &&
           words_eq(r + MEMO_HEAD, bs->w + bs->a.lo, la) &&
           words_eq(r + MEMO_HEAD + la, bs->w + bs->b.lo, lb);
}

/* Insert (state, the set ``bs``) unless present: 1 when inserted, 0 when present, -1 past
 * ``max_memo`` bytes (this path gives up), -2 out of memory (``lim->needed`` says how
 * much it needed). */
static int
memo_add(Memo *m, Limits *lim, uint64_t hash, int64_t state, const Bits *bs)
{
    Py_ssize_t la = seg_len(&bs->a), lb = seg_len(&bs->b);
    Py_ssize_t i = (Py_ssize_t)(hash & (uint64_t)(m->cap - 1));
    while (m->slots[i] >= 0) {
        if (record_is(m->arena + m->slots[i], hash, state, bs, la, lb))
            return 0;
        i = (i + 1) & (m->cap - 1);
    }
    Py_ssize_t rec = MEMO_HEAD + la + lb;
    if (m->used + rec > m->size) {
        Py_ssize_t size = 2 * m->size;
        while (m->used + rec > size)
            size *= 2;
        if ((size + m->cap) * (Py_ssize_t)sizeof(uint64_t) > lim->max_memo)
            return -1;
        uint64_t *arena = grow(lim, m->arena, m->size * (Py_ssize_t)sizeof(uint64_t),
                               size * (Py_ssize_t)sizeof(uint64_t));
        if (arena == NULL)
            return -2;
        m->arena = arena;
        m->size = size;
    }
    uint64_t *r = m->arena + m->used;
    r[0] = hash;
    r[1] = (uint64_t)state;
    r[2] = (uint64_t)bs->a.lo << 32 | (uint64_t)la;
    r[3] = (uint64_t)bs->b.lo << 32 | (uint64_t)lb;
    for (Py_ssize_t k = 0; k < la; k++)
        r[MEMO_HEAD + k] = bs->w[bs->a.lo + k];
    for (Py_ssize_t k = 0; k < lb; k++)
        r[MEMO_HEAD + la + k] = bs->w[bs->b.lo + k];
    m->slots[i] = m->used;
    m->used += rec;
    m->count++;
    if (2 * m->count > m->cap) {
        if ((2 * m->cap + m->size) * (Py_ssize_t)sizeof(uint64_t) > lim->max_memo)
            return -1;
        if (memo_grow(m, lim) < 0)
            return -2;
    }
    return 1;
}

static uint64_t
mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* ---- one partition's search (registers.py's _search) ---- */

typedef struct {
    int valid;          /* 1, 0; -1: gave up; -2: out of memory (``Limits.needed``) */
    int64_t steps, configs;
} Searched;

/* The bytes of one partition's arrays, per entry (kinds, certain; a, b, zob, its bit's
 * position, the two stacks; the two links of its call and return), and the bitset's. */
#define ENTRY_BYTES (2 + 6 * 8 + 4 * 8)

static Searched
search(const int64_t *codes, Py_ssize_t n, const int64_t *events, Py_ssize_t n_events,
       int64_t init, Limits *lim)
{
    Searched out = {-1, 0, 0};
    Py_ssize_t words = (n + 63) / 64 + 2;
    Py_ssize_t held = (n + 1) * ENTRY_BYTES + words * 8;
    if (spend(lim, held) < 0) {
        out.valid = -2;
        return out;
    }
    int8_t *kinds = malloc((size_t)(n ? n : 1));
    int64_t *a_of = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *b_of = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int8_t *certain = malloc((size_t)(n ? n : 1));
    uint64_t *zob = malloc((size_t)(n ? n : 1) * sizeof(uint64_t));
    int64_t *pos = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *nxt = malloc((size_t)(2 * n + 1) * sizeof(int64_t));
    int64_t *prv = malloc((size_t)(2 * n + 1) * sizeof(int64_t));
    uint64_t *lin_w = calloc((size_t)words, sizeof(uint64_t));
    int64_t *stack_e = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    int64_t *stack_s = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    Bits lin = {lin_w, {0, 0, 0, 0}, {0, 0, 0, 0}};
    Memo memo = {0};
    int memo_ok = 0;
    if (!kinds || !a_of || !b_of || !certain || !zob || !pos || !nxt || !prv || !lin_w ||
        !stack_e || !stack_s) {
        out.valid = -2;
        lim->needed = lim->used;
        goto done;
    }
    int64_t remaining = 0;
    for (Py_ssize_t e = 0; e < n; e++) {
        int64_t code = codes[e];
        kinds[e] = DROPPED;
        certain[e] = 0;
        zob[e] = mix64((uint64_t)e);
        if (code >= 0) {
            kinds[e] = (int8_t)(code & 7);
            a_of[e] = code >> 4 & MASK;
            b_of[e] = code >> 30;
            if (code & CERTAIN) {
                certain[e] = 1;
                remaining++;
            }
        }
    }
    if (remaining == 0) {
        out.valid = 1;
        goto done;
    }
    /* The bits: the certain entries' segment, then the uncertain ones'. */
    {
        Py_ssize_t wa = (remaining + 63) / 64;
        int64_t ca = 0, cb = 64 * (int64_t)wa;
        for (Py_ssize_t e = 0; e < n; e++)
            pos[e] = certain[e] ? ca++ : (kinds[e] != DROPPED ? cb++ : -1);
        Seg a = {0, wa, 0, 0}, b = {wa, (cb + 63) / 64, wa, wa};
        lin.a = a;
        lin.b = b;
    }
    int64_t head = 2 * n;
    for (Py_ssize_t i = 0; i <= 2 * n; i++)
        nxt[i] = prv[i] = -1;
    int64_t last = head;
    for (Py_ssize_t i = 0; i < n_events; i++) {
        int64_t ev = events[i];
        if (kinds[ev >> 1] != DROPPED) {
            nxt[last] = ev;
            prv[ev] = last;
            last = ev;
        }
    }
    if (memo_init(&memo, lim) < 0) {
        out.valid = -2;
        goto done;
    }
    memo_ok = 1;
    int64_t state = init;
    uint64_t hlin = 0;
    Py_ssize_t depth = 0;
    int64_t steps = 0, configs = 0;
    int64_t check_at = lim->check_every;
    int64_t node = nxt[head];
    for (;;) {
        int fails = 0;
        if ((node & 1) == 0) {
            int64_t e = node >> 1;
            int k = kinds[e];
            int64_t a = a_of[e];
            steps++;
            if (steps >= check_at) {
                if (steps > lim->max_steps)
                    goto done;
                check_at = steps + lim->check_every;
                if (lim->left >= 0 && now() - lim->started > lim->left)
                    goto done;
            }
            int legal, readonly = 0;
            int64_t after;
            if (k == READ) {
                legal = readonly = state == a;
                after = state;
            }
            else if (k == WRITE) {
                legal = 1;
                after = a;
            }
            else if (k == CAS) {
                legal = state == a;
                after = b_of[e];
            }
            else if (k == CAS_FAILED) {
                legal = readonly = state != a;
                after = state;
            }
            else {
                legal = 1;
                after = state == a ? b_of[e] : state;
            }
            if (legal) {
                bits_set(&lin, pos[e]);
                uint64_t h = hlin ^ zob[e];
                int added =
                    memo_add(&memo, lim, h ^ mix64((uint64_t)after + 0x51ED27ULL), after, &lin);
                if (added < 0) {
                    if (added == -2)
                        out.valid = -2;
                    goto done;
                }
                if (added) {
                    configs++;
                    stack_e[depth] = readonly ? ~e : e;
                    stack_s[depth] = state;
                    depth++;
                    hlin = h;
                    state = after;
                    int64_t r = node + 1;
                    int64_t nc = nxt[node], pc = prv[node];
                    nxt[pc] = nc;
                    if (nc >= 0)
                        prv[nc] = pc;
                    int64_t nr = nxt[r], pr = prv[r];
                    nxt[pr] = nr;
                    if (nr >= 0)
                        prv[nr] = pr;
                    if (certain[e]) {
                        remaining--;
                        if (remaining == 0) {
                            out.valid = 1;
                            out.steps = steps;
                            out.configs = configs;
                            goto done;
                        }
                    }
                    node = nxt[head];
                    continue;
                }
                bits_clear(&lin, pos[e]);
                fails = readonly;
            }
            if (!fails) {
                node = nxt[node];
                continue;
            }
        }
        for (;;) {
            if (depth == 0) {
                out.valid = 0;
                out.steps = steps;
                out.configs = configs;
                goto done;
            }
            depth--;
            int64_t e = stack_e[depth];
            state = stack_s[depth];
            int forced = e < 0;
            if (forced)
                e = ~e;
            bits_clear(&lin, pos[e]);
            hlin ^= zob[e];
            if (certain[e])
                remaining++;
            int64_t c = 2 * e, r = c + 1;
            int64_t nr = nxt[r];
            if (nr >= 0)
                prv[nr] = r;
            nxt[prv[r]] = r;
            int64_t nc = nxt[c];
            if (nc >= 0)
                prv[nc] = c;
            nxt[prv[c]] = c;
            if (!forced) {
                node = nxt[c];
                break;
            }
        }
    }
done:
    if (memo_ok)
        memo_free(&memo, lim);
    free(kinds);
    free(a_of);
    free(b_of);
    free(certain);
    free(zob);
    free(pos);
    free(nxt);
    free(prv);
    free(lin_w);
    free(stack_e);
    free(stack_s);
    lim->used -= held;
    return out;
}

/* ---- reading the ops into partitions (registers.py's _read) ---- */

typedef struct {
    Offsets o;
    Values values;
    PyObject *open_big;  /* dict: process -> int (g + 1 when busy, -1 when retired) */
    int64_t *open_small; /* the same for small int processes */
    Py_ssize_t n_open_small;
    PyObject *part_big;  /* dict: key -> partition */
    int64_t *part_small; /* partition + 1 of small int keys, 0 when none yet */
    Py_ssize_t n_part_small;
    int64_t part_none;   /* partition + 1 of the key None */
    I64s part_label_ix;  /* per partition: the index of its first op (its label's op) */
    I64s part_count;     /* per partition: entries */
    I64s codes, part_of, local_of, inv_of; /* per entry */
    I64s events;         /* g << 1 | is_return, in time order */
    Limits *lim;
    Py_ssize_t dict_bytes; /* accounted for the entries of the three dicts */
} Reader;

static void
reader_free(Reader *r)
{
    Py_XDECREF(r->values.ids);
    Py_XDECREF(r->open_big);
    Py_XDECREF(r->part_big);
    Limits *lim = r->lim;
    release(lim, r->open_small, r->n_open_small * (Py_ssize_t)sizeof(int64_t));
    release(lim, r->part_small, r->n_part_small * (Py_ssize_t)sizeof(int64_t));
    i64s_free(lim, &r->part_label_ix);
    i64s_free(lim, &r->part_count);
    i64s_free(lim, &r->codes);
    i64s_free(lim, &r->part_of);
    i64s_free(lim, &r->local_of);
    i64s_free(lim, &r->inv_of);
    i64s_free(lim, &r->events);
    lim->used -= r->dict_bytes;
}

/* Account the entries the dicts gained since the last call (``PY_ENTRY_BYTES`` each):
 * 0, or -1 past the limit. */
static int
account_dicts(Reader *r)
{
    Py_ssize_t n = PyDict_GET_SIZE(r->values.ids) + PyDict_GET_SIZE(r->open_big) +
                   PyDict_GET_SIZE(r->part_big);
    Py_ssize_t bytes = n * PY_ENTRY_BYTES;
    if (bytes > r->dict_bytes) {
        if (spend(r->lim, bytes - r->dict_bytes) < 0)
            return -1;
        r->dict_bytes = bytes;
    }
    return 0;
}

/* What a failed step means: -2 out of memory, -1 a Python error, 0 this path gives up. */
static int
failed(Reader *r)
{
    return r->lim->needed ? -2 : (PyErr_Occurred() ? -1 : 0);
}

static int64_t
small_int(PyObject *x)
{
    if (!(PyLong_CheckExact(x) || PyBool_Check(x)))
        return -1;
    int overflow = 0;
    long long n = PyLong_AsLongLongAndOverflow(x, &overflow);
    if (overflow || n < 0 || n >= SMALL_IDS) {
        PyErr_Clear();
        return -1;
    }
    return (int64_t)n;
}

static int
plain_id(PyObject *x)
{
    return x == Py_None || PyLong_CheckExact(x) || PyBool_Check(x) || PyUnicode_CheckExact(x);
}

/* The open state of process ``p`` (0 idle, g + 1 busy, -1 retired) through ``slot``:
 * -2 on an unsupported process or an error. */
static int64_t *
process_slot(Reader *r, PyObject *p, int64_t *scratch)
{
    int64_t i = small_int(p);
    if (i >= 0) {
        if (i64s_reach(r->lim, &r->open_small, &r->n_open_small, i, 0) < 0)
            return NULL;
        return &r->open_small[i];
    }
    if (!plain_id(p) || p == Py_None)
        return NULL;
    PyObject *got = PyDict_GetItemWithError(r->open_big, p);
    if (got == NULL) {
        if (PyErr_Occurred())
            return NULL;
        *scratch = 0;
    }
    else {
        *scratch = PyLong_AsLongLong(got);
    }
    return scratch;
}

static int
process_store(Reader *r, PyObject *p, int64_t *slot, int64_t *scratch, int64_t v)
{
    if (slot != scratch) {
        *slot = v;
        return 0;
    }
    PyObject *n = PyLong_FromLongLong(v);
    if (n == NULL)
        return -1;
    int rc = PyDict_SetItem(r->open_big, p, n);
    Py_DECREF(n);
    return rc;
}

/* The partition of ``key`` (created, labelled by op ``i``, when new); -1 when this path
 * cannot use the key or on an error. */
static int64_t
partition_of(Reader *r, PyObject *key, Py_ssize_t i)
{
    int64_t *where = NULL;
    PyObject *got = NULL;
    int64_t k = small_int(key);
    if (key == Py_None) {
        where = &r->part_none;
    }
    else if (k >= 0) {
        if (i64s_reach(r->lim, &r->part_small, &r->n_part_small, k, 0) < 0)
            return -1;
        where = &r->part_small[k];
    }
    else if (plain_id(key)) {
        got = PyDict_GetItemWithError(r->part_big, key);
        if (got != NULL)
            return PyLong_AsLongLong(got);
        if (PyErr_Occurred())
            return -1;
    }
    else {
        return -1;
    }
    if (where != NULL && *where > 0)
        return *where - 1;
    int64_t pid = r->part_count.n;
    if (i64s_push(r->lim, &r->part_count, 0) < 0 || i64s_push(r->lim, &r->part_label_ix, i) < 0)
        return -1;
    if (where != NULL) {
        *where = pid + 1;
    }
    else {
        PyObject *n = PyLong_FromLongLong(pid);
        if (n == NULL || PyDict_SetItem(r->part_big, key, n) < 0) {
            Py_XDECREF(n);
            return -1;
        }
        Py_DECREF(n);
    }
    return pid;
}

/* Read every op: 1 when read, 0 when this path gives up, -1 on a Python error, -2 out
 * of memory. */
static int
read_ops(Reader *r, PyObject *ops, int fail_cas_happened, int nil_read_any)
{
    Limits *lim = r->lim;
    Py_ssize_t n = PyTuple_GET_SIZE(ops);
    const Offsets *o = &r->o;
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((i & 4095) == 4095) {
            if (lim->left >= 0 && now() - lim->started > lim->left)
                return 0;
            if (account_dicts(r) < 0)
                return -2;
        }
        PyObject *op = PyTuple_GET_ITEM(ops, i);
        PyObject *p = FIELD(op, o->process), *t = FIELD(op, o->type);
        if (p == NULL || t == NULL)
            return 0;
        if (PyUnicode_CheckExact(p) && eq_ascii(p, "nemesis", 7))
            continue;
        int tc;
        if (eq_ascii(t, "invoke", 6))
            tc = T_INVOKE;
        else if (eq_ascii(t, "ok", 2))
            tc = T_OK;
        else if (eq_ascii(t, "fail", 4))
            tc = T_FAIL;
        else if (eq_ascii(t, "info", 4))
            tc = T_INFO;
        else
            return 0;
        int64_t scratch;
        int64_t *slot = process_slot(r, p, &scratch);
        if (slot == NULL)
            return failed(r);
        if (tc == T_INVOKE) {
            if (*slot != 0)
                return 0; /* busy, or retired */
            PyObject *key = FIELD(op, o->key);
            if (key == NULL)
                return 0;
            int64_t pid = partition_of(r, key, i);
            if (pid < 0)
                return failed(r);
            int64_t g = r->codes.n;
            if (i64s_push(lim, &r->codes, DROPPED) < 0 || i64s_push(lim, &r->part_of, pid) < 0 ||
                i64s_push(lim, &r->local_of, r->part_count.v[pid]++) < 0 ||
                i64s_push(lim, &r->inv_of, i) < 0 || i64s_push(lim, &r->events, g << 1) < 0)
                return failed(r);
            if (process_store(r, p, slot, &scratch, g + 1) < 0)
                return -1;
            continue;
        }
        if (*slot <= 0)
            return 0; /* nothing open: idle, or retired */
        int64_t g = *slot - 1;
        PyObject *inv = PyTuple_GET_ITEM(ops, r->inv_of.v[g]);
        PyObject *k1 = FIELD(inv, o->key), *k2 = FIELD(op, o->key);
        if (k1 == NULL || k2 == NULL)
            return 0;
        if (k1 != k2) {
            int same = PyObject_RichCompareBool(k1, k2, Py_EQ);
            if (same < 0)
                return -1;
            if (!same)
                return 0;
        }
        if (process_store(r, p, slot, &scratch, tc == T_INFO ? -1 : 0) < 0)
            return -1;
        int64_t code =
            entry_code(o, &r->values, inv, op, tc, fail_cas_happened, nil_read_any);
        if (code == -3)
            return -1;
        if (code == CANNOT)
            return 0;
        r->codes.v[g] = code;
        if (code >= 0 && (code & CERTAIN) && i64s_push(lim, &r->events, g << 1 | 1) < 0)
            return failed(r);
    }
    /* Never completed: unknown outcomes. */
    for (Py_ssize_t g = 0; g < r->codes.n; g++) {
        PyObject *inv = PyTuple_GET_ITEM(ops, r->inv_of.v[g]);
        PyObject *p = FIELD(inv, o->process);
        int64_t scratch;
        int64_t *slot = process_slot(r, p, &scratch);
        if (slot == NULL)
            return failed(r);
        if (*slot != g + 1)
            continue;
        int64_t code =
            entry_code(o, &r->values, inv, NULL, T_INFO, fail_cas_happened, nil_read_any);
        if (code == -3)
            return -1;
        if (code == CANNOT)
            return 0;
        r->codes.v[g] = code;
    }
    for (Py_ssize_t g = 0; g < r->codes.n; g++) {
        int64_t code = r->codes.v[g];
        if (code >= 0 && !(code & CERTAIN) && i64s_push(lim, &r->events, g << 1 | 1) < 0)
            return failed(r);
    }
    return account_dicts(r) < 0 ? -2 : 1;
}

/* ---- decide ---- */

static int
ascending(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : (a > b);
}

static PyObject *
decide(PyObject *self, PyObject *args)
{
    PyObject *ops, *initial, *label_key = NULL;
    PyTypeObject *op_type;
    int fail_cas_happened, nil_read_any;
    double left;
    long long steps_base, steps_per_entry, check_every, max_memo, max_bytes;
    if (!PyArg_ParseTuple(args, "O!O!OppdLLLLL", &PyTuple_Type, &ops, &PyType_Type, &op_type,
                          &initial, &fail_cas_happened, &nil_read_any, &left, &steps_base,
                          &steps_per_entry, &check_every, &max_memo, &max_bytes))
        return NULL;
    Limits lim = {0, check_every > 0 ? check_every : 1, now(), left, (Py_ssize_t)max_memo,
                  (Py_ssize_t)max_bytes, 0, 0};
    Reader r;
    memset(&r, 0, sizeof r);
    r.lim = &lim;
    PyObject *result = NULL;
    int64_t *order = NULL, *kept = NULL, *offsets = NULL, *sorted_ev = NULL, *local_ev = NULL;
    int64_t *local_codes = NULL, *fill = NULL, *first = NULL;
    Py_ssize_t held = 0; /* the bytes of the arrays above */
    Py_ssize_t n_ops = PyTuple_GET_SIZE(ops);
    if (slot_offset(op_type, "process", &r.o.process) < 0 ||
        slot_offset(op_type, "type", &r.o.type) < 0 || slot_offset(op_type, "f", &r.o.f) < 0 ||
        slot_offset(op_type, "value", &r.o.value) < 0 ||
        slot_offset(op_type, "key", &r.o.key) < 0)
        goto give_up;
    for (Py_ssize_t i = 0; i < n_ops; i++) {
        if (Py_TYPE(PyTuple_GET_ITEM(ops, i)) != op_type)
            goto give_up;
    }
    r.values.ids = PyDict_New();
    r.open_big = PyDict_New();
    r.part_big = PyDict_New();
    if (r.values.ids == NULL || r.open_big == NULL || r.part_big == NULL)
        goto error;
    int64_t init = value_id(&r.values, initial);
    if (init == -2)
        goto error;
    if (init < 0)
        goto give_up;
    int got = read_ops(&r, ops, fail_cas_happened, nil_read_any);
    if (got == -2)
        goto out_of_memory;
    if (got < 0)
        goto error;
    if (got == 0)
        goto give_up;
    Py_ssize_t parts = r.part_count.n, n_entries = r.codes.n;
    held = (Py_ssize_t)sizeof(int64_t) *
           (5 * (parts + 2) + 2 * (r.events.n + 1) + (n_entries + 1));
    if (spend(&lim, held) < 0) {
        held = 0;
        goto out_of_memory;
    }
    order = malloc((size_t)(parts + 1) * sizeof(int64_t));
    kept = calloc((size_t)(parts + 1), sizeof(int64_t));
    offsets = calloc((size_t)(parts + 2), sizeof(int64_t));
    fill = malloc((size_t)(parts + 1) * sizeof(int64_t));
    first = calloc((size_t)(parts + 1), sizeof(int64_t));
    sorted_ev = malloc((size_t)(r.events.n + 1) * sizeof(int64_t));
    local_ev = malloc((size_t)(r.events.n + 1) * sizeof(int64_t));
    local_codes = malloc((size_t)(n_entries + 1) * sizeof(int64_t));
    if (!order || !kept || !offsets || !fill || !first || !sorted_ev || !local_ev ||
        !local_codes) {
        lim.needed = lim.used;
        goto out_of_memory;
    }
    int64_t total = 0;
    for (Py_ssize_t g = 0; g < n_entries; g++) {
        if (r.codes.v[g] != DROPPED) {
            kept[r.part_of.v[g]]++;
            total++;
        }
    }
    /* The events of each partition together, in time order (a stable counting sort). */
    for (Py_ssize_t i = 0; i < r.events.n; i++)
        offsets[r.part_of.v[r.events.v[i] >> 1] + 1]++;
    for (Py_ssize_t p = 0; p < parts; p++)
        offsets[p + 1] += offsets[p];
    memcpy(fill, offsets, (size_t)(parts + 1) * sizeof(int64_t));
    for (Py_ssize_t i = 0; i < r.events.n; i++) {
        int64_t ev = r.events.v[i];
        sorted_ev[fill[r.part_of.v[ev >> 1]]++] = ev;
    }
    /* Each partition's entry codes together, numbered locally (its first at ``first``),
     * and its events by those numbers. */
    for (Py_ssize_t p = 1; p <= parts; p++)
        first[p] = first[p - 1] + r.part_count.v[p - 1];
    for (Py_ssize_t g = 0; g < n_entries; g++)
        local_codes[first[r.part_of.v[g]] + r.local_of.v[g]] = r.codes.v[g];
    for (Py_ssize_t i = 0; i < r.events.n; i++) {
        int64_t ev = sorted_ev[i];
        local_ev[i] = r.local_of.v[ev >> 1] << 1 | (ev & 1);
    }
    /* Smallest first (then in order of appearance), as registers.py: each partition's
     * entries kept above its number (both below 2**31: a tuple of ops is that short). */
    for (Py_ssize_t p = 0; p < parts; p++)
        order[p] = kept[p] << 32 | p;
    qsort(order, (size_t)parts, sizeof(int64_t), ascending);
    int64_t steps = 0, configs = 0;
    Py_ssize_t checked = 0;
    int valid = 1;
    for (Py_ssize_t j = 0; j < parts; j++) {
        int64_t p = order[j] & 0xFFFFFFFF;
        Searched s = {-1, 0, 0};
        if (lim.left < 0 || now() - lim.started <= lim.left) {
            lim.max_steps = steps_base + steps_per_entry * kept[p];
            s = search(local_codes + first[p], r.part_count.v[p], local_ev + offsets[p],
                       offsets[p + 1] - offsets[p], init, &lim);
        }
        if (s.valid == -2)
            goto out_of_memory;
        if (s.valid < 0)
            goto give_up;
        checked++;
        steps += s.steps;
        configs += s.configs;
        if (!s.valid) {
            valid = 0;
            label_key = FIELD(PyTuple_GET_ITEM(ops, r.part_label_ix.v[p]), r.o.key);
            break;
        }
    }
    Py_ssize_t n_parts = parts ? parts : (n_ops ? 1 : 0);
    if (valid)
        checked = n_parts;
    result = Py_BuildValue("(NnnLLLO)", PyBool_FromLong(valid), n_parts, checked,
                           (long long)total, (long long)steps, (long long)configs,
                           label_key ? label_key : Py_None);
    goto done;
out_of_memory:
    /* Past what the budget has left (or where malloc failed): how much it needed. */
    if (PyErr_Occurred())
        PyErr_Clear();
    result = PyLong_FromSsize_t(lim.needed);
    goto done;
give_up:
    if (PyErr_Occurred())
        PyErr_Clear();
    result = Py_NewRef(Py_None);
    goto done;
error:
    /* A Python error while reading (a value that cannot be hashed, no memory): the
     * general path reads the history and says what is wrong. */
    PyErr_Clear();
    result = Py_NewRef(Py_None);
done:
    reader_free(&r);
    free(order);
    free(kept);
    free(offsets);
    free(fill);
    free(first);
    free(sorted_ev);
    free(local_ev);
    free(local_codes);
    lim.used -= held;
    return result;
}

static PyMethodDef methods[] = {
    {"decide", decide, METH_VARARGS,
     "decide(ops, op_type, initial, fail_cas_happened, nil_read_any, seconds_left, "
     "steps_base, steps_per_entry, check_every, max_memo, max_bytes): (valid, partitions, "
     "checked, ops, steps, configs, invalid_label); None where it gives up; the bytes it "
     "needed (an int) where it would pass max_bytes (-1: no limit) or malloc fails."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_registers",
    "The register path's reading and search in C (see checkers/linear/registers.py).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__registers(void)
{
    return PyModule_Create(&module);
}
