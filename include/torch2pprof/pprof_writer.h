// Stage 4: encodes a Profile as pprof's protobuf (proto/profile.proto), gzip-compressed
// (output_file.h writes it).
#pragma once

#include <string>
#include <vector>

#include "torch2pprof/output_file.h"
#include "torch2pprof/profile.h"

namespace torch2pprof {

// The serialized, uncompressed profile.proto message.
std::string EncodeProfile(const Profile& profile);

// gzip of data, as a single member of one deflate stream, compressed in blocks on up to
// `threads` threads; the bytes never depend on `threads`.
std::string Gzip(const std::string& data, int threads = 1);

}  // namespace torch2pprof
