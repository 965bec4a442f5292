/* SPDX-License-Identifier: MIT */
/*
 * fault.h — numbered fault injection (SQLite's sqlite3FaultSim idea).
 *
 * Every native call site asks tandem__fault() first: host allocations (through
 * core/fault_alloc.h, force-included into the library's sources), every
 * fallible Vulkan call (backends/vulkan/vk_fault.c wraps the function
 * tables) and every XRT call (backends/xrt/xrt_fault.c wraps the API table).
 * Unless a test armed it through tandem_test_fault_set (tandem_testing.h),
 * it counts nothing and answers false at the cost of one relaxed atomic load.
 * TANDEM_UNTESTABLE builds make it a constant false.
 */
#ifndef TANDEM_CORE_FAULT_H_
#define TANDEM_CORE_FAULT_H_

#include <stdbool.h>
#include <stddef.h>

typedef enum tandem__fault_kind {
  TANDEM__FAULT_ALLOC = 1,  /* matches TANDEM_TEST_FAULT_ALLOC */
  TANDEM__FAULT_VULKAN = 2, /* TANDEM_TEST_FAULT_VULKAN */
  TANDEM__FAULT_XRT = 4,    /* TANDEM_TEST_FAULT_XRT */
} tandem__fault_kind_t;

#ifdef TANDEM_UNTESTABLE
#define tandem__fault(kind, site) ((void)(kind), (void)(site), false)
#define tandem__fault_armed() false
#else
/* True while a test has injection armed (objects made now get wrapped). */
bool tandem__fault_armed(void);
/* True when this call must fail: it is the armed Nth counted call (or any
 * later one, in persistent mode). |site| names the call ("vkQueueSubmit2",
 * "core/prepare.c:42") for the report. Thread-safe. */
bool tandem__fault(tandem__fault_kind_t kind, const char *site);
#endif

#endif /* TANDEM_CORE_FAULT_H_ */
