#include <alsa/asoundlib.h>
// The audio adapter's thread wake-ups: eventfd(2) is not exported by Swift's
// Glibc module, so it comes in through this header (no code, only declarations).
#include <sys/eventfd.h>
