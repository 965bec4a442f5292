/* SPDX-License-Identifier: MIT */
/*
 * handle.c — completion handles that can be checked.
 *
 * A tandem_completion_t * handed to the user is not a pointer to memory: it
 * encodes an entry of one process-wide table and a serial,
 *
 *     handle = (entry index + 1) << 40 | serial        (serial: 40 bits)
 *
 * Every graph slot owns one entry for its whole life (taken when its
 * executable is prepared, given back when the executable is destroyed), so
 * submitting allocates nothing. The entry names the slot and holds the serial
 * of the completion the user currently holds for it, 0 when none. Each
 * submission takes a fresh serial from one process-wide counter; releasing
 * the completion clears the entry's serial. A handle is live exactly while its
 * serial equals its entry's: a released handle, one whose slot has since been
 * submitted again, one of a destroyed executable, or bytes that never were a
 * handle are refused with INVALID_ARGUMENT instead of acting on whatever
 * submission now occupies the slot. Serials wrap after 2^40 - 1 submissions in
 * one process (skipping 0); a handle kept across a whole wrap could alias.
 *
 * The table has two levels (TANDEM__HANDLE_CHUNKS chunks of
 * TANDEM__HANDLE_CHUNK entries, each chunk allocated on first use and kept):
 * a lookup is two loads and one compare, without a lock. Entry serials are
 * written under the owning runtime's mutex (submit, release) and read with
 * atomics; taking and giving back entries is guarded by tandem__handle_mutex.
 * Every call that uses a completion acquires it (tandem__completion_acquire):
 * under tandem__handle_mutex, the handle is checked live and its executable
 * retained. Revoking takes the same mutex, and the completion's own
 * reference on the executable is dropped only after its revoke, so a live
 * serial seen under the mutex means the executable is still alive: a wait,
 * cancel or profile racing the completion's release (even of the
 * executable's last reference) keeps what it reads alive until it returns.
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/exec_int.h"
#include "core/handle.h"
#include "core/runtime_int.h"

#define TANDEM__HANDLE_SERIAL_BITS 40
#define TANDEM__HANDLE_SERIAL_MASK ((UINT64_C(1) << TANDEM__HANDLE_SERIAL_BITS) - 1)
#define TANDEM__HANDLE_CHUNK 4096u
#define TANDEM__HANDLE_CHUNKS 4095u /* (index + 1) fits the 24 bits above the serial */

_Static_assert(sizeof(uintptr_t) == 8, "completion handles need 64-bit pointers");

typedef struct tandem__handle_entry {
  atomic_uint_fast64_t serial; /* the live completion's serial, 0 when none */
  tandem__slot_t *slot;        /* [tandem__handle_mutex] the owner, NULL when free */
  uint32_t next_free;          /* [tandem__handle_mutex] free list, index + 1 */
} tandem__handle_entry_t;

static pthread_mutex_t tandem__handle_mutex = PTHREAD_MUTEX_INITIALIZER;
static tandem__handle_entry_t *_Atomic tandem__handle_chunks[TANDEM__HANDLE_CHUNKS];
static uint32_t tandem__handle_used;      /* [mutex] entries ever handed out */
static uint32_t tandem__handle_free_head; /* [mutex] index + 1 of a free entry, 0 none */
static atomic_uint_fast64_t tandem__handle_serial;

static tandem__handle_entry_t *tandem__handle_entry(uint32_t index) {
  tandem__handle_entry_t *chunk =
      atomic_load_explicit(&tandem__handle_chunks[index / TANDEM__HANDLE_CHUNK],
                           memory_order_acquire);
  return chunk ? &chunk[index % TANDEM__HANDLE_CHUNK] : NULL;
}

tandem_status_t tandem__handle_take(tandem__slot_t *slot) {
  pthread_mutex_lock(&tandem__handle_mutex);
  uint32_t index;
  if (tandem__handle_free_head) {
    index = tandem__handle_free_head - 1;
    tandem__handle_free_head = tandem__handle_entry(index)->next_free;
  } else {
    index = tandem__handle_used;
    if (index / TANDEM__HANDLE_CHUNK >= TANDEM__HANDLE_CHUNKS) {
      pthread_mutex_unlock(&tandem__handle_mutex);
      return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                         "the process holds %u graph slots, the most completion handles can "
                         "name; release executables (tandem_exec_release) or prepare them with "
                         "fewer graph_slots",
                         TANDEM__HANDLE_CHUNK * TANDEM__HANDLE_CHUNKS);
    }
    if (!tandem__handle_entry(index)) {
      tandem__handle_entry_t *chunk = calloc(TANDEM__HANDLE_CHUNK, sizeof *chunk);
      if (!chunk) {
        pthread_mutex_unlock(&tandem__handle_mutex);
        return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "allocating completion handles");
      }
      atomic_store_explicit(&tandem__handle_chunks[index / TANDEM__HANDLE_CHUNK], chunk,
                            memory_order_release);
    }
    tandem__handle_used++;
  }
  tandem__handle_entry_t *e = tandem__handle_entry(index);
  assert(e->slot == NULL && atomic_load(&e->serial) == 0);
  e->slot = slot;
  e->next_free = 0;
  slot->handle_index = index;
  pthread_mutex_unlock(&tandem__handle_mutex);
  return TANDEM_OK;
}

void tandem__handle_give_back(tandem__slot_t *slot) {
  pthread_mutex_lock(&tandem__handle_mutex);
  tandem__handle_entry_t *e = tandem__handle_entry(slot->handle_index);
  assert(e && e->slot == slot);
  atomic_store(&e->serial, 0);
  e->slot = NULL;
  e->next_free = tandem__handle_free_head;
  tandem__handle_free_head = slot->handle_index + 1;
  pthread_mutex_unlock(&tandem__handle_mutex);
}

tandem_completion_t *tandem__handle_issue(tandem__slot_t *slot) {
  uint64_t serial;
  do {
    serial = (atomic_fetch_add(&tandem__handle_serial, 1) + 1) & TANDEM__HANDLE_SERIAL_MASK;
  } while (serial == 0);
  atomic_store(&tandem__handle_entry(slot->handle_index)->serial, serial);
  uint64_t bits = ((uint64_t)slot->handle_index + 1) << TANDEM__HANDLE_SERIAL_BITS | serial;
  return (tandem_completion_t *)(uintptr_t)bits;
}

void tandem__handle_revoke(tandem__slot_t *slot) {
  /* Under the mutex: an acquire that saw the serial live has retained the
   * executable before this returns (see the top). */
  pthread_mutex_lock(&tandem__handle_mutex);
  atomic_store(&tandem__handle_entry(slot->handle_index)->serial, 0);
  pthread_mutex_unlock(&tandem__handle_mutex);
}

int tandem__handle_state(const tandem__slot_t *slot) {
  if (slot->handle_index == UINT32_MAX) return -1;
  const tandem__handle_entry_t *e =
      slot->handle_index / TANDEM__HANDLE_CHUNK < TANDEM__HANDLE_CHUNKS
          ? tandem__handle_entry(slot->handle_index)
          : NULL;
  if (!e || e->slot != slot) return -1;
  return atomic_load(&((tandem__handle_entry_t *)e)->serial) != 0;
}

tandem__slot_t *tandem__handle_slot(const tandem_completion_t *completion) {
  uint64_t bits = (uint64_t)(uintptr_t)completion;
  uint64_t serial = bits & TANDEM__HANDLE_SERIAL_MASK;
  uint64_t index1 = bits >> TANDEM__HANDLE_SERIAL_BITS;
  if (serial == 0 || index1 == 0 || index1 > (uint64_t)TANDEM__HANDLE_CHUNK * TANDEM__HANDLE_CHUNKS)
    return NULL;
  tandem__handle_entry_t *e = tandem__handle_entry((uint32_t)(index1 - 1));
  if (!e || atomic_load(&e->serial) != serial) return NULL;
  return e->slot;
}

tandem_status_t tandem__completion_acquire(const tandem_completion_t *completion, const char *what,
                                           tandem__slot_t **out_slot) {
  *out_slot = NULL;
  if (!completion) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "%s is NULL", what);
  pthread_mutex_lock(&tandem__handle_mutex);
  tandem__slot_t *slot = tandem__handle_slot(completion);
  if (slot) tandem__exec_retain(slot->exec);
  pthread_mutex_unlock(&tandem__handle_mutex);
  if (!slot)
    return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT,
                       "%s (%p) is not a live completion: it was released already "
                       "(tandem_completion_release), or never came from tandem_exec_submit",
                       what, (const void *)completion);
  *out_slot = slot;
  return TANDEM_OK;
}
