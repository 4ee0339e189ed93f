/* tests/liar.h - a user resource that says yes without keeping its word, for the tests of what the
   library does with an upstream's answer that no resource may give (red team 37a): mode 1 answers
   every allocation with SUCCESS and *ptr NULL, mode 2 with a block 16 bytes past a 256-aligned one,
   mode 0 honestly. Its memory comes from the current device resource (256 bytes more than asked,
   so a block 16 bytes off still fits); `live` counts its blocks not given back, `allocs` the
   allocations asked of it. Include after rmm.h. */
#ifndef RMM_TESTS_LIAR_H
#define RMM_TESTS_LIAR_H
typedef struct liar_resource {
    rmm_resource base;
    int mode; /* 0: honest, 1: NULL with success, 2: 16 bytes past a 256-aligned block */
    long live, allocs;
} liar_resource;
static rmm_status liar_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    liar_resource *l = (liar_resource *)self;
    rmm_status st;
    l->allocs++;
    if (l->mode == 1) {
        *ptr = NULL;
        return RMM_SUCCESS;
    }
    st = rmm_allocate_aligned(rmm_get_current_device_resource(), ptr, bytes + 256, alignment, stream);
    if (st != RMM_SUCCESS) return st;
    l->live++;
    if (l->mode == 2) *ptr = (char *)*ptr + 16;
    return RMM_SUCCESS;
}
static rmm_status liar_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    liar_resource *l = (liar_resource *)self;
    rmm_status st = rmm_deallocate_aligned(rmm_get_current_device_resource(), (char *)ptr - ((uintptr_t)ptr & 255), bytes + 256, alignment, stream);
    if (st == RMM_SUCCESS) l->live--;
    return st;
}
static const rmm_resource_vtable liar_vtable = {"liar", liar_allocate, liar_deallocate, NULL, NULL};
#endif
