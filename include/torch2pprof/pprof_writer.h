// Stage 4: encodes a Profile as pprof's protobuf (proto/profile.proto), gzip-compressed,
// and writes it so that an error never leaves a partial file behind.
#pragma once

#include <string>
#include <vector>

#include "torch2pprof/profile.h"

namespace torch2pprof {

// The serialized, uncompressed profile.proto message.
std::string EncodeProfile(const Profile& profile);

// gzip of data, as a single member of one deflate stream, compressed in blocks on up to
// `threads` threads; the bytes never depend on `threads`.
std::string Gzip(const std::string& data, int threads = 1);

// Writes data to path atomically (temporary file in the same directory, then
// rename); "-" writes to standard output. Refuses to overwrite `input`. With
// remove_on_signal, SIGINT or SIGTERM during the write removes the temporary file and
// the process then dies of the signal (a process-wide handler, so only when asked).
// Throws Error (kind kOutput).
void WriteOutputFile(const std::string& path, const std::string& data, const std::string& input = "",
                     bool remove_on_signal = false);
// The same, refusing to overwrite any of `inputs`.
void WriteOutputFile(const std::string& path, const std::string& data, const std::vector<std::string>& inputs,
                     bool remove_on_signal = false);

}  // namespace torch2pprof
