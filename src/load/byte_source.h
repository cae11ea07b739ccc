// The uncompressed byte stream of an input: a file or stdin, inflated on the fly
// when it starts with gzip's magic bytes (multi-member streams too).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace torch2pprof {

class Inflater;

class ByteSource {
 public:
  // path "-" reads standard input. Throws Error if the file cannot be opened.
  explicit ByteSource(const std::string& path);
  // Bytes held in memory; `name` stands for the file in errors.
  ByteSource(std::string_view data, const std::string& name);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // Reads up to n uncompressed bytes into buf; returns 0 only at the end of the
  // input. Throws Error on read errors and corrupt or truncated gzip data.
  size_t Read(char* buf, size_t n);
  // The first up to n (at most kMaxPeek) uncompressed bytes, fewer only at the end of the
  // input, without consuming them: Read hands them out again. Before the first Read
  // only. What decides an input's kind (load/input.h) looks here, so that a pipe is
  // never read twice.
  std::string_view Peek(size_t n);
  // As Peek, but what has come: the bytes already read when there are more than `seen`,
  // else after at most one more read of the input (fewer than n while a pipe's writer has
  // written no more; no more than `seen` only at the end).
  std::string_view PeekMore(size_t n, size_t seen);
  static constexpr size_t kMaxPeek = 64 << 10;

  const std::string& name() const { return name_; }
  // Adds the bytes read from the file (as stored) to *counter as they are read.
  void set_read_counter(std::atomic<uint64_t>* counter) {
    read_counter_ = counter;
    if (counter) counter->fetch_add(raw_total_, std::memory_order_relaxed);  // the magic bytes' read
  }
  // A gzip stream cut short then reads as a normal end, and truncated() says so. The
  // hint ends the error line where it does not (the reader that honours the option).
  void set_allow_truncated(bool allow, std::string hint = "") {
    allow_truncated_ = allow;
    truncated_hint_ = std::move(hint);
  }
  bool truncated() const { return truncated_; }
  bool gzipped() const { return gzip_; }
  // The offset of the next byte Read hands out, in the uncompressed stream.
  uint64_t uncompressed_offset() const { return out_total_ - (peeked_.size() - peek_pos_); }
  // The bytes read so far as stored (compressed, for gzip).
  uint64_t stored_offset() const { return raw_total_; }
  // torch2pprof's own inputs and torch's snapshots inflate 6 to 20 times: past a first
  // kInflateFloor, one that has inflated more than kMaxInflation times what was read of
  // it is made to take the machine (a few hundred KB that would be gigabytes). The one
  // rule of the profile, snapshot and summary readers.
  static constexpr uint64_t kMaxInflation = 256, kInflateFloor = uint64_t{64} << 20;
  bool InflatesPastCap(uint64_t inflated) const {
    return gzip_ && inflated > kInflateFloor && inflated > kMaxInflation * raw_total_;
  }
  // Size of the file as stored (compressed or not); 0 for pipes and stdin. A file still
  // being written grows: RefreshSize reads its size again (and returns it).
  uint64_t input_size() const { return input_size_; }
  uint64_t RefreshSize();

  // Plain text in a file the source opened itself, or in memory: its bytes can be read
  // at any offset, from any thread (ReadAt), so workers can read and cut their own
  // ranges; Seek moves Read to an offset (the scanner resumes there).
  // (Standard input may be a file read from anywhere: only files opened here qualify.)
  bool seekable() const { return !gzip_ && (from_memory_ || (own_fd_ && input_size_ > 0)); }
  // Up to n bytes from offset into buf, fewer only at the end of the input. Counts
  // nothing: the scanner counts each range it hands on (CountUpTo).
  size_t ReadAt(char* buf, size_t n, uint64_t offset) const;
  void Seek(uint64_t offset);
  // The read counter reaches the input's bytes up to `end`; bytes read again after a
  // Seek back are not counted twice.
  void CountUpTo(uint64_t end);

 private:
  void DetectGzip();
  size_t ReadStream(char* buf, size_t n);
  bool FillInput();
  size_t ReadRaw(char* dst, size_t n);

  std::string name_;
  int fd_ = -1;
  bool own_fd_ = false;
  bool gzip_ = false;
  bool raw_eof_ = false;
  bool member_done_ = false;
  std::unique_ptr<Inflater> inflater_;
  std::vector<unsigned char> in_;
  size_t in_pos_ = 0, in_end_ = 0;
  uint64_t input_size_ = 0;
  std::string_view memory_;  // with the memory constructor; the next read starts at raw_total_
  bool from_memory_ = false;
  bool allow_truncated_ = false;
  std::string truncated_hint_;
  bool truncated_ = false;
  uint64_t raw_total_ = 0;  // compressed bytes read from the file
  std::atomic<uint64_t>* read_counter_ = nullptr;
  uint64_t counted_ = 0;    // the read counter has these bytes from the start of the file
  uint64_t out_total_ = 0;  // uncompressed bytes made (inflated, or read from plain text)
  std::string peeked_;      // gzip: inflated bytes that Peek made and Read hands out next
  size_t peek_pos_ = 0;
};

}  // namespace torch2pprof
