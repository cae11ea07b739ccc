// A pprof profile that convert wrote, read back from an input stream (gzip inflated by
// the stream) for convert -o to merge beside traces.
#pragma once

#include <cstdint>

#include "torch2pprof/profile.h"

namespace torch2pprof {

class ByteSource;

// Reads the whole message (at most 2 GiB, protobuf's limit, after inflating) and decodes
// it as DecodeProfile does.
Profile ReadProfile(ByteSource& source, uint32_t max_depth = kDefaultMaxDepth);

}  // namespace torch2pprof
