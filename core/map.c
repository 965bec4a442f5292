/* SPDX-License-Identifier: MIT */
/*
 * map.c — host maps of HOST_VISIBLE buffers (read guards and write guards).
 *
 * A map is registered in its buffer's map list under runtime->mutex only after
 * every conflicting in-flight access has finished, and submissions and session
 * stages check that list (tandem__maps_check_locked, here), so host and device
 * never touch a conflicting range at once.
 * The blocking forms drop the lock while they wait, then look again: work
 * submitted meanwhile is waited for too. Map registration may allocate (maps
 * are not on the replay path).
 */
#include <stdlib.h>
#include <string.h>

#include "core/access.h"
#include "core/buffer.h"
#include "core/buffer_int.h"
#include "core/graph_int.h"
#include "core/map.h"
#include "core/runtime_int.h"
#include "core/tracker.h"
#include "core/wait.h"

/* One live host map of a buffer range. */
typedef struct tandem__host_map {
  uint64_t id, offset, length;
  bool write;
} tandem__host_map_t;

enum { TANDEM__MAP_READ = 1, TANDEM__MAP_WRITE = 2 };

tandem_status_t tandem__maps_check_locked(const tandem__access_t *a) {
  const tandem_buffer_t *b = a->buffer;
  for (uint32_t i = 0; i < b->map_count; i++) {
    const tandem__host_map_t *m = &b->maps[i];
    if ((m->write || (a->access & TANDEM_ACCESS_WRITE)) &&
        tandem__ranges_overlap(m->offset, m->length, a->offset, a->length))
      return TANDEM_FAIL(TANDEM_ERROR_BUSY,
                         "bytes %llu..%llu of a %s buffer are held by a live host %s map; "
                         "unmap it before submitting work that %s them",
                         (unsigned long long)a->offset, (unsigned long long)(a->offset + a->length),
                         tandem_placement_name(b->placement), m->write ? "write" : "read",
                         (a->access & TANDEM_ACCESS_WRITE) ? "writes" : "reads");
  }
  return TANDEM_OK;
}

static tandem_status_t tandem__map(tandem_view_t view, tandem_map_t *out, bool write, bool block) {
  if (!out) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "out_map is NULL");
  memset(out, 0, sizeof *out);
  if (!view.buffer) return TANDEM_FAIL(TANDEM_ERROR_INVALID_ARGUMENT, "view has no buffer");
  tandem_buffer_t *buffer = view.buffer;
  tandem_runtime_t *rt = buffer->runtime;
  TANDEM_RETURN_IF_ERROR(tandem__view_check(rt, view, "map"));
  if (buffer->placement == TANDEM_PLACEMENT_GPU_LOCAL || !buffer->host)
    return TANDEM_FAIL(TANDEM_ERROR_UNSUPPORTED,
                       "a %s buffer cannot be mapped by the host; copy it to a HOST_VISIBLE "
                       "buffer with a copy node and map that",
                       tandem_placement_name(buffer->placement));
  tandem__access_t access = {buffer, view.offset, view.length,
                             write ? TANDEM_ACCESS_WRITE : TANDEM_ACCESS_READ};
  pthread_mutex_lock(&rt->mutex);
  for (;;) {
    for (uint32_t i = 0; i < buffer->map_count; i++) {
      const tandem__host_map_t *m = &buffer->maps[i];
      if ((write || m->write) &&
          tandem__ranges_overlap(m->offset, m->length, view.offset, view.length)) {
        pthread_mutex_unlock(&rt->mutex);
        return TANDEM_FAIL(TANDEM_ERROR_BUSY,
                           "bytes %llu..%llu are held by a live %s map (bytes %llu..%llu)",
                           (unsigned long long)view.offset,
                           (unsigned long long)(view.offset + view.length),
                           m->write ? "write" : "read", (unsigned long long)m->offset,
                           (unsigned long long)(m->offset + m->length));
      }
    }
    tandem__tracker_poll_locked(rt);
    uint64_t waits[TANDEM__MAX_LANES] = {0};
    if (!tandem__tracker_conflicts_locked(rt, &access, waits, NULL)) break;
    pthread_mutex_unlock(&rt->mutex);
    if (!block)
      return TANDEM_FAIL(TANDEM_ERROR_BUSY,
                         "bytes %llu..%llu of the buffer are in use by in-flight device work",
                         (unsigned long long)view.offset,
                         (unsigned long long)(view.offset + view.length));
    TANDEM_RETURN_IF_ERROR(tandem__runtime_wait(rt, waits, TANDEM__WAIT_FOREVER));
    pthread_mutex_lock(&rt->mutex);
  }
  /* Every writer of these bytes has retired (the wait above covers a
   * passed write until its submission retires): the poison is final. */
  const tandem__poison_t *poisoned = tandem__poison_find_locked(buffer, view.offset, view.length);
  if (write) {
    /* The host is about to rewrite every byte of the view. */
    tandem__poison_clear_locked(buffer, view.offset, view.length);
  } else if (poisoned) {
    tandem__poison_t p = *poisoned;
    pthread_mutex_unlock(&rt->mutex);
    return TANDEM_FAIL(p.code,
                       "bytes %llu..%llu: bytes %llu..%llu of the buffer were last written by "
                       "work that failed (%s); rewriting them (a write map of them, or work "
                       "that succeeds) clears that, and the buffer's other bytes stay readable",
                       (unsigned long long)view.offset,
                       (unsigned long long)(view.offset + view.length),
                       (unsigned long long)p.offset, (unsigned long long)(p.offset + p.length),
                       tandem_status_name(p.cause));
  }
  if (buffer->map_count == buffer->map_capacity) {
    uint32_t cap = buffer->map_capacity ? buffer->map_capacity * 2 : 4;
    tandem__host_map_t *maps = realloc(buffer->maps, cap * sizeof *maps);
    if (!maps) {
      pthread_mutex_unlock(&rt->mutex);
      return TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY,
                         "mapping bytes %llu..%llu: growing the buffer's list of live maps to %u",
                         (unsigned long long)view.offset,
                         (unsigned long long)(view.offset + view.length), cap);
    }
    buffer->maps = maps;
    buffer->map_capacity = cap;
  }
  uint64_t id = ++buffer->next_map_id;
  buffer->maps[buffer->map_count++] =
      (tandem__host_map_t){.id = id, .offset = view.offset, .length = view.length, .write = write};
  pthread_mutex_unlock(&rt->mutex);
  tandem_buffer_retain(buffer);
  out->data = (uint8_t *)buffer->host + view.offset;
  out->length = view.length;
  out->buffer_ = buffer;
  out->id_ = id;
  out->mode_ = write ? TANDEM__MAP_WRITE : TANDEM__MAP_READ;
  return TANDEM_OK;
}

tandem_status_t tandem_map_read(tandem_view_t view, tandem_map_t *out_map) {
  return tandem__map(view, out_map, false, true);
}
tandem_status_t tandem_map_write(tandem_view_t view, tandem_map_t *out_map) {
  return tandem__map(view, out_map, true, true);
}
tandem_status_t tandem_try_map_read(tandem_view_t view, tandem_map_t *out_map) {
  return tandem__map(view, out_map, false, false);
}
tandem_status_t tandem_try_map_write(tandem_view_t view, tandem_map_t *out_map) {
  return tandem__map(view, out_map, true, false);
}

void tandem_unmap(tandem_map_t *map) {
  if (!map || !map->buffer_) return;
  tandem_buffer_t *buffer = map->buffer_;
  tandem_runtime_t *rt = buffer->runtime;
  pthread_mutex_lock(&rt->mutex);
  for (uint32_t i = 0; i < buffer->map_count; i++) {
    if (buffer->maps[i].id == map->id_) {
      buffer->maps[i] = buffer->maps[--buffer->map_count];
      break;
    }
  }
  pthread_mutex_unlock(&rt->mutex);
  memset(map, 0, sizeof *map);
  tandem_buffer_release(buffer);
}
