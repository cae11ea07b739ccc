#include "base/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <new>

#ifdef TORCH2PPROF_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

namespace torch2pprof {

// ISA-L's igzip inflates 2-3x as fast as zlib (docs/performance.md); zlib stays the
// fallback where it is absent.
#ifdef TORCH2PPROF_HAVE_ISAL
struct Inflater::State {
  inflate_state s;
};

Inflater::Inflater() : s_(std::make_unique<State>()) { Reset(); }
Inflater::~Inflater() = default;

void Inflater::Reset() {
  isal_inflate_init(&s_->s);
  s_->s.crc_flag = IGZIP_GZIP;  // the gzip wrapper, its CRC checked
}

Inflater::Result Inflater::Inflate(const unsigned char* in, size_t in_len, char* out, size_t out_len, size_t* in_used,
                                   size_t* out_made, std::string* why) {
  inflate_state& st = s_->s;
  st.next_in = const_cast<uint8_t*>(in);
  st.avail_in = static_cast<uint32_t>(std::min<size_t>(in_len, 1u << 30));
  st.next_out = reinterpret_cast<uint8_t*>(out);
  st.avail_out = static_cast<uint32_t>(std::min<size_t>(out_len, 1u << 30));
  int rc = isal_inflate(&st);
  *in_used = static_cast<size_t>(st.next_in - in);
  *out_made = static_cast<size_t>(st.next_out - reinterpret_cast<uint8_t*>(out));
  if (rc == ISAL_DECOMP_OK || rc == ISAL_END_INPUT) {
    return st.block_state == ISAL_BLOCK_FINISH ? kMemberEnd : kOk;
  }
  *why = rc == ISAL_INCORRECT_CHECKSUM ? "CRC mismatch"
         : rc == ISAL_INVALID_WRAPPER  ? "invalid gzip header"
                                       : "invalid deflate data";
  return kCorrupt;
}

std::string InflateLibrary() { return "ISA-L igzip " TORCH2PPROF_ISAL_VERSION; }
#else
struct Inflater::State {
  z_stream z{};
};

Inflater::Inflater() : s_(std::make_unique<State>()) {
  if (inflateInit2(&s_->z, 15 + 16) != Z_OK) throw std::bad_alloc();
}
Inflater::~Inflater() { inflateEnd(&s_->z); }

void Inflater::Reset() { inflateReset(&s_->z); }

Inflater::Result Inflater::Inflate(const unsigned char* in, size_t in_len, char* out, size_t out_len, size_t* in_used,
                                   size_t* out_made, std::string* why) {
  z_stream& zs = s_->z;
  zs.next_in = const_cast<Bytef*>(in);
  zs.avail_in = static_cast<uInt>(std::min<size_t>(in_len, 1u << 30));
  zs.next_out = reinterpret_cast<Bytef*>(out);
  zs.avail_out = static_cast<uInt>(std::min<size_t>(out_len, 1u << 30));
  int rc = inflate(&zs, Z_NO_FLUSH);
  *in_used = static_cast<size_t>(zs.next_in - in);
  *out_made = static_cast<size_t>(reinterpret_cast<char*>(zs.next_out) - out);
  if (rc == Z_STREAM_END) return kMemberEnd;
  if (rc == Z_OK || rc == Z_BUF_ERROR) return kOk;  // Z_BUF_ERROR: no progress without more input
  *why = !zs.msg ? "invalid deflate data" : std::string(zs.msg) == "incorrect data check" ? "CRC mismatch" : zs.msg;
  return kCorrupt;
}

std::string InflateLibrary() { return std::string("zlib ") + zlibVersion(); }
#endif

std::string InflateHead(std::string_view head, size_t want) {
  if (!IsGzip(head)) return "";
  std::string out(want, '\0');
  Inflater inflater;
  size_t used = 0, made = 0, in_at = 0, out_at = 0;
  std::string why;
  while (out_at < want && in_at < head.size()) {
    const Inflater::Result rc =
        inflater.Inflate(reinterpret_cast<const unsigned char*>(head.data()) + in_at, head.size() - in_at,
                         out.data() + out_at, want - out_at, &used, &made, &why);
    in_at += used, out_at += made;
    if (rc != Inflater::kOk || (used == 0 && made == 0)) break;
  }
  out.resize(out_at);
  return out;
}

}  // namespace torch2pprof
