/* SPDX-License-Identifier: MIT */
/*
 * map.h — what core may call of map.c: the host-map check of a submission.
 */
#ifndef TANDEM_CORE_MAP_H_
#define TANDEM_CORE_MAP_H_

#include "core/types.h"

/* map.c: BUSY when a live host map conflicts with |a|. Needs runtime->mutex. */
tandem_status_t tandem__maps_check_locked(const tandem__access_t *a);

#endif /* TANDEM_CORE_MAP_H_ */
