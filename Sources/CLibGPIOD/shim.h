// SPDX-License-Identifier: Apache-2.0
// libgpiod, v1 (1.6) or v2 (2.x): whichever `pkg-config libgpiod` finds
// (PKG_CONFIG_PATH selects; see scripts/build-libgpiod-v2). Only CGPIOD's C
// file includes this; Swift sees the version-neutral cgpiod.h instead.
#include <gpiod.h>
