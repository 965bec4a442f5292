/* SPDX-License-Identifier: MIT */
/*
 * fault_alloc.h — routes the library's own host allocations through numbered
 * fault injection (core/fault.h). CMake force-includes it (-include) into
 * every source of the library except volk, so no call site changes: malloc,
 * calloc, realloc and strdup become tandem__fault_* functions that fail (NULL,
 * errno ENOMEM) when the fault hook says so, naming the file and line.
 * free is untouched. Libraries tandem calls (SPIRV-Cross, the Vulkan loader,
 * XRT) allocate on their own and are not counted.
 */
#ifndef TANDEM_CORE_FAULT_ALLOC_H_
#define TANDEM_CORE_FAULT_ALLOC_H_

/* The real declarations first, so later includes see the originals. */
#include <stdlib.h>
#include <string.h>

#ifndef TANDEM_UNTESTABLE
void *tandem__fault_malloc(size_t size, const char *site);
void *tandem__fault_calloc(size_t count, size_t size, const char *site);
void *tandem__fault_realloc(void *ptr, size_t size, const char *site);
char *tandem__fault_strdup(const char *s, const char *site);

#define TANDEM__FAULT_STR2(x) #x
#define TANDEM__FAULT_STR(x) TANDEM__FAULT_STR2(x)
#define TANDEM__FAULT_SITE __FILE__ ":" TANDEM__FAULT_STR(__LINE__)
#define malloc(size) tandem__fault_malloc((size), TANDEM__FAULT_SITE)
#define calloc(count, size) tandem__fault_calloc((count), (size), TANDEM__FAULT_SITE)
#define realloc(ptr, size) tandem__fault_realloc((ptr), (size), TANDEM__FAULT_SITE)
#define strdup(s) tandem__fault_strdup((s), TANDEM__FAULT_SITE)
#endif

#endif /* TANDEM_CORE_FAULT_ALLOC_H_ */
