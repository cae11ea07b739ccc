#include "byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {
constexpr size_t kInputBuffer = 1 << 20;
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
  in_.resize(kInputBuffer);
  // Peek at the magic bytes; they stay in the buffer for whichever path reads them.
  while (in_end_ < 2 && FillInput()) {
  }
  gzip_ = in_end_ >= 2 && in_[0] == 0x1f && in_[1] == 0x8b;
  if (gzip_) {
    if (inflateInit2(&zs_, 15 + 16) != Z_OK) ThrowInput(name_, -1, "cannot initialise zlib");
    zs_init_ = true;
  }
}

ByteSource::~ByteSource() {
  if (zs_init_) inflateEnd(&zs_);
  if (own_fd_) ::close(fd_);
}

// Appends raw bytes to in_[in_end_..]; false at end of file.
bool ByteSource::FillInput() {
  if (raw_eof_) return false;
  if (in_pos_ == in_end_) in_pos_ = in_end_ = 0;
  if (in_end_ == in_.size()) return true;
  if (from_memory_) {
    size_t n = std::min(in_.size() - in_end_, memory_.size());
    if (n == 0) {
      raw_eof_ = true;
      return false;
    }
    std::memcpy(in_.data() + in_end_, memory_.data(), n);
    memory_.remove_prefix(n);
    in_end_ += n;
    raw_total_ += n;
    return true;
  }
  for (;;) {
    ssize_t n = ::read(fd_, in_.data() + in_end_, in_.size() - in_end_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (errno == EISDIR) ThrowInput(name_, -1, "is a directory, not a trace file");
      ThrowInput(name_, -1, std::string("read error: ") + std::strerror(errno));
    }
    if (n == 0) {
      raw_eof_ = true;
      return false;
    }
    in_end_ += static_cast<size_t>(n);
    raw_total_ += static_cast<uint64_t>(n);
    return true;
  }
}

size_t ByteSource::Read(char* buf, size_t n) {
  if (!gzip_) {
    if (in_pos_ == in_end_ && !FillInput()) return 0;
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
                     " bytes, inside the data");
    }
    if (member_done_) {
      // Another gzip member may follow (concatenated .gz files are one stream).
      if (in_end_ - in_pos_ < 2 && FillInput()) continue;
      if (in_[in_pos_] != 0x1f || (in_end_ - in_pos_ >= 2 && in_[in_pos_ + 1] != 0x8b)) {
        ThrowInput(name_, static_cast<int64_t>(out_total_),
                   "unexpected data after the end of the gzip stream (compressed byte " +
                       std::to_string(raw_total_ - (in_end_ - in_pos_)) + ")");
      }
      inflateReset(&zs_);
      member_done_ = false;
    }
    zs_.next_in = in_.data() + in_pos_;
    zs_.avail_in = static_cast<uInt>(in_end_ - in_pos_);
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    int rc = inflate(&zs_, Z_NO_FLUSH);
    in_pos_ = in_end_ - zs_.avail_in;
    produced = static_cast<size_t>(reinterpret_cast<char*>(zs_.next_out) - buf);
    out_total_ += produced;
    if (rc == Z_STREAM_END) {
      member_done_ = true;
    } else if (rc == Z_BUF_ERROR) {
      // No progress possible without more input; loop to read it.
    } else if (rc != Z_OK) {
      ThrowInput(name_, static_cast<int64_t>(out_total_),
                 std::string("corrupt gzip data: ") + (zs_.msg ? zs_.msg : "inflate failed"));
    }
  }
  return produced;
}

}  // namespace torch2pprof
