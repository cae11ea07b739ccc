// Reads a CUDA memory snapshot (torch.cuda.memory._dump_snapshot), a pickle, into its
// plain data (torch2pprof/stages/snapshot.h), streaming the rings' entries as they come.
#pragma once

#include <cstdint>
#include <string>

#include "load/pickle_reader.h"
#include "torch2pprof/stages/snapshot.h"

namespace torch2pprof {

class ByteSource;

// The snapshot in a pickle. A value of the wrong type where the format has one is an
// Error naming the field; fields a version of torch did not write are absent, not errors.
// max_items caps the segments, blocks and ring entries once shared references are
// expanded (0: none).
MemorySnapshot ReadSnapshot(const PickleData& data, const std::string& file, uint64_t max_items = 0);
// The same read as the pickle streams in: the rings' entries are taken as they are read,
// so that memory follows the entries, not the pickle's values. max_items 0: 2^22 and a
// quarter of the pickle's bytes. A gzipped pickle may inflate 256 times past 64 MiB.
MemorySnapshot ReadSnapshot(ByteSource& source, const std::string& file, uint64_t max_items = 0);

}  // namespace torch2pprof
