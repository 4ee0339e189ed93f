/* White-box tests of the validators' CORRUPTION returns (rmm_pool_validate, rmm_resource_validate):
   each builds a real resource (a pool of each growth, a VIRTUAL pool's pages, a stream's ring, the
   TLSF lists, the fixed-size resource, binning over it, the arena), makes a few allocations, then
   breaks exactly one internal field (or one list link) through the library's private types, checks
   that validate says CORRUPTION with a message naming the inconsistency, restores the field, checks
   that validate passes, and that the resource still allocates, frees and is destroyed cleanly.
   Corruption is made only between calls: RMM_DEBUG builds validate after each pool call
   (RMM__POOL_DEBUG_CHECK) and after fixed-size and arena calls, so nothing is called while broken.
   Compiles as C and as C++ (nvcc). Added in session 39 after a coverage pass found these returns
   unreached. Every CORRUPTION return of the validators is reached here but one: the pool's "used +
   parked + free != pool bytes", which the chunk, used and free accounting checks before it imply. */
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "harness.h"
#include <stdint.h>
#include <string.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* st must be CORRUPTION and the message must contain needle. */
static void expect_corrupt(rmm_status st, const char *needle, const char *what, int line) {
    if (st != RMM_ERROR_CORRUPTION || strstr(rmm_last_error(), needle) == NULL) {
        harness_checks_failed_in_test++;
        printf("  %s:%d: %s: validate returned %s (%s), expected CORRUPTION naming \"%s\"\n", __FILE__, line, what, rmm_status_string(st),
               st == RMM_SUCCESS ? "" : rmm_last_error(), needle);
    }
}
#define EXPECT_CORRUPT(call, needle, what) expect_corrupt((call), (needle), (what), __LINE__)
/* Saves the bytes of `field`, runs `breaks` (a statement that corrupts it), expects `call` to say
   CORRUPTION naming `needle`, restores the bytes, and expects `call` to succeed. */
#define BREAK(field, breaks, call, needle)                                   \
    do {                                                                     \
        unsigned char keep_[sizeof(field)];                                  \
        memcpy(keep_, &(field), sizeof keep_);                               \
        breaks;                                                              \
        expect_corrupt((call), (needle), #breaks, __LINE__);                 \
        memcpy(&(field), keep_, sizeof keep_);                               \
        CHECK_OK(call);                                                      \
    } while (0)

static rmm__block fake; /* a block no chunk holds, put into a list by the tests that need one */

/* The pool's block at ptr (used or parked), or NULL. */
static rmm__block *pool_block(rmm__pool *p, const void *ptr) {
    void **slot = rmm__addr_map_find(&p->used, (uintptr_t)ptr);
    return slot ? (rmm__block *)*slot : NULL;
}
static unsigned tlsf_bin_of(size_t size) {
    unsigned fl, sl;
    rmm__tlsf_mapping(size >> 8, &fl, &sl);
    return fl * RMM__TLSF_SL + sl;
}
/* A pool of the given growth (initial_bytes for the chunked ones), or NULL. */
static rmm_resource *new_pool(rmm_pool_growth growth, size_t bytes) {
    rmm_resource *mr = NULL;
    rmm_pool_desc pd = rmm_pool_desc_default();
    pd.growth = growth;
    if (growth == RMM_POOL_GROWTH_VIRTUAL) {
        pd.virtual_bytes = bytes;
        if (!new_virtual_pool(&pd, &mr)) return NULL;
        return mr;
    }
    pd.initial_bytes = bytes;
    CHECK_OK(rmm_pool_create(&mr, rmm_get_current_device_resource(), &pd));
    return mr;
}

/* ---- the pool: its chunks' blocks, its TLSF lists, its parked blocks, its accounting ---- */
/* Layout of the chunk made here, in address order: F (free, 2 MiB, in the legacy stream's TLSF
   lists) | a1 used | a2 parked (quick list) | a3 parked (quick list) | a4 parked (recent slot) |
   a5 used | the rest, free. */
static void pool_checks(rmm_pool_growth growth) {
    rmm_resource *mr = new_pool(growth, growth == RMM_POOL_GROWTH_VIRTUAL ? 64 * MiB : 32 * MiB);
    rmm__pool *p;
    rmm__pstream *s;
    rmm__tlsf *t;
    rmm__chunk *c;
    rmm__block *F, *b1, *b2, *b3, *b4, *b5, *H, **head;
    void *a[6] = {NULL, NULL, NULL, NULL, NULL, NULL}, *x = NULL;
    static const size_t sz[6] = {2 * MiB, 4096, 4096, 8192, 512 * KiB, 2 * MiB};
    unsigned fl, sl, m, k;
    int i;
    void **slot;
    if (!mr) return;
    p = (rmm__pool *)mr;
    for (i = 0; i < 6; i++) CHECK_OK(rmm_allocate(mr, &a[i], sz[i], RMM_STREAM_DEFAULT));
    F = pool_block(p, a[0]);
    b1 = pool_block(p, a[1]);
    b2 = pool_block(p, a[2]);
    b3 = pool_block(p, a[3]);
    b4 = pool_block(p, a[4]);
    b5 = pool_block(p, a[5]);
    for (i = 0; i < 6; i += 2) CHECK_OK(rmm_deallocate(mr, a[i], sz[i], RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, a[3], sz[3], RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_pool_validate(mr));
    c = p->chunks;
    t = F ? F->owner : NULL;
    s = t ? (rmm__pstream *)t->state : NULL;
    /* the layout the checks below rely on (a virtual pool files a2 and a4: only the last free of up
       to 1 MiB, a3, is parked, in the recent slot) */
    CHECK(F && b1 && b2 && b3 && b4 && b5 && c && c->first == F && F->phys_next == b1 && s && t == &s->free && F->parked == NULL);
    if (growth == RMM_POOL_GROWTH_VIRTUAL)
        CHECK(s && s->recent == b3 && s->quick_blocks == 0);
    else
        CHECK(s && s->recent == b4 && s->quick[4096 / 256 - 1] == b2 && s->quick[8192 / 256 - 1] == b3 && s->quick[0] == NULL && s->quick_blocks == 2);
    if (!F || !b1 || !b2 || !b3 || !b4 || !b5 || !c || c->first != F || !s || t != &s->free || !t->heads || F->phys_next != b1) {
        printf("  (the pool's layout is not the one expected: not tested)\n");
        rmm_resource_destroy(mr);
        return;
    }
    /* rmm__validate_chunk */
    BREAK(F->phys_prev, F->phys_prev = b1, rmm_pool_validate(mr), "has a bad first block");
    BREAK(b1->chunk, b1->chunk = NULL, rmm_pool_validate(mr), "names the wrong chunk");
    BREAK(b1->ptr, b1->ptr += 256, rmm_pool_validate(mr), "is not contiguous with its neighbour");
    BREAK(b1->size, b1->size += 1, rmm_pool_validate(mr), "has size 4097");
    BREAK(b1->size, b1->size = 0, rmm_pool_validate(mr), "has size 0");
    BREAK(b1->phys_prev, b1->phys_prev = NULL, rmm_pool_validate(mr), "has a broken back link");
    BREAK(b1->owner, b1->owner = t, rmm_pool_validate(mr), "of one list are not coalesced");
    m = tlsf_bin_of(F->size);
    BREAK(F->bin, F->bin = m + 2, rmm_pool_validate(mr), "is in the wrong bin");
    BREAK(F->bin, F->bin = (F->bin == m ? m - 1 : m), rmm_pool_validate(mr), "is missing from its bin");
    CHECK(rmm__addr_map_put(&p->used, (uintptr_t)F->ptr, F));
    EXPECT_CORRUPT(rmm_pool_validate(mr), "is both free and in use", "a free block in the address map");
    CHECK(rmm__addr_map_remove(&p->used, (uintptr_t)F->ptr) == F);
    CHECK_OK(rmm_pool_validate(mr));
    slot = rmm__addr_map_find(&p->used, (uintptr_t)a[1]);
    CHECK(slot != NULL);
    if (slot) BREAK(*slot, *slot = b5, rmm_pool_validate(mr), "is missing from the address map");
    BREAK(c->size, c->size += 256, rmm_pool_validate(mr), "do not cover it");
    /* rmm__validate_tlsf, on the legacy stream's lists */
    BREAK(s->large, (s->large.heads = NULL, s->large.free_blocks = 1), rmm_pool_validate(mr), "lists without a bin table hold blocks");
    for (fl = 0; fl < RMM__TLSF_FL && t->sl_map[fl]; fl++) {}
    CHECK(fl < RMM__TLSF_FL);
    if (fl < RMM__TLSF_FL) BREAK(t->fl_map, t->fl_map ^= (uint64_t)1 << fl, rmm_pool_validate(mr), "first-level bitmap disagrees");
    fl = F->bin / RMM__TLSF_SL;
    for (sl = 0; sl < RMM__TLSF_SL && t->heads[fl][sl]; sl++) {}
    CHECK(sl < RMM__TLSF_SL);
    if (sl < RMM__TLSF_SL) BREAK(t->sl_map[fl], t->sl_map[fl] |= 1u << sl, rmm_pool_validate(mr), "second-level bitmap disagrees");
    head = &t->heads[F->bin / RMM__TLSF_SL][F->bin % RMM__TLSF_SL];
    H = *head;
    CHECK(H != NULL);
    memset(&fake, 0, sizeof fake);
    fake.size = 256;
    fake.bin = F->bin;
    fake.free_next = H;
    fake.owner = &s->large; /* a bin's block that names other lists */
    BREAK(*head, *head = &fake, rmm_pool_validate(mr), "is filed under the wrong list");
    fake.owner = t; /* a block whose next block does not link back to it */
    BREAK(*head, *head = &fake, rmm_pool_validate(mr), "bin list broken at");
    BREAK(t->free_blocks, t->free_blocks++, rmm_pool_validate(mr), "free counts are off");
    BREAK(t->free_bytes, t->free_bytes += 256, rmm_pool_validate(mr), "free counts are off");
    /* a well-linked block in the lists that no chunk holds: the lists list more than the chunks */
    if (H) {
        *head = &fake;
        H->free_prev = &fake;
        t->free_blocks++;
        t->free_bytes += fake.size;
        EXPECT_CORRUPT(rmm_pool_validate(mr), "free blocks in chunks but", "a listed block of no chunk");
        *head = H;
        H->free_prev = NULL;
        t->free_blocks--;
        t->free_bytes -= fake.size;
        CHECK_OK(rmm_pool_validate(mr));
    }
    /* rmm__pool_validate_parked, on the legacy stream */
    BREAK(s->recent->parked, s->recent->parked = NULL, rmm_pool_validate(mr), "is not marked as parked there");
    if (growth != RMM_POOL_GROWTH_VIRTUAL && s->quick[0] == NULL) {
        BREAK(b2->parked, b2->parked = NULL, rmm_pool_validate(mr), "is not marked as parked there");
        BREAK(s->quick[0], s->quick[0] = b3, rmm_pool_validate(mr), "is in the quick list of 256");
        BREAK(s->quick_blocks, s->quick_blocks++, rmm_pool_validate(mr), "parks 2 blocks of 12288 bytes, recorded 3 of 12288");
        BREAK(s->quick_bytes, s->quick_bytes += 256, rmm_pool_validate(mr), "parks 2 blocks of 12288 bytes, recorded 2 of 12544");
    }
    /* rmm__pool_validate_locked */
    BREAK(p->chunk_count, p->chunk_count++, rmm_pool_validate(mr), "chunk accounting is off");
    BREAK(p->pool_bytes, p->pool_bytes += 256, rmm_pool_validate(mr), "chunk accounting is off");
    BREAK(s->ss.index, s->ss.index += 5, rmm_pool_validate(mr), "records index");
    CHECK(p->so.track_holders && s->ss.holder_at != 0);
    BREAK(s->ss.holder_at, s->ss.holder_at = p->so.holder_count + 1, rmm_pool_validate(mr), "has a bad place in the holders list");
    BREAK(s->ss.holder_at, s->ss.holder_at = 0, rmm_pool_validate(mr), "holds free memory but is not in the holders list");
    BREAK(*s, (s->quick = rmm__pool_no_quick, s->quick_blocks = 0, s->quick_bytes = 0), rmm_pool_validate(mr), "has free lists but no quick lists");
    BREAK(p->used_bytes, p->used_bytes += 256, rmm_pool_validate(mr), "used accounting is off");
    BREAK(p->used.count, p->used.count++, rmm_pool_validate(mr), "used accounting is off");
    /* restored: it still works */
    for (k = 0; k < 3; k++) {
        CHECK_OK(rmm_allocate(mr, &x, 4096, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_deallocate(mr, x, 4096, RMM_STREAM_DEFAULT));
    }
    CHECK_OK(rmm_deallocate(mr, a[1], sz[1], RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, a[5], sz[5], RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_pool_validate(mr));
    CHECK_OK(rmm_resource_validate(mr));
    rmm_resource_destroy(mr);
}
TEST(pool_geometric_validate_catches_corruption) {
    NEED_GPU();
    pool_checks(RMM_POOL_GROWTH_GEOMETRIC);
}
TEST(pool_on_demand_validate_catches_corruption) {
    NEED_GPU();
    pool_checks(RMM_POOL_GROWTH_ON_DEMAND);
}
TEST(pool_virtual_validate_catches_corruption) {
    NEED_GPU();
    pool_checks(RMM_POOL_GROWTH_VIRTUAL);
}

/* ---- a foreign stream's ring (rmm__pool_validate_parked) ---- */
TEST(pool_ring_validate_catches_corruption) {
    rmm_resource *mr;
    rmm__pstream *fs;
    rmm__pool_ring *r;
    rmm_stream f = NULL;
    void *x = NULL, *small[3], *big[2];
    size_t i, k, j, hb, big_bytes = 100 * KiB, cls = 4096 / 256 - 1;
    NEED_GPU();
    if ((mr = new_pool(RMM_POOL_GROWTH_GEOMETRIC, 32 * MiB)) == NULL) return;
    CHECK_OK(rmm__stream_create_raw(&f, false)); /* not registered: a foreign (eager) stream */
    for (i = 0; f && i < RMM__POOL_RING_AFTER; i++) { /* the ring comes with the 256th event */
        CHECK_OK(rmm_allocate(mr, &x, 256, f));
        CHECK_OK(rmm_deallocate(mr, x, 256, f));
    }
    fs = (rmm__pstream *)((rmm__pool *)mr)->so.last;
    r = fs ? fs->ring : NULL;
    CHECK(r != NULL);
    if (!f || !r) {
        rmm_resource_destroy(mr);
        if (f) CHECK_OK(rmm__stream_destroy_raw(f));
        return;
    }
    for (i = 0; i < 3; i++) CHECK_OK(rmm_allocate(mr, &small[i], 4096, f));
    for (i = 0; i < 2; i++) CHECK_OK(rmm_allocate(mr, &big[i], big_bytes, f));
    for (i = 0; i < 3; i++) CHECK_OK(rmm_deallocate(mr, small[i], 4096, f));
    for (i = 0; i < 2; i++) CHECK_OK(rmm_deallocate(mr, big[i], big_bytes, f));
    hb = rmm__pool_ring_hash(big_bytes);
    CHECK(r->fresh[cls] && r->fresh[cls]->free_next && r->large == 2 && r->bucket[hb] && r->count >= 5);
    CHECK_OK(rmm_pool_validate(mr));
    for (k = 1; k < cls && r->fresh[k]; k++) {} /* an empty list of the quick sizes below 4096 */
    for (j = 0; j < 64 && r->bucket[j]; j++) {} /* an empty bucket */
    if (r->fresh[cls] && r->fresh[cls]->free_next && r->large == 2 && r->bucket[hb] && k < cls && j < 64) {
        BREAK(r->large, r->large = RMM__POOL_RING_LARGE + 1, rmm_pool_validate(mr), "has a ring of");
        BREAK(fs->ss.lazy, fs->ss.lazy = true, rmm_pool_validate(mr), "but is lazy");
        BREAK(r->classes[k >> 6], r->classes[k >> 6] |= (uint64_t)1 << (k & 63), rmm_pool_validate(mr), "ring marks its list");
        BREAK(r->classes[cls >> 6], r->classes[cls >> 6] &= ~((uint64_t)1 << (cls & 63)), rmm_pool_validate(mr), "empty, but it holds blocks");
        BREAK(r->tail[cls], r->tail[cls] = r->fresh[cls], rmm_pool_validate(mr), "has a wrong last block");
        BREAK(*r, (r->fresh[k] = r->fresh[cls], r->classes[k >> 6] |= (uint64_t)1 << (k & 63)), rmm_pool_validate(mr), "is in a ring's list of");
        BREAK(r->count, r->count = 1, rmm_pool_validate(mr), "ring holds more blocks than its count");
        BREAK(r->fresh[cls]->parked, r->fresh[cls]->parked = NULL, rmm_pool_validate(mr), "is not marked as parked there");
        BREAK(r->buckets, r->buckets |= (uint64_t)1 << j, rmm_pool_validate(mr), "ring marks its bucket");
        BREAK(*r, (r->bucket[j] = r->bucket[hb], r->buckets |= (uint64_t)1 << j), rmm_pool_validate(mr), "is in a ring's bucket");
        BREAK(r->large, r->large = 1, rmm_pool_validate(mr), "ring holds more blocks than its count");
        BREAK(r->bytes, r->bytes += 256, rmm_pool_validate(mr), "), recorded");
        BREAK(r->large_bytes, r->large_bytes += 256, rmm_pool_validate(mr), "), recorded");
    } else {
        printf("  (the ring is not the one expected: not tested)\n");
    }
    for (i = 0; i < 3; i++) {
        CHECK_OK(rmm_allocate(mr, &x, 4096, f));
        CHECK_OK(rmm_deallocate(mr, x, 4096, f));
    }
    CHECK_OK(rmm_pool_validate(mr));
    rmm_resource_destroy(mr);
    CHECK_OK(rmm__stream_destroy_raw(f));
}

/* ---- a VIRTUAL pool's pages (rmm__vm_validate) ---- */
TEST(pool_virtual_pages_validate_catches_corruption) {
    rmm_resource *mr;
    rmm__pool *p;
    rmm__pool_vm *vm;
    void *u = NULL, *v = NULL, *w = NULL;
    size_t i, up = SIZE_MAX, e = SIZE_MAX, idle = SIZE_MAX, head, next;
    NEED_GPU();
    if ((mr = new_pool(RMM_POOL_GROWTH_VIRTUAL, 64 * MiB)) == NULL) return;
    p = (rmm__pool *)mr;
    vm = &p->vm;
    CHECK_OK(rmm_allocate(mr, &u, 5 * MiB, RMM_STREAM_DEFAULT)); /* 3 pages of 2 MiB */
    CHECK_OK(rmm_allocate(mr, &v, 3 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(mr, &w, 64 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, v, 3 * MiB, RMM_STREAM_DEFAULT)); /* a page of its goes idle, mapped */
    CHECK_OK(rmm_pool_validate(mr));
    for (i = 0; i < vm->pages; i++) {
        if (up == SIZE_MAX && vm->users[i]) up = i;
        if (e == SIZE_MAX && vm->mapped[i] && vm->ext_first[i] == i) e = i;
    }
    idle = vm->idle_head;
    CHECK(up != SIZE_MAX && e != SIZE_MAX && idle != SIZE_MAX && vm->mapped_pages > 1);
    if (up == SIZE_MAX || e == SIZE_MAX || idle == SIZE_MAX) {
        printf("  (the pages are not the ones expected: not tested)\n");
        rmm_resource_destroy(mr);
        return;
    }
    BREAK(vm->users[up], vm->users[up]++, rmm_pool_validate(mr), "used blocks overlap it");
    BREAK(vm->mapped[up], vm->mapped[up] = 0, rmm_pool_validate(mr), "holds a used block but is not mapped");
    BREAK(vm->mapped[up], vm->mapped[up] = 2, rmm_pool_validate(mr), "holds a used block but has no access");
    BREAK(vm->mapped[up], vm->mapped[up] = 3, rmm_pool_validate(mr), "has mapping state 3");
    BREAK(vm->mapped_pages, vm->mapped_pages++, rmm_pool_validate(mr), "pages mapped but");
    BREAK(vm->idle_count, vm->idle_count++, rmm_pool_validate(mr), "idle pages but");
    BREAK(vm->used_pages, vm->used_pages++, rmm_pool_validate(mr), "pages in use but");
    BREAK(vm->noaccess_extents, vm->noaccess_extents++, rmm_pool_validate(mr), "extents mapped without access but");
    BREAK(vm->peak_held_pages, vm->peak_held_pages = 1, rmm_pool_validate(mr), "more pages held than the recorded peak");
    BREAK(vm->ext_first[up], vm->ext_first[up] = up + 1, rmm_pool_validate(mr), "lies outside its extent");
    BREAK(vm->ext_len[e], vm->ext_len[e]++, rmm_pool_validate(mr), "is not mapped whole");
    BREAK(vm->ext_used[e], vm->ext_used[e]++, rmm_pool_validate(mr), "extent at page");
    /* a used page at the head of the idle list */
    head = vm->idle_head;
    next = vm->idle_next[up];
    vm->idle_head = up;
    vm->idle_next[up] = head;
    EXPECT_CORRUPT(rmm_pool_validate(mr), "is listed idle but is not", "a used page listed idle");
    vm->idle_head = head;
    vm->idle_next[up] = next;
    CHECK_OK(rmm_pool_validate(mr));
    CHECK_OK(rmm_allocate(mr, &v, 3 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, v, 3 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, w, 64 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, u, 5 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_pool_validate(mr));
    rmm_resource_destroy(mr);
}

/* ---- the fixed-size resource (rmm__fixed_validate), alone and as a binning resource's bin ---- */
TEST(fixed_size_validate_catches_corruption) {
    rmm_resource *mr = NULL;
    rmm_fixed_size_desc fd = rmm_fixed_size_desc_default();
    rmm__fixed *f;
    rmm__fstream *s;
    rmm__fchunk *c0, *c1;
    void *a[10];
    size_t i, ia;
    uint64_t *bits;
    NEED_GPU();
    fd.block_bytes = 4096;
    fd.blocks_to_preallocate = 8;
    CHECK_OK(rmm_fixed_size_create(&mr, rmm_get_current_device_resource(), &fd));
    if (!mr) return;
    f = (rmm__fixed *)mr;
    for (i = 0; i < 10; i++) CHECK_OK(rmm_allocate(mr, &a[i], 4096, RMM_STREAM_DEFAULT)); /* a second chunk */
    for (i = 2; i < 10; i++) CHECK_OK(rmm_deallocate(mr, a[i], 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_resource_validate(mr));
    s = f->so.count == 1 ? (rmm__fstream *)f->so.list[0] : NULL;
    CHECK(f->chunk_count == 2 && s && s->count == 14 && s->covered == s->count && f->used_blocks == 2);
    if (f->chunk_count != 2 || !s || s->count < 2) {
        rmm_resource_destroy(mr);
        return;
    }
    c0 = f->chunks[0];
    c1 = f->chunks[1];
    f->chunks[0] = c1;
    f->chunks[1] = c0;
    EXPECT_CORRUPT(rmm_resource_validate(mr), "chunk table is not sorted", "two chunks swapped");
    f->chunks[0] = c0;
    f->chunks[1] = c1;
    CHECK_OK(rmm_resource_validate(mr));
    BREAK(f->chunk_base[1], f->chunk_base[1] += 4096, rmm_resource_validate(mr), "chunk 1's base is recorded as");
    BREAK(s->ss.index, s->ss.index = 3, rmm_resource_validate(mr), "stream state 0 records index 3");
    BREAK(s->covered, s->covered = s->count + 1, rmm_resource_validate(mr), "free blocks covered");
    BREAK(s->covered, s->covered = s->count - 1, rmm_resource_validate(mr), "but is lazy");
    BREAK(s->stack[0].index, s->stack[0].index = f->blocks_per_chunk, rmm_resource_validate(mr), "a free block is not a block of this resource");
    BREAK(s->stack[0].chunk, s->stack[0].chunk = NULL, rmm_resource_validate(mr), "a free block is not a block of this resource");
    BREAK(s->stack[1], s->stack[1] = s->stack[0], rmm_resource_validate(mr), "is free twice");
    bits = &s->stack[0].chunk->free_bits[s->stack[0].index >> 6];
    BREAK(*bits, *bits &= ~((uint64_t)1 << (s->stack[0].index & 63)), rmm_resource_validate(mr), "is listed free but marked used");
    c0 = (char *)a[0] >= f->chunks[0]->ptr && (char *)a[0] < f->chunks[0]->ptr + f->chunk_bytes ? f->chunks[0] : f->chunks[1];
    ia = (size_t)((char *)a[0] - c0->ptr) / f->block_bytes;
    bits = &c0->free_bits[ia >> 6];
    BREAK(*bits, *bits |= (uint64_t)1 << (ia & 63), rmm_resource_validate(mr), "15 blocks marked free but 14 listed");
    BREAK(f->used_blocks, f->used_blocks++, rmm_resource_validate(mr), "14 free + 3 used blocks != 16 blocks held");
    BREAK(*s, (s->count--, s->covered--), rmm_resource_validate(mr), "14 blocks marked free but 13 listed");
    for (i = 2; i < 10; i++) CHECK_OK(rmm_allocate(mr, &a[i], 4096, RMM_STREAM_DEFAULT));
    for (i = 0; i < 10; i++) CHECK_OK(rmm_deallocate(mr, a[i], 4096, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_resource_validate(mr));
    rmm_resource_destroy(mr);
}

TEST(binning_validate_reports_a_corrupt_bin) {
    rmm_resource *mr = NULL, *bin = NULL;
    rmm_binning_desc bd = rmm_binning_desc_default();
    rmm__binning *b;
    void *p = NULL;
    size_t i;
    NEED_GPU();
    bd.min_size_exponent = 10;
    bd.max_size_exponent = 12;
    CHECK_OK(rmm_binning_create(&mr, rmm_get_current_device_resource(), &bd));
    if (!mr) return;
    CHECK_OK(rmm_allocate(mr, &p, 3000, RMM_STREAM_DEFAULT)); /* the 4 KiB bin */
    b = (rmm__binning *)mr;
    for (i = 0; i < b->count; i++)
        if (b->bins[i].bytes == 4096) bin = b->bins[i].mr;
    CHECK(bin != NULL && strcmp(rmm_resource_type_name(bin), "fixed_size") == 0);
    if (bin && strcmp(rmm_resource_type_name(bin), "fixed_size") == 0) {
        rmm__fixed *f = (rmm__fixed *)bin;
        BREAK(f->used_blocks, f->used_blocks++, rmm_resource_validate(mr), "fixed_size: ");
        BREAK(f->chunk_base[0], f->chunk_base[0] += 256, rmm_resource_validate(mr), "chunk 0's base is recorded as");
    }
    CHECK_OK(rmm_deallocate(mr, p, 3000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(mr, &p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_resource_validate(mr));
    rmm_resource_destroy(mr);
}

/* ---- the arena (rmm__arena_validate) ---- */
TEST(arena_validate_catches_corruption) {
    rmm_resource *mr = NULL;
    rmm_arena_desc ad = rmm_arena_desc_default();
    rmm__arena *a;
    rmm__arena_local *l;
    rmm__chunk *c, *empty = NULL;
    rmm__block *xb, *q;
    void *x = NULL, *y = NULL, *z = NULL, *big = NULL;
    size_t idx;
    NEED_GPU();
    ad.arena_bytes = 16 * MiB;
    ad.superblock_bytes = MiB;
    CHECK_OK(rmm_arena_create(&mr, rmm_get_current_device_resource(), &ad));
    if (!mr) return;
    CHECK_OK(rmm_allocate(mr, &x, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(mr, &y, 600 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(mr, &z, 600 * KiB, RMM_STREAM_DEFAULT)); /* a second superblock */
    CHECK_OK(rmm_allocate(mr, &big, 3 * MiB, RMM_STREAM_DEFAULT)); /* a large block of the global arena */
    CHECK_OK(rmm_deallocate(mr, z, 600 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_resource_validate(mr));
    a = (rmm__arena *)mr;
    l = a->so.count == 1 ? (rmm__arena_local *)a->so.list[0] : NULL;
    xb = l && rmm__addr_map_find(&l->used, (uintptr_t)x) ? (rmm__block *)*rmm__addr_map_find(&l->used, (uintptr_t)x) : NULL;
    CHECK(l && xb && l->superblock_count >= 2);
    if (!l || !xb) {
        rmm_resource_destroy(mr);
        return;
    }
    for (c = l->superblocks; c; c = c->next)
        if (c->first && !c->first->phys_next && c->first->owner) empty = c; /* wholly free */
    /* the global arena */
    BREAK(a->global_used.count, a->global_used.count++, rmm_resource_validate(mr), "arena (global): block counts are off");
    BREAK(a->global_chunk.size, a->global_chunk.size += a->sb_bytes, rmm_resource_validate(mr), "arena (global): the blocks of chunk");
    /* a thread's arena */
    BREAK(l->ss.index, l->ss.index = 7, rmm_resource_validate(mr), "arena 0 records index 7");
    idx = rmm__arena_index(a, x);
    BREAK(a->owner[idx], a->owner[idx] = NULL, rmm_resource_validate(mr), "the owner table does not name");
    BREAK(l->superblock_count, l->superblock_count++, rmm_resource_validate(mr), "superblocks but holds");
    BREAK(l->superblocks->next, l->superblocks->next = l->superblocks, rmm_resource_validate(mr), "superblocks but holds more"); /* a cycle (it hung validate until review 40) */
    BREAK(l->used.count, l->used.count++, rmm_resource_validate(mr), "a thread arena's block counts are off");
    BREAK(l->free.free_blocks, l->free.free_blocks++, rmm_resource_validate(mr), "arena: free counts are off");
    BREAK(l->pending_count, l->pending_count = 1, rmm_resource_validate(mr), "pending blocks are off");
    BREAK(xb->parked, xb->parked = l, rmm_resource_validate(mr), "is both pending and in use");
    BREAK(xb->size, xb->size += 256, rmm_resource_validate(mr), "arena: block");
    /* a wholly free superblock moved off the grid with its blocks (nothing else names it) */
    CHECK(empty != NULL);
    if (empty) {
        empty->ptr += 256;
        for (q = empty->first; q; q = q->phys_next) q->ptr += 256;
        EXPECT_CORRUPT(rmm_resource_validate(mr), "is off the superblock grid", "a superblock off the grid");
        empty->ptr -= 256;
        for (q = empty->first; q; q = q->phys_next) q->ptr -= 256;
        CHECK_OK(rmm_resource_validate(mr));
    }
    CHECK_OK(rmm_allocate(mr, &z, 600 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, z, 600 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, x, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, y, 600 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, big, 3 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_resource_validate(mr));
    rmm_resource_destroy(mr);
}

/* The corruptions the first form of this file found the validators blind to, or hung or crashed
   on (session 39, since mended): a cycle in a quick list and in the VIRTUAL pool's idle list (the
   walks now end at their counts), a bin head with a back link (the next take of the bin wrote
   through it), a free block naming lists with no bin table (read through NULL), and an idle list
   emptied or with a broken back link (it was checked one way only); and the two a review found
   after (review 40): the pool's chunk list in a cycle (hung), an idle link out of the range (read
   out of bounds). The arena's superblock list in a cycle is in the arena's test above. */
TEST(validate_ends_on_cycles_and_checks_links_both_ways) {
    rmm_resource *mr;
    rmm__pool *p;
    rmm__pstream *s;
    rmm__block *A, *C, *Q;
    void *a = NULL, *b = NULL, *c = NULL, *d = NULL, *q = NULL, *r = NULL;
    NEED_GPU();
    if ((mr = new_pool(RMM_POOL_GROWTH_GEOMETRIC, 32 * MiB)) == NULL) return;
    p = (rmm__pool *)mr;
    CHECK_OK(rmm_allocate(mr, &a, 2 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(mr, &b, 4 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(mr, &c, 2 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(mr, &d, 4 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(mr, &q, 4 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate(mr, &r, 4 * KiB, RMM_STREAM_DEFAULT));
    A = pool_block(p, a);
    C = pool_block(p, c);
    Q = pool_block(p, q);
    CHECK_OK(rmm_deallocate(mr, a, 2 * MiB, RMM_STREAM_DEFAULT)); /* two free blocks of one bin */
    CHECK_OK(rmm_deallocate(mr, c, 2 * MiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, q, 4 * KiB, RMM_STREAM_DEFAULT)); /* parked in the quick list of 4 KiB */
    CHECK_OK(rmm_pool_validate(mr));
    CHECK(A && C && Q && A->owner && A->owner == C->owner && Q->parked);
    if (A && C && Q && A->owner && A->owner == C->owner && Q->parked) {
        rmm__tlsf *t = A->owner;
        rmm__block *head = t->heads[A->bin / RMM__TLSF_SL][A->bin % RMM__TLSF_SL];
        s = RMM__PSTREAM_OF(t);
        BREAK(Q->free_next, Q->free_next = Q, rmm_pool_validate(mr), "quick lists hold more than");
        CHECK(head == A || head == C);
        if (head == A || head == C) BREAK(head->free_prev, head->free_prev = head, rmm_pool_validate(mr), "bin list broken at");
        BREAK(A->owner, A->owner = &s->large, rmm_pool_validate(mr), "names lists without a bin table");
    }
    CHECK(p->chunks != NULL);
    if (p->chunks) /* the chunk list in a cycle (it hung validate until review 40) */
        BREAK(p->chunks->next, p->chunks->next = p->chunks, rmm_pool_validate(mr), "the chunk list holds more than");
    CHECK_OK(rmm_deallocate(mr, b, 4 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, d, 4 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(mr, r, 4 * KiB, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_pool_validate(mr));
    rmm_resource_destroy(mr);
    if ((mr = new_pool(RMM_POOL_GROWTH_VIRTUAL, 64 * MiB)) == NULL) return;
    {
        rmm__pool_vm *vm = &((rmm__pool *)mr)->vm;
        void *u = NULL, *v = NULL;
        size_t h;
        CHECK_OK(rmm_allocate(mr, &u, 3 * MiB, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_allocate(mr, &v, 3 * MiB, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_deallocate(mr, v, 3 * MiB, RMM_STREAM_DEFAULT)); /* a page goes idle */
        CHECK_OK(rmm_pool_validate(mr));
        h = vm->idle_head;
        CHECK(h != SIZE_MAX && vm->idle_count >= 1);
        if (h != SIZE_MAX) {
            BREAK(vm->idle_head, vm->idle_head = SIZE_MAX, rmm_pool_validate(mr), "pages listed idle of");
            BREAK(vm->idle_next[h], vm->idle_next[h] = h, rmm_pool_validate(mr), "the idle list is longer than");
            BREAK(vm->idle_prev[h], vm->idle_prev[h] = h, rmm_pool_validate(mr), "has a broken back link");
            /* a link out of the range, near and far: the walk ended only after reading idle_next
               there (ASan: out of bounds; far: a crash) until review 40 */
            BREAK(vm->idle_next[h], vm->idle_next[h] = vm->pages, rmm_pool_validate(mr), "leaves the range");
            BREAK(vm->idle_next[h], vm->idle_next[h] = (size_t)1 << 40, rmm_pool_validate(mr), "leaves the range");
        }
        CHECK_OK(rmm_deallocate(mr, u, 3 * MiB, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_pool_validate(mr));
        rmm_resource_destroy(mr);
    }
}

int main(void) {
    HARNESS_INIT();
    RUN(pool_geometric_validate_catches_corruption);
    RUN(pool_on_demand_validate_catches_corruption);
    RUN(pool_virtual_validate_catches_corruption);
    RUN(pool_ring_validate_catches_corruption);
    RUN(pool_virtual_pages_validate_catches_corruption);
    RUN(fixed_size_validate_catches_corruption);
    RUN(binning_validate_reports_a_corrupt_bin);
    RUN(arena_validate_catches_corruption);
    RUN(validate_ends_on_cycles_and_checks_links_both_ways);
    return harness_main_end();
}
