/* SPDX-License-Identifier: MIT */
/*
 * host_gpu.h — a GPU that lives in host memory: the registry's GPU backend
 * "host" (backends/host/host_gpu.c, built into the library), a test and
 * development device, never hardware. It lets core/'s planner and tracker be
 * tested without a Vulkan device, and the suite run with three real queues.
 *
 * It implements core/backend.h's vtable for real: buffers are host memory,
 * fills and copies move the bytes, dispatches call C functions (host
 * kernels, below) with the bound bytes, each GPU queue is a host thread that
 * runs its regions in submission order once their waits are met, and each
 * lane's timeline is a counter guarded by one mutex and condition variable.
 * Any runtime selects it with the runtime option gpu_backend = "host"
 * (HOST_GPU_BACKEND); tests that link the library's objects shape the next
 * one opened with host_gpu_configure() and reach the extras below.
 *
 * What it adds for tests:
 *   - a log of everything core asked it to do: each region recorded (lane,
 *     commands, barriers), each region submitted (waits and signal value),
 *     each command and barrier run (with its position in the region and its
 *     operands or scopes), each host signal;
 *   - holds: a held lane starts no region until released, so a test can put
 *     several submissions in flight in a chosen state (retirement order,
 *     cancelling before the work runs);
 *   - an ordering check: every region, as it starts, compares its accesses
 *     with the earlier ones to its buffers; a conflicting pair (overlapping
 *     bytes, one side writes) whose earlier region the new one is not ordered
 *     after by timeline waits is counted (host_gpu_unordered) and logged;
 *     inside a region, one whose barriers do not order it (a barrier orders
 *     its source kinds of work before it against its destination kinds
 *     after it, and barriers chain; a missing or too-narrow barrier both
 *     count). The
 *     model is Vulkan's: a region is ordered after what its waits name,
 *     transitively, and a lane's value v covers that lane's earlier values;
 *     queue order alone orders nothing (core must not rely on it). Work the
 *     host saw finished (a wait or a timeline query returned its value)
 *     orders everything submitted after: core retires it then and orders
 *     nothing after it any more. Work the NPU lane does is not seen, but the
 *     ordering it carries is: the NPU lane thread's waits and signals pass it
 *     on. Host maps are not checked.
 */
#ifndef TANDEM_BACKENDS_HOST_HOST_GPU_H_
#define TANDEM_BACKENDS_HOST_HOST_GPU_H_

#include <stdbool.h>
#include <stdint.h>

#include "tandem/tandem.h"
#include "tandem/tandem_testing.h"

typedef struct host_gpu host_gpu_t;

/*--------------------------------------------------------------------------
 * Host kernels: what a tandem_kernel_desc_t's spirv points to (spirv_size =
 * sizeof(host_gpu_kernel_code_t)) on the host GPU. reads/writes say what
 * reflection would report about each binding (core checks the contract
 * against them as it does against SPIR-V).
 *--------------------------------------------------------------------------*/

/* Not a SPIR-V magic number, and not text (the 0x7F byte). */
#define HOST_GPU_KERNEL_MAGIC 0x7F4B4748u

/* What a host kernel (and a SPIR-V kernel's twin, tandem_testing.h) gets. */
typedef tandem_test_host_dispatch_t host_gpu_dispatch_t;

typedef void (*host_gpu_kernel_fn)(const host_gpu_dispatch_t *dispatch);

typedef struct host_gpu_kernel_code {
  uint32_t magic; /* HOST_GPU_KERNEL_MAGIC */
  uint32_t binding_count;
  bool reads[TANDEM_MAX_BINDINGS], writes[TANDEM_MAX_BINDINGS];
  uint32_t push_constant_bytes;
  uint32_t local_size[3]; /* 0s: 1x1x1 */
  host_gpu_kernel_fn run;
} host_gpu_kernel_code_t;

/*--------------------------------------------------------------------------
 * Selecting it
 *--------------------------------------------------------------------------*/

typedef struct host_gpu_config {
  /* All three GPU lanes on one in-order queue (lavapipe's shape); default:
   * one queue per lane (the H200's). Either way each lane has its own
   * timeline. */
  bool one_queue;
  /* Every GPU lane starts held (host_gpu_hold). */
  bool held;
  /* Events the log keeps (default 4096); later ones are counted as dropped. */
  uint32_t log_capacity;
  /* record_end fails (ERROR_OUT_OF_MEMORY, "host GPU: recording slot S
   * failed") for every slot S whose bit is set: the error path of recording,
   * on whichever thread records that slot. */
  uint32_t fail_record_slots;
} host_gpu_config_t;

/* The name the host GPU has in core's registry (runtime option gpu_backend). */
#define HOST_GPU_BACKEND "host"

/* Makes the next host GPU a runtime opens take |config| (NULL: defaults). */
void host_gpu_configure(const host_gpu_config_t *config);
/* The host GPU behind core's |gpu| (a tandem__gpu_t *), NULL when |gpu| is
 * another backend's. Tests reach it through tests/host_gpu_probe.h's
 * host_gpu_of(runtime), which reads core's layouts; this file reads none. */
struct tandem__gpu;
host_gpu_t *host_gpu_from(struct tandem__gpu *gpu);

/*--------------------------------------------------------------------------
 * Holding lanes. A held GPU lane starts no further region until released;
 * on a shared queue (one_queue) a held region at the head holds the regions
 * queued behind it, as an in-order queue does.
 *--------------------------------------------------------------------------*/

void host_gpu_hold(host_gpu_t *gpu, tandem_lane_t lane);
/* Lets |regions| more regions of |lane| start; the lane stays held after. */
void host_gpu_release(host_gpu_t *gpu, tandem_lane_t lane, uint32_t regions);
/* Not held any more. */
void host_gpu_run(host_gpu_t *gpu, tandem_lane_t lane);
/* Waits until |lane|'s timeline reached |value|; false after |timeout_ms|. */
bool host_gpu_wait_value(host_gpu_t *gpu, tandem_lane_t lane, uint64_t value, uint32_t timeout_ms);
/* The current value of |lane|'s timeline. */
uint64_t host_gpu_value(host_gpu_t *gpu, tandem_lane_t lane);
/* Regions submitted to |lane| that have not started yet. */
uint32_t host_gpu_queued(host_gpu_t *gpu, tandem_lane_t lane);

/*--------------------------------------------------------------------------
 * The log
 *--------------------------------------------------------------------------*/

typedef enum host_gpu_event_kind {
  HOST_GPU_RECORD = 1, /* a region's piece recorded for a slot (record_begin .. record_end) */
  HOST_GPU_SUBMIT,     /* a region handed to its queue */
  HOST_GPU_START,      /* a region began: its waits were met and its lane not held */
  HOST_GPU_BARRIER,    /* a barrier ran, before command |node| (src_work, dst_work) */
  HOST_GPU_FILL,       /* a command ran: command id |node| (core: the plan node) */
  HOST_GPU_COPY,
  HOST_GPU_DISPATCH,
  HOST_GPU_END,       /* a region finished and signalled its value */
  HOST_GPU_SIGNAL,    /* the host signalled |lane| to |value| (the NPU lane) */
  HOST_GPU_UNORDERED, /* the ordering check failed (see the top) */
} host_gpu_event_kind_t;

typedef struct host_gpu_event {
  host_gpu_event_kind_t kind;
  uint32_t program; /* numbered from 1 in creation order (host_gpu_program_of) */
  uint32_t slot, region;
  tandem_lane_t lane;
  uint32_t node;     /* commands, BARRIER: command id (plan node); RECORD: the piece's commands */
  uint32_t barriers; /* RECORD: barriers in the piece */
  uint32_t piece;    /* RECORD: which piece of the region (core/backend.h); 0 when whole */
  /* Commands and barriers: the position in the region's recorded list
   * (barriers count), and what the command was recorded with. */
  uint32_t position;
  uint32_t src_work, dst_work;            /* BARRIER: TANDEM__WORK_* (core/backend.h) */
  const uint8_t *memory;                  /* FILL, COPY: the destination's bytes (host_gpu_memory);
                                   DISPATCH: binding 0's (offset, length: its range) */
  const uint8_t *src_memory;              /* COPY: the source's bytes */
  uint64_t src_offset;                    /* COPY */
  uint32_t pattern;                       /* FILL */
  uint32_t binding_count;                 /* DISPATCH */
  bool indirect;                          /* DISPATCH: counts read from a buffer */
  uint64_t wait_values[TANDEM_MAX_LANES]; /* SUBMIT */
  uint64_t value;                         /* the region's signal value; SIGNAL: the value */
  /* UNORDERED: the earlier access's lane and value, and the buffer bytes;
   * FILL, COPY: the destination bytes. */
  tandem_lane_t other_lane;
  uint64_t other_value;
  uint64_t offset, length;
} host_gpu_event_t;

/* Copies up to |capacity| events, oldest first; returns how many the log
 * holds. |dropped| (may be NULL) receives how many did not fit the log. */
uint32_t host_gpu_events(host_gpu_t *gpu, host_gpu_event_t *out, uint32_t capacity,
                         uint64_t *dropped);
void host_gpu_clear_events(host_gpu_t *gpu);
/* Conflicting access pairs found unordered since the GPU opened. */
uint64_t host_gpu_unordered(host_gpu_t *gpu);

/* The program number of a host GPU program (its events' |program|) from its
 * native object, 0 for NULL; tests/host_gpu_probe.h's host_gpu_program_of
 * finds the native of a prepared executable. */
uint32_t host_gpu_program_id(const void *native);
/* The bytes of a host GPU buffer from its native object, NULL for NULL
 * (tests/host_gpu_probe.h's host_gpu_memory finds it for a tandem buffer). */
uint8_t *host_gpu_buffer_bytes(const void *native);

#endif /* TANDEM_BACKENDS_HOST_HOST_GPU_H_ */
