// A JSON reader that pulls one value at a time from a byte stream, holding only the
// token it reads: small documents of torch2pprof's own (rank summaries) are read in
// memory that follows what the caller keeps, never the text's size or nesting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace torch2pprof {

class JsonPull {
 public:
  // read(buf, n) returns up to n bytes, 0 only at the end. Syntax errors throw Error
  // (kInput) naming `file` and the byte, their message after `what_prefix`.
  using ReadFn = std::function<size_t(char*, size_t)>;
  JsonPull(ReadFn read, std::string file, std::string what_prefix);

  enum class Type { kObject, kArray, kString, kNumber, kTrue, kFalse, kNull, kEnd };
  // The next value's type, white space skipped (kEnd: no more bytes).
  Type Peek();
  // '{' then each key: true with the key, false at the '}' (consumed).
  void BeginObject();
  bool NextKey(std::string* key);
  // '[' then each element: true before an element, false at the ']' (consumed).
  void BeginArray();
  bool NextElement();
  std::string String();
  // A number's text as written ("-12", "0.3", "1e5"), checked against JSON's grammar.
  std::string Number();
  void Null();
  // Any value without holding it: its strings and keys are read, never built.
  void Skip();

  // What a document of torch2pprof's own may hold (its summaries nest 4 deep and name
  // their keys in a few bytes): past these the input is refused, naming the cap, so that
  // no text, however nested or long, costs more than these.
  static constexpr size_t kMaxDepth = 512;
  static constexpr size_t kMaxKey = 4096;
  static constexpr size_t kMaxString = size_t{64} << 20;  // a trace's event may hold as much
  // Only white space is left.
  void End();

  // The offset of the next byte not yet read (of the token that failed, in errors).
  uint64_t offset() const { return base_ + pos_; }
  [[noreturn]] void Fail(const std::string& what) const;
  [[noreturn]] void FailAt(uint64_t offset, const std::string& what) const;

 private:
  int Get();   // the next byte, -1 at the end
  int Look();  // the next byte not consumed, -1 at the end
  void SkipSpace();
  void Expect(char c, const char* what);
  void Word(const char* word);
  void AfterValue();  // a comma or the container's end is next
  void Open();        // a container opened: deeper than kMaxDepth is refused
  // A string's text into *out (nullptr: read and checked, not kept), at most max bytes.
  void ReadString(std::string* out, size_t max, const char* what);

  ReadFn read_;
  std::string file_, prefix_;
  std::string buf_;
  size_t pos_ = 0, end_ = 0;
  uint64_t base_ = 0;  // stream offset of buf_[0]
  bool eof_ = false;
  // Per open container, whether its first element or key was read (at most kMaxDepth).
  std::string first_;
};

}  // namespace torch2pprof
