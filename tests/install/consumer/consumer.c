/* SPDX-License-Identifier: MIT */
/*
 * consumer.c — the tiny program tests/install builds against an installed
 * tandem (find_package and pkg-config, shared and static): makes a runtime,
 * opens the GPU and prints the device. Exit 77 when there is no device.
 */
#include <stdio.h>

#include <tandem/tandem.h>

int main(void) {
  tandem_runtime_t *rt;
  if (tandem_runtime_create(NULL, &rt) != TANDEM_OK) return 1;
  tandem_status_t s = tandem_runtime_open_gpu(rt);
  if (s != TANDEM_OK) {
    fprintf(stderr, "consumer: %s: %s\n", tandem_status_name(s), tandem_error_message());
    tandem_runtime_destroy(rt);
    return s == TANDEM_ERROR_NO_DEVICE ? 77 : 1;
  }
  tandem_device_info_t info;
  tandem_device_info_init(&info);
  tandem_runtime_gpu_info(rt, 0, &info);
  printf("consumer: tandem %d.%d.%d on %s\n", TANDEM_VERSION_MAJOR, TANDEM_VERSION_MINOR,
         TANDEM_VERSION_PATCH, info.name);
  tandem_runtime_destroy(rt);
  return 0;
}
