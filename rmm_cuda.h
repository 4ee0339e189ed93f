/* rmm_cuda.h - host memory resources for rmm.h (malloc-based and pinned) - MIT licence (see rmm.h)

   Include it after rmm.h. Its implementation is emitted by the same file that defines
   RMM_IMPLEMENTATION, when rmm_cuda.h is included there after rmm.h:

      #define RMM_IMPLEMENTATION
      #include "rmm.h"
      #include "rmm_cuda.h"

   The host resource interface mirrors rmm_resource without streams: host memory is synchronous.
   Alignments are powers of two; those below sizeof(void *) are raised to it; anything else is
   RMM_ERROR_INVALID_ARGUMENT. Both resources work on the host backend (pinned memory is then plain
   aligned host memory). */
#ifndef RMM_CUDA_H_INCLUDED
#define RMM_CUDA_H_INCLUDED
#ifndef RMM_H_INCLUDED
#error "include rmm.h before rmm_cuda.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rmm_host_resource rmm_host_resource;
typedef struct rmm_host_resource_vtable {
    const char *type_name;
    /* Called with ptr != NULL, bytes > 0 and alignment a power of two >= sizeof(void *). */
    rmm_status (*allocate)(rmm_host_resource *self, void **ptr, size_t bytes, size_t alignment);
    rmm_status (*deallocate)(rmm_host_resource *self, void *ptr, size_t bytes, size_t alignment);
    void (*destroy)(rmm_host_resource *self); /* NULL: nothing */
} rmm_host_resource_vtable;
/* A user-defined host resource embeds this as its first member. */
struct rmm_host_resource {
    const rmm_host_resource_vtable *vtable;
};

/* Allocates host memory. bytes == 0 succeeds with *ptr = NULL; *ptr is NULL after every failure.
   Fails with INVALID_ARGUMENT iff mr or ptr is NULL or alignment is not a power of two;
   OUT_OF_MEMORY iff the memory (or host memory for an over-aligned block's record) is not there;
   CUDA iff cudaHostAlloc fails otherwise (the pinned resource: no usable device, for one); a
   user-defined resource with what its allocate returns, and INVALID_ARGUMENT where it answers
   success with NULL or with a pointer short of the alignment (such a pointer is given back to it
   first; its deallocate's status is not reported): an alignment is honoured or refused, never
   ignored, as rmm_allocate_aligned. Thread-safe; the cost is that of malloc or cudaHostAlloc. */
RMMDEF rmm_status rmm_host_allocate(rmm_host_resource *mr, void **ptr, size_t bytes, size_t alignment);
/* Frees memory from rmm_host_allocate with the same bytes and alignment. A NULL ptr is a no-op
   (SUCCESS, with nothing else checked). Fails with INVALID_ARGUMENT iff mr is NULL, alignment is
   not a power of two, or bytes is 0 (no allocation has that size); CORRUPTION iff the new_delete
   resource did not hand the pointer out (or it was freed already) or bytes is not the size it was
   allocated with, or the pinned resource finds the block was not allocated with that alignment
   (in RMM_DEBUG builds also: not by a pinned resource, freed already, or with another size; the
   block stays allocated, nothing is freed); CUDA iff cudaFreeHost fails; a user-defined
   resource with what its deallocate returns. */
RMMDEF rmm_status rmm_host_deallocate(rmm_host_resource *mr, void *ptr, size_t bytes, size_t alignment);
/* posix_memalign / free. Its frees are checked: it keeps a record of each live block (its size),
   so that a double free, a pointer it did not hand out or a wrong size is CORRUPTION, never a free()
   of it (free() of such a pointer aborts the process or corrupts the heap; RMM's new_delete_resource
   passes it on). Cost per call: a mutex and a hash lookup besides malloc's; host bytes: 64-128 per
   block live at the peak (16-byte slots, the table at most a quarter full; it does not shrink). Fails with INVALID_ARGUMENT iff out is NULL,
   OUT_OF_MEMORY iff the resource or its record table cannot be made. */
RMMDEF rmm_status rmm_new_delete_resource_create(rmm_host_resource **out);
/* cudaHostAlloc (portable, mapped) / cudaFreeHost: page-locked, device-accessible from every
   device. Alignments above 256 over-allocate. RMM_DEBUG builds keep a record of each live block, so
   that a free with the wrong size, a double free or a pointer it did not hand out is CORRUPTION
   with nothing freed (release builds leave those to CUDA). */
RMMDEF rmm_status rmm_pinned_resource_create(rmm_host_resource **out);
/* Destroys the resource (not memory still allocated from it: a pinned block allocated with an
   alignment of 256 or less can still be freed by any pinned resource). A pinned block allocated
   with an alignment above 256 must be freed before its resource is destroyed: the record that finds
   the allocation behind it goes with the resource. Afterwards another pinned resource refuses a
   free of it at its alignment (CORRUPTION), and one at 256 reaches cudaFreeHost with the aligned
   address, which frees it only where that is the allocation's own start and else fails (CUDA): its
   memory may stay allocated for the life of the process (red team 38a). NULL is a no-op. */
RMMDEF void rmm_host_resource_destroy(rmm_host_resource *mr);

#ifdef __cplusplus
}
#endif
#endif /* RMM_CUDA_H_INCLUDED */

#if defined(RMM_IMPLEMENTATION) && !defined(RMM_CUDA__IMPLEMENTATION_DONE)
#define RMM_CUDA__IMPLEMENTATION_DONE
#ifndef RMM__IMPLEMENTATION_DONE
#error "rmm_cuda.h: include rmm.h (with RMM_IMPLEMENTATION) first in the implementing file"
#endif

RMM__PRIVATE rmm_status rmm__host_check(rmm_host_resource *mr, void *ptr_or_out, size_t *alignment, const char *fn) {
    if (!mr) return RMM__NULL_OUT(fn, "mr");
    if (!ptr_or_out) return RMM__NULL_OUT(fn, "ptr");
    if (!rmm__is_pow2(*alignment)) return RMM__INVALID("%s: alignment %zu is not a power of two", fn, *alignment);
    if (*alignment < sizeof(void *)) *alignment = sizeof(void *);
    return RMM_SUCCESS;
}
RMM__IMPL rmm_status rmm_host_allocate(rmm_host_resource *mr, void **ptr, size_t bytes, size_t alignment) {
    rmm_status st;
    if (ptr) *ptr = NULL;
    RMM_TRY(rmm__host_check(mr, ptr, &alignment, "rmm_host_allocate"));
    if (bytes == 0) return RMM_SUCCESS;
    if ((st = mr->vtable->allocate(mr, ptr, bytes, alignment)) != RMM_SUCCESS) {
        *ptr = NULL; /* (whatever the resource left there) */
        return st;
    }
    if (RMM__UNLIKELY(*ptr == NULL || ((uintptr_t)*ptr & (alignment - 1)) != 0)) {
        /* a resource of the user's that says yes with no memory, or ignores the alignment: refused
           as rmm_allocate_aligned refuses it (a misaligned block is given back first) */
        void *got = *ptr;
        *ptr = NULL;
        if (got) (void)mr->vtable->deallocate(mr, got, bytes, alignment);
        return RMM__INVALID("rmm_host_allocate(bytes=%zu, alignment=%zu): %s answered success with %p%s", bytes, alignment,
                            mr->vtable->type_name ? mr->vtable->type_name : "the resource", got,
                            got ? ", short of the alignment (given back)" : "");
    }
    return st;
}
RMM__IMPL rmm_status rmm_host_deallocate(rmm_host_resource *mr, void *ptr, size_t bytes, size_t alignment) {
    if (!ptr) return RMM_SUCCESS;
    RMM_TRY(rmm__host_check(mr, ptr, &alignment, "rmm_host_deallocate"));
    if (bytes == 0) return rmm__free_of_zero_bytes("rmm_host_deallocate", ptr);
    return mr->vtable->deallocate(mr, ptr, bytes, alignment);
}
RMM__IMPL void rmm_host_resource_destroy(rmm_host_resource *mr) {
    if (mr && mr->vtable->destroy) mr->vtable->destroy(mr);
}

/* ---- malloc-based ---- */
typedef struct rmm__new_delete {
    rmm_host_resource base;
    rmm__mutex lock;
    rmm__addr_map live; /* each live block's pointer -> its size (never 0): frees are checked against it */
} rmm__new_delete;
RMM__PRIVATE rmm_status rmm__new_delete_allocate(rmm_host_resource *self, void **ptr, size_t bytes, size_t alignment) {
    rmm__new_delete *r = (rmm__new_delete *)self;
    bool recorded;
    if (posix_memalign(ptr, alignment, bytes) != 0) {
        *ptr = NULL;
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "new_delete: posix_memalign(bytes=%zu, alignment=%zu) failed", bytes, alignment);
    }
    rmm__lock(&r->lock);
    recorded = rmm__addr_map_put(&r->live, (uintptr_t)*ptr, (void *)(uintptr_t)bytes);
    rmm__unlock(&r->lock);
    if (!recorded) {
        free(*ptr);
        *ptr = NULL;
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "new_delete: out of host memory for the record of a block of %zu bytes", bytes);
    }
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__new_delete_deallocate(rmm_host_resource *self, void *ptr, size_t bytes, size_t alignment) {
    rmm__new_delete *r = (rmm__new_delete *)self;
    void **slot;
    size_t held = 0;
    (void)alignment; /* (free() needs none) */
    rmm__lock(&r->lock);
    slot = rmm__addr_map_find(&r->live, (uintptr_t)ptr);
    if (slot) held = (size_t)(uintptr_t)*slot;
    if (slot && held == bytes) rmm__addr_map_remove(&r->live, (uintptr_t)ptr);
    rmm__unlock(&r->lock);
    if (!slot) return rmm__fail(RMM_ERROR_CORRUPTION, "new_delete: deallocate(ptr=%p, bytes=%zu): not allocated by this resource, or already freed (nothing freed)", ptr, bytes);
    if (held != bytes)
        return rmm__fail(RMM_ERROR_CORRUPTION, "new_delete: deallocate(ptr=%p, bytes=%zu): the block holds %zu bytes; the size must be the one allocated (nothing freed)", ptr, bytes, held);
    free(ptr);
    return RMM_SUCCESS;
}
RMM__PRIVATE void rmm__new_delete_destroy(rmm_host_resource *self) {
    rmm__new_delete *r = (rmm__new_delete *)self;
    rmm__addr_map_free(&r->live); /* (blocks still live stay the program's: they are malloc's, not the resource's) */
    rmm__mutex_destroy(&r->lock);
    RMM_SYS_FREE(r);
}
static const rmm_host_resource_vtable rmm__new_delete_vtable = {"new_delete", rmm__new_delete_allocate, rmm__new_delete_deallocate, rmm__new_delete_destroy};
RMM__IMPL rmm_status rmm_new_delete_resource_create(rmm_host_resource **out) {
    rmm__new_delete *r;
    if (!out) return RMM__NULL_OUT("rmm_new_delete_resource_create", "out");
    *out = NULL;
    r = (rmm__new_delete *)rmm__calloc(1, sizeof *r);
    if (!r) return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_new_delete_resource_create: out of host memory");
    if (!rmm__addr_map_init(&r->live, 16)) {
        RMM_SYS_FREE(r);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_new_delete_resource_create: out of host memory");
    }
    rmm__mutex_init(&r->lock);
    r->base.vtable = &rmm__new_delete_vtable;
    *out = &r->base;
    return RMM_SUCCESS;
}

/* ---- pinned: cudaHostAlloc through the platform layer ---- */
typedef struct rmm__pinned_host {
    rmm_host_resource base;
    rmm__overalign overalign;
} rmm__pinned_host;
/* RMM_DEBUG: the family of its blocks in rmm.h's debug records (rmm__dbg_note): one for every
   pinned host resource (any of them frees any of their blocks: one cudaFreeHost), another than
   rmm.h's device resources' (red team 35: its frees were not checked, and a free with the wrong
   size freed the block). */
#define RMM__PINNED_HOST_FAMILY ((uintptr_t)0x9e3779b97f4a7c15u)
RMM__PRIVATE rmm_status rmm__pinned_host_free_raw(void *raw, void *arg) {
    (void)arg;
    return rmm__pinned_free(raw);
}
RMM__PRIVATE rmm_status rmm__pinned_host_allocate(rmm_host_resource *self, void **ptr, size_t bytes, size_t alignment) {
    rmm__pinned_host *p = (rmm__pinned_host *)self;
    size_t request = bytes;
    void *raw = NULL;
    if (alignment > RMM_ALIGNMENT && !rmm__overalign_request(bytes, alignment, &request))
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pinned: allocate(bytes=%zu, alignment=%zu) overflows", bytes, alignment);
    RMM_TRY(rmm__pinned_malloc(&raw, request));
    if (alignment <= RMM_ALIGNMENT) {
        *ptr = raw;
    } else if (!rmm__overalign_remember(&p->overalign, raw, alignment, ptr)) {
        (void)rmm__pinned_free(raw);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pinned: out of host memory for alignment bookkeeping");
    }
#if RMM__DEBUG
    if (!rmm__dbg_note(*ptr, bytes, RMM__PINNED_HOST_FAMILY)) {
        if (alignment > RMM_ALIGNMENT) (void)rmm__overalign_free_block(&p->overalign, *ptr, alignment, "pinned", rmm__pinned_host_free_raw, NULL);
        else (void)rmm__pinned_free(raw);
        *ptr = NULL;
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "pinned: out of host memory for RMM_DEBUG's record of a block");
    }
#endif
    return RMM_SUCCESS;
}
RMM__PRIVATE rmm_status rmm__pinned_host_deallocate(rmm_host_resource *self, void *ptr, size_t bytes, size_t alignment) {
    rmm__pinned_host *p = (rmm__pinned_host *)self;
    rmm_status st;
#if RMM__DEBUG
    rmm__claim claim;
    RMM_TRY(rmm__dbg_take("pinned", ptr, bytes, RMM__PINNED_HOST_FAMILY, &claim));
#endif
    if (alignment > RMM_ALIGNMENT) st = rmm__overalign_free_block(&p->overalign, ptr, alignment, "pinned", rmm__pinned_host_free_raw, NULL);
    else if (RMM__UNLIKELY(rmm__overalign_misfreed(ptr)))
        st = rmm__fail(RMM_ERROR_CORRUPTION, "pinned: deallocate(ptr=%p, bytes=%zu): the block was allocated with an alignment above 256; free it with that alignment", ptr, bytes);
    else st = rmm__pinned_free(ptr);
#if RMM__DEBUG
    rmm__dbg_settle(ptr, &claim, st == RMM_SUCCESS);
#endif
    return st;
}
RMM__PRIVATE void rmm__pinned_host_destroy(rmm_host_resource *self) {
    rmm__overalign_free(&((rmm__pinned_host *)self)->overalign);
    RMM_SYS_FREE(self);
}
static const rmm_host_resource_vtable rmm__pinned_host_vtable = {"pinned", rmm__pinned_host_allocate, rmm__pinned_host_deallocate, rmm__pinned_host_destroy};
RMM__IMPL rmm_status rmm_pinned_resource_create(rmm_host_resource **out) {
    rmm__pinned_host *p;
    if (!out) return RMM__NULL_OUT("rmm_pinned_resource_create", "out");
    *out = NULL;
    p = (rmm__pinned_host *)rmm__calloc(1, sizeof *p);
    if (!p || !rmm__overalign_init(&p->overalign)) {
        RMM_SYS_FREE(p);
        return rmm__fail(RMM_ERROR_OUT_OF_MEMORY, "rmm_pinned_resource_create: out of host memory");
    }
    p->base.vtable = &rmm__pinned_host_vtable;
    *out = &p->base;
    return RMM_SUCCESS;
}
#endif /* RMM_IMPLEMENTATION */
