/* tests/refusing.h - a resource whose frees can be refused on purpose, for the tests of clean-ups
   on failure paths (RMM__CLEANUP): it allocates from the current device resource, and while
   refuse_frees is above 0 each free is refused with RMM_ERROR_CUDA and the message "refusing:
   free refused on purpose (N more to refuse)", N the count left. Include after rmm.h. */
#ifndef RMM_TESTS_REFUSING_H
#define RMM_TESTS_REFUSING_H
static int refuse_frees;
static rmm_status refusing_allocate(rmm_resource *self, void **ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    (void)self;
    return rmm_allocate_aligned(rmm_get_current_device_resource(), ptr, bytes, alignment, stream);
}
static rmm_status refusing_deallocate(rmm_resource *self, void *ptr, size_t bytes, size_t alignment, rmm_stream stream) {
    (void)self;
    if (refuse_frees > 0)
        return rmm_set_last_error(RMM_ERROR_CUDA, "refusing: free refused on purpose (%d more to refuse)", --refuse_frees);
    return rmm_deallocate_aligned(rmm_get_current_device_resource(), ptr, bytes, alignment, stream);
}
static const rmm_resource_vtable refusing_vtable = {"refusing", refusing_allocate, refusing_deallocate, NULL, NULL};
/* A refusing resource (its vtable set, the rest zero). */
static rmm_resource refusing_resource(void) {
    rmm_resource r;
    memset(&r, 0, sizeof r);
    r.vtable = &refusing_vtable;
    return r;
}
#endif
