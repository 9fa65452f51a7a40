// SPDX-License-Identifier: Apache-2.0
// The loop protocol, its manual-time twin and the logger live in SpeakerLoop
// (no C), so the runtime can use them without this module; every adapter that
// imports SpeakerSystem sees them as before.
@_exported import SpeakerLoop
