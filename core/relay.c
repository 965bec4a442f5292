/* SPDX-License-Identifier: MIT */
/*
 * relay.c — the host thread that carries lane values between the GPUs of one
 * runtime.
 *
 * A GPU's queues wait only on timelines of their own device. So on a runtime
 * with several GPUs, each GPU has a proxy timeline, host-signalled, for every
 * lane of the other GPUs (bound when both are open, tandem__relay_bind_proxies)
 * and for the NPU lane (GPU 0 has the NPU lane's own timeline; the others
 * wait on their lane 3, which the relay signals). A region on GPU 1 that
 * waits for GPU 0's compute value 7 waits, in GPU 1's backend, on its proxy
 * of that lane for 7; at submit, core raises that proxy's want to 7
 * (tandem__relay_post_locked), and the relay signals the proxy once GPU 0's
 * compute lane reached 7.
 *
 * The relay waits for no single source in order: a want posted later may be
 * reachable first (GPU 0's work may itself wait for a proxy the relay has yet
 * to signal), so each pass reads every source's value without blocking,
 * signals each proxy as far as its source got (not only once the want is
 * reached: a want is the highest value waited for, and the source may itself
 * wait for work that needs a lower one), and only when nothing moved blocks
 * on the first pending source for at most a millisecond. Wants refer to work already
 * submitted, so every one is reached unless a device is lost; then
 * release_all signals every proxy to its want at once (like the NPU lane, I5:
 * a queue behind a proxy must never hang).
 *
 * Locking: relay->mutex guards wants and signalled values; submit takes it
 * under runtime->mutex (order: runtime->mutex, then relay->mutex). The thread
 * never takes runtime->mutex (I6): a failed wait or signal sets lost_pending,
 * folded in by whoever holds the lock next.
 */
#include <assert.h>
#include <string.h>
#include <time.h>

#include "core/backend.h"
#include "core/exec_int.h"
#include "core/plan_int.h"
#include "core/relay.h"
#include "core/runtime_int.h"

#define TANDEM__RELAY_BLOCK_NS 1000000u /* one blocking wait when nothing moved */

void tandem__relay_init(tandem_runtime_t *rt) {
  tandem__relay_t *relay = &rt->relay;
  memset(relay->want, 0, sizeof relay->want);
  memset(relay->signalled, 0, sizeof relay->signalled);
  relay->stop = false;
  relay->started = false;
  atomic_init(&relay->release_all, false);
  pthread_mutex_init(&relay->mutex, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&relay->wake, &attr);
  pthread_condattr_destroy(&attr);
}

bool tandem__relay_needed(uint32_t g, int lane) {
  if (lane == TANDEM_LANE_NPU) return g != 0;
  int h = tandem__lane_gpu(lane);
  return h >= 0 && (uint32_t)h != g;
}

/* The NPU lane's record of its last signal (read from its layout, not
 * through npu_lane.c, which stands above this file: it waits for the relay). */
static uint64_t tandem__relay_npu_done(tandem_runtime_t *rt) {
  tandem__npu_lane_t *npu = &rt->npu_lane;
  if (!npu->started) return 0;
  pthread_mutex_lock(&npu->mutex);
  uint64_t done = npu->done;
  pthread_mutex_unlock(&npu->mutex);
  return done;
}

/* The value source lane |lane| has now: its GPU's timeline (read without
 * blocking), or the NPU lane's record. */
static tandem_status_t tandem__relay_source(tandem_runtime_t *rt, int lane, uint64_t *out) {
  if (lane == TANDEM_LANE_NPU) {
    *out = tandem__relay_npu_done(rt);
    return TANDEM_OK;
  }
  int h = tandem__lane_gpu(lane);
  tandem__gpu_t *gpu = tandem__gpu_at(rt, (uint32_t)h);
  assert(gpu); /* a want names a lane that has work: its GPU is open */
  uint64_t values[TANDEM__MAX_LANES];
  tandem_status_t s = gpu->vtable->lane.query(gpu, values);
  *out = s == TANDEM_OK ? values[tandem__lane_in_gpu((uint32_t)h, lane)] : 0;
  return s;
}

/* Blocks until source |lane| reaches |value| or about a millisecond passed. */
static tandem_status_t tandem__relay_block(tandem_runtime_t *rt, int lane, uint64_t value) {
  if (lane == TANDEM_LANE_NPU) { /* the lane's record, as tandem__npu_lane_wait */
    tandem__npu_lane_t *npu = &rt->npu_lane;
    if (!npu->started) return TANDEM_OK;
    struct timespec deadline = tandem__deadline_after(TANDEM__RELAY_BLOCK_NS);
    pthread_mutex_lock(&npu->mutex);
    while (npu->done < value &&
           pthread_cond_timedwait(&npu->done_changed, &npu->mutex, &deadline) == 0) {
    }
    pthread_mutex_unlock(&npu->mutex);
    return TANDEM_OK;
  }
  uint32_t h = (uint32_t)tandem__lane_gpu(lane);
  tandem__gpu_t *gpu = tandem__gpu_at(rt, h);
  uint64_t values[TANDEM__MAX_LANES] = {0};
  values[tandem__lane_in_gpu(h, lane)] = value;
  tandem_status_t s = gpu->vtable->lane.wait(gpu, values, TANDEM__RELAY_BLOCK_NS);
  return s == TANDEM_ERROR_TIMEOUT ? TANDEM_OK : s;
}

static void *tandem__relay_main(void *arg) {
  tandem_runtime_t *rt = arg;
  tandem__relay_t *relay = &rt->relay;
  pthread_mutex_lock(&relay->mutex);
  for (;;) {
    /* What is pending, copied out so no driver call runs under the lock. */
    uint64_t want[TANDEM_MAX_GPUS][TANDEM__MAX_LANES], done[TANDEM_MAX_GPUS][TANDEM__MAX_LANES];
    bool pending = false;
    for (uint32_t g = 0; g < TANDEM_MAX_GPUS; g++)
      for (int l = 0; l < TANDEM__MAX_LANES; l++) {
        want[g][l] = relay->want[g][l] > relay->signalled[g][l] ? relay->want[g][l] : 0;
        done[g][l] = relay->signalled[g][l];
        pending |= want[g][l] != 0;
      }
    if (!pending) {
      if (relay->stop) break;
      pthread_cond_wait(&relay->wake, &relay->mutex);
      continue;
    }
    pthread_mutex_unlock(&relay->mutex);

    bool release = atomic_load(&relay->release_all);
    bool moved = false;
    int first_lane = -1;
    uint64_t first_value = 0;
    uint64_t now[TANDEM__MAX_LANES];
    bool read[TANDEM__MAX_LANES] = {false};
    for (uint32_t g = 0; g < TANDEM_MAX_GPUS; g++)
      for (int l = 0; l < TANDEM__MAX_LANES; l++) {
        if (!want[g][l]) continue;
        if (!release && !read[l]) {
          if (tandem__relay_source(rt, l, &now[l]) != TANDEM_OK) {
            /* I6: the lock holder next makes the runtime lost. */
            atomic_store(&rt->lost_pending, true);
            atomic_store(&relay->release_all, true);
            release = true;
          }
          read[l] = true;
        }
        /* As far as the source got, not only to the want: the want is the
         * highest value any work waits for, and work waiting for a lower
         * one may be what the source itself waits on. */
        uint64_t to = release || now[l] >= want[g][l] ? want[g][l] : now[l];
        if (to <= done[g][l]) {
          if (first_lane < 0) first_lane = l, first_value = done[g][l] + 1;
          continue;
        }
        tandem__gpu_t *gpu = tandem__gpu_at(rt, g);
        /* With the validation layer on, one value at a time: Debian 12's
         * layer (1.3.239) keeps a host signal that jumps past values queued
         * waits still wait for as pending, and reports the next host signal
         * against it (VUID-VkSemaphoreSignalInfo-value-03259), a false
         * positive (reproduced with plain Vulkan, docs/design.md). */
        uint64_t v = rt->options.validation ? done[g][l] + 1 : to;
        for (; v <= to; v++)
          if (gpu->vtable->lane.signal(gpu, (tandem_lane_t)tandem__lane_in_gpu(g, l), v) !=
              TANDEM_OK) {
            atomic_store(&rt->lost_pending, true);
            atomic_store(&relay->release_all, true);
            break;
          }
        pthread_mutex_lock(&relay->mutex);
        relay->signalled[g][l] = to;
        pthread_cond_broadcast(&relay->wake); /* tandem__relay_wait_delivered */
        pthread_mutex_unlock(&relay->mutex);
        moved = true;
      }
    if (!moved && first_lane >= 0 &&
        tandem__relay_block(rt, first_lane, first_value) != TANDEM_OK) {
      atomic_store(&rt->lost_pending, true);
      atomic_store(&relay->release_all, true);
    }
    pthread_mutex_lock(&relay->mutex);
  }
  pthread_mutex_unlock(&relay->mutex);
  return NULL;
}

void tandem__relay_stop(tandem_runtime_t *rt) {
  tandem__relay_t *relay = &rt->relay;
  pthread_mutex_lock(&relay->mutex);
  bool started = relay->started;
  relay->stop = true;
  pthread_cond_broadcast(&relay->wake);
  pthread_mutex_unlock(&relay->mutex);
  if (started) pthread_join(relay->thread, NULL);
  /* The proxies go before their devices do (nothing is queued: no work is
   * in flight at the last release). */
  pthread_mutex_lock(&rt->mutex);
  for (uint32_t g = 0; g < rt->gpu_count; g++) {
    tandem__gpu_t *gpu = tandem__gpu_at(rt, g);
    for (uint32_t h = 0; gpu && h < rt->gpu_count; h++) {
      if (h == g || !tandem__gpu_at(rt, h)) continue;
      for (int k = 0; k < TANDEM_LANE_COUNT_GPU; k++)
        gpu->vtable->lane.unbind(
            gpu, (tandem_lane_t)tandem__lane_in_gpu(g, tandem__gpu_lane(h, (tandem_lane_t)k)));
    }
  }
  pthread_mutex_unlock(&rt->mutex);
  pthread_mutex_destroy(&relay->mutex);
  pthread_cond_destroy(&relay->wake);
}

tandem_status_t tandem__relay_bind_proxies(tandem_runtime_t *rt, uint32_t g, tandem__gpu_t *gpu) {
  if (g == 0 && rt->gpu_count == 1) return TANDEM_OK; /* one GPU: nothing to carry */
  tandem_status_t s = TANDEM_OK;
  pthread_mutex_lock(&rt->relay.mutex);
  if (!rt->relay.started) {
    if (pthread_create(&rt->relay.thread, NULL, tandem__relay_main, rt) != 0) {
      s = TANDEM_FAIL(TANDEM_ERROR_OUT_OF_MEMORY, "starting the thread that relays lane values");
    } else {
      rt->relay.started = true;
    }
  }
  pthread_mutex_unlock(&rt->relay.mutex);
  if (s != TANDEM_OK) return s;
  pthread_mutex_lock(&rt->mutex);
  for (uint32_t h = 0; h < rt->gpu_count && s == TANDEM_OK; h++) {
    tandem__gpu_t *other = h == g ? NULL : tandem__gpu_at(rt, h);
    if (!other) continue;
    for (int k = 0; k < TANDEM_LANE_COUNT_GPU && s == TANDEM_OK; k++) {
      int of_h = tandem__gpu_lane(h, (tandem_lane_t)k),
          of_g = tandem__gpu_lane(g, (tandem_lane_t)k);
      s = gpu->vtable->lane.bind(gpu, (tandem_lane_t)tandem__lane_in_gpu(g, of_h), NULL);
      if (s == TANDEM_OK)
        s = other->vtable->lane.bind(other, (tandem_lane_t)tandem__lane_in_gpu(h, of_g), NULL);
    }
  }
  pthread_mutex_unlock(&rt->mutex);
  /* A failure leaves proxies bound on GPUs that stay open: harmless, never
   * waited on (the new GPU is not published), and unbound with the device. */
  return s;
}

void tandem__relay_post_locked(tandem_runtime_t *rt, const tandem__slot_t *slot) {
  if (rt->gpu_count == 1) return; /* the common case: no lock taken */
  const tandem__plan_t *plan = &slot->exec->plan;
  tandem__relay_t *relay = &rt->relay;
  bool raised = false;
  pthread_mutex_lock(&relay->mutex);
  for (uint32_t r = 0; r < plan->region_count; r++) {
    int g = tandem__lane_gpu(plan->regions[r].lane);
    if (g < 0) continue; /* the NPU lane waits for every GPU itself (npu_lane.c) */
    const uint64_t *waits = slot->submits[r].wait_values;
    for (int l = 0; l < TANDEM__MAX_LANES; l++) {
      if (!waits[l] || !tandem__relay_needed((uint32_t)g, l)) continue;
      if (waits[l] > relay->want[g][l]) {
        relay->want[g][l] = waits[l];
        raised = true;
      }
    }
  }
  if (raised) pthread_cond_broadcast(&relay->wake);
  pthread_mutex_unlock(&relay->mutex);
}

void tandem__relay_release(tandem_runtime_t *rt) {
  atomic_store(&rt->relay.release_all, true);
  pthread_mutex_lock(&rt->relay.mutex);
  pthread_cond_broadcast(&rt->relay.wake);
  pthread_mutex_unlock(&rt->relay.mutex);
}

tandem_status_t tandem__relay_wait_delivered(tandem_runtime_t *rt, uint32_t g,
                                             uint64_t timeout_ns) {
  if (rt->gpu_count == 1 || !rt->options.validation) return TANDEM_OK;
  tandem__relay_t *relay = &rt->relay;
  struct timespec deadline = tandem__deadline_after(timeout_ns);
  tandem_status_t s = TANDEM_OK;
  pthread_mutex_lock(&relay->mutex);
  uint64_t want[TANDEM__MAX_LANES];
  memcpy(want, relay->want[g], sizeof want);
  for (int l = 0; l < TANDEM__MAX_LANES && s == TANDEM_OK; l++)
    while (relay->signalled[g][l] < want[l] && !atomic_load(&relay->release_all)) {
      if (timeout_ns == TANDEM__WAIT_FOREVER) {
        pthread_cond_wait(&relay->wake, &relay->mutex);
      } else if (pthread_cond_timedwait(&relay->wake, &relay->mutex, &deadline) != 0 &&
                 relay->signalled[g][l] < want[l]) {
        s = TANDEM_ERROR_TIMEOUT;
        break;
      }
    }
  pthread_mutex_unlock(&relay->mutex);
  return s;
}
