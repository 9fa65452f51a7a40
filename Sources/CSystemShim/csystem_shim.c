// SPDX-License-Identifier: Apache-2.0
#define _GNU_SOURCE
#include <pthread.h>
#include "csystem_shim.h"

int csys_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
