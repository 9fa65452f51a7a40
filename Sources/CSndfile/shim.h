// SPDX-License-Identifier: Apache-2.0
// libsndfile (Debian: libsndfile1-dev): decodes WAV, FLAC, Ogg Vorbis/Opus, …
// for the SoundFiles adapter. Declarations only.
#include <sndfile.h>
