/* Nsight Systems marks (RMM_NVTX, CUDA backend): every rmm_allocate / rmm_deallocate is an NVTX
   mark in the "rmm.h" domain whose message names the call and the resource and whose payload is
   the size. The test attaches itself as an NVTX tool (a static injection: NVTX calls the
   InitializeInjectionNvtx2_fnptr defined below on first use) and records every mark. It uses a
   callback resource over host memory, so it needs the CUDA headers but no GPU; on the host
   backend, where RMM_NVTX compiles to nothing, it reports itself skipped. */
#define RMM_NVTX
#define NVTX_STATIC_INJECTION_IMPL /* this file defines the two injection pointers NVTX looks for */
#include <stdint.h>
#if !defined(RMM_BACKEND_HOST)
#ifdef __cplusplus
extern "C" {
#endif
struct nvtxExtModuleInfo_t;
extern int (*InitializeInjectionNvtx2_fnptr)(const void *(*get_export_table)(uint32_t id));
extern int (*InitializeInjectionNvtxExtension_fnptr)(struct nvtxExtModuleInfo_t *info);
#ifdef __cplusplus
}
#endif
#endif
#define RMM_IMPLEMENTATION
#include "../rmm.h"
#include "harness.h"
#include <stdlib.h>
#include <string.h>

#if defined(RMM_BACKEND_HOST)
int main(void) {
    printf("nvtx cases skipped: RMM_NVTX marks exist on the CUDA backend only\n");
    printf("0 passed, 0 failed, 1 skipped\n");
    return 0;
}
#else
/* ---- a tiny NVTX tool: registered strings and marks, recorded ---- */
#define MAX_STRINGS 64
#define MAX_MARKS 256
static char tool_strings[MAX_STRINGS][96];
static int tool_string_count;
static char tool_domain_name[32];
typedef struct mark {
    char message[96];
    unsigned long long payload;
    int payload_type;
} mark;
static mark tool_marks[MAX_MARKS];
static int tool_mark_count;

static nvtxDomainHandle_t NVTX_API tool_domain_create(const char *name) {
    snprintf(tool_domain_name, sizeof tool_domain_name, "%s", name);
    return (nvtxDomainHandle_t)(uintptr_t)0x1;
}
static nvtxStringHandle_t NVTX_API tool_register_string(nvtxDomainHandle_t domain, const char *text) {
    (void)domain;
    if (tool_string_count == MAX_STRINGS) return NULL;
    snprintf(tool_strings[tool_string_count], sizeof tool_strings[0], "%s", text);
    tool_string_count++;
    return (nvtxStringHandle_t)(uintptr_t)tool_string_count; /* 1-based index */
}
static void NVTX_API tool_mark(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *ev) {
    mark *m;
    (void)domain;
    if (tool_mark_count == MAX_MARKS) return;
    m = &tool_marks[tool_mark_count++];
    if (ev->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
        uintptr_t i = (uintptr_t)ev->message.registered;
        snprintf(m->message, sizeof m->message, "%s", i >= 1 && i <= (uintptr_t)tool_string_count ? tool_strings[i - 1] : "(bad handle)");
    } else if (ev->messageType == NVTX_MESSAGE_TYPE_ASCII) {
        snprintf(m->message, sizeof m->message, "%s", ev->message.ascii);
    } else {
        snprintf(m->message, sizeof m->message, "(message type %d)", (int)ev->messageType);
    }
    m->payload_type = (int)ev->payloadType;
    m->payload = ev->payload.ullValue;
}
static int NVTX_API tool_init(NvtxGetExportTableFunc_t get_table) {
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get_table(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) return 0;
    *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)tool_domain_create;
    *table[NVTX_CBID_CORE2_DomainRegisterStringA] = (NvtxFunctionPointer)tool_register_string;
    *table[NVTX_CBID_CORE2_DomainMarkEx] = (NvtxFunctionPointer)tool_mark;
    return 1;
}
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = tool_init;
NvtxExtInitializeInjectionFunc_t InitializeInjectionNvtxExtension_fnptr = NULL; /* the memory extension: not recorded */

/* ---- a resource over host memory, so no GPU is needed ---- */
static rmm_status host_alloc(void **ptr, size_t bytes, rmm_stream stream, void *arg) {
    (void)stream;
    (void)arg;
    *ptr = aligned_alloc(256, (bytes + 255) / 256 * 256);
    return *ptr ? RMM_SUCCESS : RMM_ERROR_OUT_OF_MEMORY;
}
static void host_free(void *ptr, size_t bytes, rmm_stream stream, void *arg) {
    (void)bytes;
    (void)stream;
    (void)arg;
    free(ptr);
}
static int marks_named(const char *message) {
    int i, n = 0;
    for (i = 0; i < tool_mark_count; i++) n += strcmp(tool_marks[i].message, message) == 0;
    return n;
}

TEST(allocate_and_free_are_marks_with_size_and_name) {
    rmm_resource *cb = NULL;
    void *p = NULL, *q = NULL;
    int before;
    CHECK_OK(rmm_callback_resource_create(&cb, host_alloc, host_free, NULL));
    before = tool_mark_count;
    CHECK_OK(rmm_allocate(cb, &p, 1000, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_allocate_aligned(cb, &q, 4096, 128, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate_aligned(cb, q, 4096, 128, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(cb, p, 1000, RMM_STREAM_DEFAULT));
    CHECK(strcmp(tool_domain_name, "rmm.h") == 0);
    CHECK(tool_mark_count == before + 4);
    if (tool_mark_count == before + 4) {
        CHECK(strcmp(tool_marks[before].message, "allocate: callback") == 0);
        CHECK(tool_marks[before].payload_type == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64);
        CHECK(tool_marks[before].payload == 1000);
        CHECK(strcmp(tool_marks[before + 1].message, "allocate: callback") == 0);
        CHECK(tool_marks[before + 1].payload == 4096);
        CHECK(strcmp(tool_marks[before + 2].message, "free: callback") == 0);
        CHECK(tool_marks[before + 2].payload == 4096);
        CHECK(strcmp(tool_marks[before + 3].message, "free: callback") == 0);
        CHECK(tool_marks[before + 3].payload == 1000);
    }
    rmm_resource_destroy(cb);
}

TEST(the_top_resource_is_named_and_failures_are_marked) {
    rmm_resource *cb = NULL, *limit = NULL;
    void *p = NULL;
    CHECK_OK(rmm_callback_resource_create(&cb, host_alloc, host_free, NULL));
    CHECK_OK(rmm_limiting_adaptor_create(&limit, cb, 4096));
    tool_mark_count = 0;
    CHECK_OK(rmm_allocate(limit, &p, 3000, RMM_STREAM_DEFAULT));
    CHECK_STATUS(rmm_allocate(limit, &p, 8192, RMM_STREAM_DEFAULT), RMM_ERROR_OUT_OF_MEMORY);
    CHECK(tool_mark_count == 2);
    CHECK(marks_named("allocate: limiting") == 1);
    CHECK(marks_named("allocate failed: limiting") == 1);
    CHECK(tool_mark_count < 2 || tool_marks[1].payload == 8192);
    rmm_resource_destroy(limit);
    rmm_resource_destroy(cb);
}

TEST(strings_are_registered_once_per_type) {
    rmm_resource *cb = NULL;
    void *p = NULL;
    int strings, i;
    CHECK_OK(rmm_callback_resource_create(&cb, host_alloc, host_free, NULL));
    CHECK_OK(rmm_allocate(cb, &p, 64, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(cb, p, 64, RMM_STREAM_DEFAULT));
    strings = tool_string_count;
    for (i = 0; i < 100; i++) {
        CHECK_OK(rmm_allocate(cb, &p, 64, RMM_STREAM_DEFAULT));
        CHECK_OK(rmm_deallocate(cb, p, 64, RMM_STREAM_DEFAULT));
    }
    CHECK(tool_string_count == strings); /* no string per call */
    rmm_resource_destroy(cb);
}

TEST(zero_bytes_and_null_frees_make_no_mark) {
    rmm_resource *cb = NULL;
    void *p = NULL;
    CHECK_OK(rmm_callback_resource_create(&cb, host_alloc, host_free, NULL));
    tool_mark_count = 0;
    CHECK_OK(rmm_allocate(cb, &p, 0, RMM_STREAM_DEFAULT));
    CHECK_OK(rmm_deallocate(cb, NULL, 0, RMM_STREAM_DEFAULT));
    CHECK(tool_mark_count == 0);
    rmm_resource_destroy(cb);
}

int main(void) {
    /* no HARNESS_INIT: nothing here needs a GPU */
    RUN(allocate_and_free_are_marks_with_size_and_name);
    RUN(the_top_resource_is_named_and_failures_are_marked);
    RUN(strings_are_registered_once_per_type);
    RUN(zero_bytes_and_null_frees_make_no_mark);
    return harness_main_end();
}
#endif
