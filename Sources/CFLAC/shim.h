// SPDX-License-Identifier: Apache-2.0
// libFLAC (Debian: libflac-dev, also a dependency of libsndfile1-dev): the
// stream decoder the SoundFiles adapter uses for FLAC files directly (no
// libsndfile per-sample copy). Declarations only.
#include <FLAC/stream_decoder.h>
