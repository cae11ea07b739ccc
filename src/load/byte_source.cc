#include "load/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/gzip.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {
constexpr size_t kInputBuffer = 1 << 20;              // compressed input, read ahead of the inflater
constexpr size_t kPeekBuffer = ByteSource::kMaxPeek;  // plain input: only the head's reads go through it
}  // namespace

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
  gzip_ = IsGzip({reinterpret_cast<const char*>(in_.data()), in_end_});
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

uint64_t ByteSource::RefreshSize() {
  struct stat st;
  if (own_fd_ && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
    input_size_ = std::max(input_size_, static_cast<uint64_t>(st.st_size));
  }
  return input_size_;
}

std::string_view ByteSource::Peek(size_t n) {
  n = std::min(n, kMaxPeek);
  if (!gzip_) {
    // Plain text: the raw buffer holds the head, and Read hands it out first.
    while (in_end_ - in_pos_ < n && in_end_ < in_.size() && FillInput()) {
    }
    return {reinterpret_cast<const char*>(in_.data()) + in_pos_, std::min(n, in_end_ - in_pos_)};
  }
  while (peeked_.size() - peek_pos_ < n) {
    const size_t old = peeked_.size();
    peeked_.resize(peek_pos_ + n);
    const size_t k = ReadStream(peeked_.data() + old, peeked_.size() - old);
    peeked_.resize(old + k);
    if (k == 0) break;
  }
  return std::string_view(peeked_).substr(peek_pos_, n);
}

std::string_view ByteSource::PeekMore(size_t n, size_t seen) {
  n = std::min(n, kMaxPeek);
  if (!gzip_) {
    if (in_end_ - in_pos_ <= seen && in_end_ - in_pos_ < n && in_end_ < in_.size()) FillInput();
    return {reinterpret_cast<const char*>(in_.data()) + in_pos_, std::min(n, in_end_ - in_pos_)};
  }
  if (peeked_.size() - peek_pos_ <= seen && peeked_.size() - peek_pos_ < n) {
    const size_t old = peeked_.size();
    peeked_.resize(peek_pos_ + n);
    const size_t k = ReadStream(peeked_.data() + old, peeked_.size() - old);
    peeked_.resize(old + k);
  }
  return std::string_view(peeked_).substr(peek_pos_, n);
}

void ByteSource::Seek(uint64_t offset) {
  peeked_.clear();
  peek_pos_ = 0;
  in_pos_ = in_end_ = 0;
  raw_eof_ = false;
  raw_total_ = out_total_ = offset;
  if (!from_memory_ && ::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) {
    ThrowInput(name_, static_cast<int64_t>(offset), std::string("cannot seek: ") + std::strerror(errno));
  }
}

size_t ByteSource::Read(char* buf, size_t n) {
  if (peek_pos_ < peeked_.size()) {
    const size_t k = std::min(n, peeked_.size() - peek_pos_);
    std::memcpy(buf, peeked_.data() + peek_pos_, k);
    peek_pos_ += k;
    if (peek_pos_ == peeked_.size()) {
      std::string().swap(peeked_);
      peek_pos_ = 0;
    }
    return k;
  }
  return ReadStream(buf, n);
}

size_t ByteSource::ReadStream(char* buf, size_t n) {
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
                     " bytes, inside the data" + truncated_hint_);
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
