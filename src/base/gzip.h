// gzip, decided and inflated in one place: the magic bytes, and one inflater (ISA-L's
// igzip where the build has it, else zlib) for every stream that reads gzip.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace torch2pprof {

// Whether bytes start with gzip's magic (1f 8b).
inline bool IsGzip(std::string_view b) {
  return b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f && static_cast<unsigned char>(b[1]) == 0x8b;
}

// One gzip member at a time; Reset starts the next.
class Inflater {
 public:
  enum Result { kOk, kMemberEnd, kCorrupt };
  Inflater();
  ~Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  void Reset();
  // Inflates from in into out; in_used and out_made say how much each moved; on kCorrupt
  // `why` says what is wrong, in one wording whichever library inflates.
  Result Inflate(const unsigned char* in, size_t in_len, char* out, size_t out_len, size_t* in_used, size_t* out_made,
                 std::string* why);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The first up to `want` bytes that gzipped `head` inflates to: as many as its bytes
// give, "" where they are no gzip.
std::string InflateHead(std::string_view head, size_t want);

// The library that inflates gzip input, and its version: "ISA-L igzip 2.30.0", "zlib 1.2.13".
std::string InflateLibrary();

}  // namespace torch2pprof
