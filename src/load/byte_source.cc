#include "load/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "torch2pprof/error.h"

#ifdef TORCH2PPROF_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

namespace torch2pprof {
namespace {
constexpr size_t kInputBuffer = 1 << 20;  // compressed input, read ahead of the inflater
constexpr size_t kPeekBuffer = 64 << 10;  // plain input: only the magic bytes' read goes through it
}  // namespace

// One gzip member at a time. ISA-L's igzip inflates 2-3x as fast as zlib
// (docs/performance.md); zlib stays the fallback where it is absent.
class ByteSource::Inflater {
 public:
  enum Result { kOk, kMemberEnd, kCorrupt };
#ifdef TORCH2PPROF_HAVE_ISAL
  Inflater() : state_(std::make_unique<inflate_state>()) { Reset(); }
  void Reset() {
    isal_inflate_init(state_.get());
    state_->crc_flag = IGZIP_GZIP;  // the gzip wrapper, its CRC checked
  }
  // Inflates from in into out; in_used and out_made say how much each moved.
  Result Inflate(const unsigned char* in, size_t in_len, char* out, size_t out_len, size_t* in_used, size_t* out_made,
                 std::string* why) {
    state_->next_in = const_cast<uint8_t*>(in);
    state_->avail_in = static_cast<uint32_t>(std::min<size_t>(in_len, 1u << 30));
    state_->next_out = reinterpret_cast<uint8_t*>(out);
    state_->avail_out = static_cast<uint32_t>(std::min<size_t>(out_len, 1u << 30));
    int rc = isal_inflate(state_.get());
    *in_used = static_cast<size_t>(state_->next_in - in);
    *out_made = static_cast<size_t>(state_->next_out - reinterpret_cast<uint8_t*>(out));
    if (rc == ISAL_DECOMP_OK || rc == ISAL_END_INPUT) {
      return state_->block_state == ISAL_BLOCK_FINISH ? kMemberEnd : kOk;
    }
    *why = rc == ISAL_INCORRECT_CHECKSUM ? "CRC mismatch"
           : rc == ISAL_INVALID_WRAPPER  ? "invalid gzip header"
                                         : "invalid deflate data";
    return kCorrupt;
  }

 private:
  std::unique_ptr<inflate_state> state_;
#else
  Inflater() {
    if (inflateInit2(&zs_, 15 + 16) != Z_OK) throw std::bad_alloc();
  }
  ~Inflater() { inflateEnd(&zs_); }
  void Reset() { inflateReset(&zs_); }
  Result Inflate(const unsigned char* in, size_t in_len, char* out, size_t out_len, size_t* in_used, size_t* out_made,
                 std::string* why) {
    zs_.next_in = const_cast<Bytef*>(in);
    zs_.avail_in = static_cast<uInt>(std::min<size_t>(in_len, 1u << 30));
    zs_.next_out = reinterpret_cast<Bytef*>(out);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(out_len, 1u << 30));
    int rc = inflate(&zs_, Z_NO_FLUSH);
    *in_used = static_cast<size_t>(zs_.next_in - in);
    *out_made = static_cast<size_t>(reinterpret_cast<char*>(zs_.next_out) - out);
    if (rc == Z_STREAM_END) return kMemberEnd;
    if (rc == Z_OK || rc == Z_BUF_ERROR) return kOk;  // Z_BUF_ERROR: no progress without more input
    // One wording whichever library inflates.
    *why = !zs_.msg                                         ? "invalid deflate data"
           : std::string(zs_.msg) == "incorrect data check" ? "CRC mismatch"
                                                            : zs_.msg;
    return kCorrupt;
  }

 private:
  z_stream zs_{};
#endif
};

std::string InflateLibrary() {
#ifdef TORCH2PPROF_HAVE_ISAL
  return "ISA-L igzip " TORCH2PPROF_ISAL_VERSION;
#else
  return std::string("zlib ") + zlibVersion();
#endif
}

ByteSource::ByteSource(const std::string& path) : name_(path == "-" ? "<stdin>" : path) {
  if (path == "-") {
    fd_ = 0;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) ThrowInput(name_, -1, std::string("cannot open: ") + std::strerror(errno));
    own_fd_ = true;
  }
  struct stat st;
  if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) input_size_ = static_cast<uint64_t>(st.st_size);
  DetectGzip();
}

ByteSource::ByteSource(std::string_view data, const std::string& name)
    : name_(name), input_size_(data.size()), memory_(data), from_memory_(true) {
  DetectGzip();
}

void ByteSource::DetectGzip() {
  in_.resize(kPeekBuffer);
  // Peek at the magic bytes; they stay in the buffer for whichever path reads them.
  while (in_end_ < 2 && FillInput()) {
  }
  gzip_ = in_end_ >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
  if (gzip_) {
    in_.resize(kInputBuffer);
    inflater_ = std::make_unique<Inflater>();
  }
}

ByteSource::~ByteSource() {
  if (own_fd_) ::close(fd_);
}

// Appends raw bytes to in_[in_end_..]; false at end of file.
bool ByteSource::FillInput() {
  if (raw_eof_) return false;
  if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
  if (in_end_ == in_.size()) return true;
  size_t n = ReadRaw(reinterpret_cast<char*>(in_.data()) + in_end_, in_.size() - in_end_);
  in_end_ += n;
  return n > 0;
}

// Up to n bytes of the file (or memory) at dst; 0 at its end.
size_t ByteSource::ReadRaw(char* dst, size_t n) {
  if (raw_eof_) return 0;
  if (from_memory_) {
    size_t k = ReadAt(dst, n, raw_total_);
    raw_total_ += k;
    raw_eof_ = k == 0;
    return k;
  }
  for (;;) {
    ssize_t k = ::read(fd_, dst, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      if (errno == EISDIR) ThrowInput(name_, -1, "is a directory, not a trace file");
      ThrowInput(name_, -1, std::string("read error: ") + std::strerror(errno));
    }
    raw_eof_ = k == 0;
    raw_total_ += static_cast<uint64_t>(k);
    CountUpTo(raw_total_);
    return static_cast<size_t>(k);
  }
}

void ByteSource::CountUpTo(uint64_t end) {
  if (end <= counted_) return;
  if (read_counter_) read_counter_->fetch_add(end - counted_, std::memory_order_relaxed);
  counted_ = end;
}

size_t ByteSource::ReadAt(char* buf, size_t n, uint64_t offset) const {
  if (from_memory_) {
    if (offset >= memory_.size()) return 0;
    size_t k = std::min<uint64_t>(n, memory_.size() - offset);
    std::memcpy(buf, memory_.data() + offset, k);
    return k;
  }
  size_t done = 0;
  while (done < n) {
    ssize_t k = ::pread(fd_, buf + done, n - done, static_cast<off_t>(offset + done));
    if (k < 0 && errno == EINTR) continue;
    if (k < 0)
      ThrowInput(name_, static_cast<int64_t>(offset + done), std::string("read error: ") + std::strerror(errno));
    if (k == 0) break;
    done += static_cast<size_t>(k);
  }
  return done;
}

void ByteSource::Seek(uint64_t offset) {
  in_pos_ = in_end_ = 0;
  raw_eof_ = false;
  raw_total_ = out_total_ = offset;
  if (!from_memory_ && ::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) {
    ThrowInput(name_, static_cast<int64_t>(offset), std::string("cannot seek: ") + std::strerror(errno));
  }
}

size_t ByteSource::Read(char* buf, size_t n) {
  if (!gzip_) {
    if (in_pos_ == in_end_) {
      // Plain text goes straight to the caller: a copy through in_ would cost a pass over it.
      size_t k = ReadRaw(buf, n);
      out_total_ += k;
      return k;
    }
    size_t k = std::min(n, in_end_ - in_pos_);
    std::memcpy(buf, in_.data() + in_pos_, k);
    in_pos_ += k;
    out_total_ += k;
    return k;
  }
  size_t produced = 0;
  while (produced == 0) {
    if (in_pos_ == in_end_ && !FillInput()) {
      if (member_done_) return 0;
      if (allow_truncated_) {
        truncated_ = true;
        return 0;
      }
      ThrowInput(name_, static_cast<int64_t>(out_total_),
                 "gzip stream is truncated: the compressed file ends after " + std::to_string(raw_total_) +
                     " bytes, inside the data (--allow-truncated keeps the events before the cut)");
    }
    if (member_done_) {
      // Another gzip member may follow (concatenated .gz files are one stream).
      if (in_end_ - in_pos_ < 2 && FillInput()) continue;
      if (in_[in_pos_] != 0x1f || (in_end_ - in_pos_ >= 2 && in_[in_pos_ + 1] != 0x8b)) {
        ThrowInput(name_, static_cast<int64_t>(out_total_),
                   "unexpected data after the end of the gzip stream (compressed byte " +
                       std::to_string(raw_total_ - (in_end_ - in_pos_)) + ")");
      }
      inflater_->Reset();
      member_done_ = false;
    }
    size_t used = 0;
    std::string why;
    Inflater::Result rc = inflater_->Inflate(in_.data() + in_pos_, in_end_ - in_pos_, buf, n, &used, &produced, &why);
    in_pos_ += used;
    out_total_ += produced;
    if (rc == Inflater::kMemberEnd) {
      member_done_ = true;
    } else if (rc == Inflater::kCorrupt) {
      ThrowInput(name_, static_cast<int64_t>(out_total_), "corrupt gzip data: " + why);
    }
  }
  return produced;
}

}  // namespace torch2pprof
