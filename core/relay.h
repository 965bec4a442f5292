/* SPDX-License-Identifier: MIT */
/*
 * relay.h — what core may call of relay.c: the host thread that carries lane
 * values between the GPUs of one runtime (runtime_int.h, tandem__relay_t).
 */
#ifndef TANDEM_CORE_RELAY_H_
#define TANDEM_CORE_RELAY_H_

#include "core/types.h"

/* At runtime creation. */
void tandem__relay_init(tandem_runtime_t *runtime);
/* At the runtime's last release (nothing in flight): stops the thread and
 * unbinds the proxies, before the devices go. */
void tandem__relay_stop(tandem_runtime_t *runtime);
/* GPU |g| (|gpu|, not yet published) is opening, under open_mutex: binds on
 * it a proxy of every lane of each GPU already open, and on each of those a
 * proxy of every lane of |g|. Takes runtime->mutex itself. */
tandem_status_t tandem__relay_bind_proxies(tandem_runtime_t *runtime, uint32_t g,
                                           tandem__gpu_t *gpu);
/* True when a region on GPU |g| waits for lane |lane| through a proxy: the
 * lane is another GPU's, or the NPU lane and |g| is not GPU 0. */
bool tandem__relay_needed(uint32_t g, int lane);
/* Submit, after the backend took |slot|'s regions: raises the wants of the
 * proxies its regions wait on. Needs runtime->mutex. Cannot fail. */
void tandem__relay_post_locked(tandem_runtime_t *runtime, const tandem__slot_t *slot);
/* The runtime is lost: every proxy is signalled to its want without waiting
 * (no queue waits forever for a value a lost device never makes). */
void tandem__relay_release(tandem_runtime_t *runtime);
/* Before a host wait on GPU |g|'s timelines returns from the driver: waits
 * until the relay signalled every want of GPU |g| posted so far, so the wait
 * never returns while the signal it depends on is still inside the driver's
 * host-signal call (tandem__slot_t.cover says why that matters). Only with
 * the validation layer on and several GPUs; TIMEOUT after |timeout_ns|. */
tandem_status_t tandem__relay_wait_delivered(tandem_runtime_t *runtime, uint32_t g,
                                             uint64_t timeout_ns);

#endif /* TANDEM_CORE_RELAY_H_ */
