#include "base/json_pull.h"

#include <utility>

#include "torch2pprof/error.h"

namespace torch2pprof {

JsonPull::JsonPull(ReadFn read, std::string file, std::string what_prefix)
    : read_(std::move(read)), file_(std::move(file)), prefix_(std::move(what_prefix)), buf_(64 << 10, '\0') {}

void JsonPull::FailAt(uint64_t offset, const std::string& what) const {
  ThrowInput(file_, static_cast<int64_t>(offset), prefix_ + what);
}

void JsonPull::Fail(const std::string& what) const { FailAt(offset(), what); }

int JsonPull::Look() {
  if (pos_ == end_) {
    if (eof_) return -1;
    base_ += end_;
    pos_ = end_ = 0;
    end_ = read_(buf_.data(), buf_.size());
    if (end_ == 0) {
      eof_ = true;
      return -1;
    }
  }
  return static_cast<unsigned char>(buf_[pos_]);
}

int JsonPull::Get() {
  const int c = Look();
  if (c >= 0) ++pos_;
  return c;
}

void JsonPull::SkipSpace() {
  for (int c = Look(); c == ' ' || c == '\n' || c == '\r' || c == '\t'; c = Look()) ++pos_;
}

void JsonPull::Expect(char c, const char* what) {
  SkipSpace();
  if (Look() != static_cast<unsigned char>(c)) Fail(std::string("invalid JSON: expected ") + what);
  ++pos_;
}

JsonPull::Type JsonPull::Peek() {
  SkipSpace();
  const int c = Look();
  switch (c) {
    case -1:
      return Type::kEnd;
    case '{':
      return Type::kObject;
    case '[':
      return Type::kArray;
    case '"':
      return Type::kString;
    case 't':
      return Type::kTrue;
    case 'f':
      return Type::kFalse;
    case 'n':
      return Type::kNull;
    default:
      if (c == '-' || (c >= '0' && c <= '9')) return Type::kNumber;
      Fail("invalid JSON: expected a value");
  }
}

void JsonPull::AfterValue() {
  if (first_.empty()) return;
  first_.back() = 1;
}

void JsonPull::Open() {
  if (first_.size() >= kMaxDepth) {
    Fail("nested deeper than " + std::to_string(kMaxDepth) + " levels (torch2pprof's own documents nest a few)");
  }
  first_.push_back(0);
}

void JsonPull::BeginObject() {
  Expect('{', "'{'");
  Open();
}

bool JsonPull::NextKey(std::string* key) {
  SkipSpace();
  if (Look() == '}') {
    ++pos_;
    first_.pop_back();
    AfterValue();
    return false;
  }
  if (first_.back()) Expect(',', "',' or '}'");
  SkipSpace();
  if (Look() != '"') Fail("invalid JSON: expected a key");
  first_.back() = 0;  // the value is not read yet
  if (key) {
    key->clear();
    ReadString(key, kMaxKey, "a key");
  } else {
    ReadString(nullptr, kMaxKey, "a key");
  }
  first_.back() = 0;  // ReadString marked it read: the value is not
  Expect(':', "':'");
  return true;
}

void JsonPull::BeginArray() {
  Expect('[', "'['");
  Open();
}

bool JsonPull::NextElement() {
  SkipSpace();
  if (Look() == ']') {
    ++pos_;
    first_.pop_back();
    AfterValue();
    return false;
  }
  if (first_.back()) Expect(',', "',' or ']'");
  first_.back() = 0;
  return true;
}

std::string JsonPull::String() {
  std::string out;
  ReadString(&out, kMaxString, "a string");
  return out;
}

void JsonPull::ReadString(std::string* text, size_t max, const char* what) {
  Expect('"', "a string");
  const uint64_t at = offset() - 1;
  size_t length = 0;
  auto put = [&](char c) {
    if (++length > max) FailAt(at, std::string(what) + " longer than " + std::to_string(max) + " bytes");
    if (text) text->push_back(c);
  };
  for (;;) {
    const int c = Get();
    if (c < 0) Fail("invalid JSON: the input ends inside a string");
    if (c == '"') break;
    if (c < 0x20) FailAt(offset() - 1, "invalid JSON: a control character inside a string");
    if (c != '\\') {
      put(static_cast<char>(c));
      continue;
    }
    const int e = Get();
    switch (e) {
      case '"':
      case '\\':
      case '/':
        put(static_cast<char>(e));
        break;
      case 'b':
        put('\b');
        break;
      case 'f':
        put('\f');
        break;
      case 'n':
        put('\n');
        break;
      case 'r':
        put('\r');
        break;
      case 't':
        put('\t');
        break;
      case 'u': {
        auto hex4 = [&]() {
          uint32_t v = 0;
          for (int k = 0; k < 4; ++k) {
            const int h = Get();
            const int d = h >= '0' && h <= '9'   ? h - '0'
                          : h >= 'a' && h <= 'f' ? h - 'a' + 10
                          : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                 : -1;
            if (d < 0) Fail("invalid JSON: a \\u escape without four hex digits");
            v = v * 16 + static_cast<uint32_t>(d);
          }
          return v;
        };
        uint32_t cp = hex4();
        if (cp >= 0xd800 && cp < 0xdc00) {  // a surrogate pair, else U+FFFD
          if (Look() == '\\') {
            ++pos_;
            if (Get() != 'u') Fail("invalid JSON: a high surrogate without its low half");
            const uint32_t lo = hex4();
            cp = lo >= 0xdc00 && lo < 0xe000 ? 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00) : 0xfffd;
          } else {
            cp = 0xfffd;
          }
        } else if (cp >= 0xdc00 && cp < 0xe000) {
          cp = 0xfffd;
        }
        if (cp < 0x80) {
          put(static_cast<char>(cp));
        } else if (cp < 0x800) {
          put(static_cast<char>(0xc0 | (cp >> 6)));
          put(static_cast<char>(0x80 | (cp & 0x3f)));
        } else if (cp < 0x10000) {
          put(static_cast<char>(0xe0 | (cp >> 12)));
          put(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
          put(static_cast<char>(0x80 | (cp & 0x3f)));
        } else {
          put(static_cast<char>(0xf0 | (cp >> 18)));
          put(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
          put(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
          put(static_cast<char>(0x80 | (cp & 0x3f)));
        }
        break;
      }
      default:
        FailAt(offset() - 1, "invalid JSON: an unknown escape in a string");
    }
  }
  AfterValue();
}

std::string JsonPull::Number() {
  SkipSpace();
  const uint64_t at = offset();
  std::string out;
  auto digits = [&]() {
    size_t n = 0;
    for (int c = Look(); c >= '0' && c <= '9'; c = Look(), ++n) {
      if (out.size() > 1000) FailAt(at, "invalid JSON: a number longer than 1000 characters");
      out.push_back(static_cast<char>(Get()));
    }
    return n;
  };
  if (Look() == '-') out.push_back(static_cast<char>(Get()));
  if (Look() == '0') {
    out.push_back(static_cast<char>(Get()));
  } else if (digits() == 0) {
    FailAt(at, "invalid JSON: expected a number");
  }
  if (Look() == '.') {
    out.push_back(static_cast<char>(Get()));
    if (digits() == 0) FailAt(at, "invalid JSON: a number with no digits after its point");
  }
  if (Look() == 'e' || Look() == 'E') {
    out.push_back(static_cast<char>(Get()));
    if (Look() == '+' || Look() == '-') out.push_back(static_cast<char>(Get()));
    if (digits() == 0) FailAt(at, "invalid JSON: a number with no digits in its exponent");
  }
  AfterValue();
  return out;
}

void JsonPull::Word(const char* word) {
  SkipSpace();
  const uint64_t at = offset();
  for (const char* w = word; *w; ++w) {
    if (Get() != static_cast<unsigned char>(*w)) FailAt(at, "invalid JSON: expected a value");
  }
  AfterValue();
}

void JsonPull::Null() { Word("null"); }

void JsonPull::Skip() {
  // No recursion: the containers opened here are a string of kinds, a byte a level (at
  // most kMaxDepth); strings and keys are checked and counted, never built.
  std::string open;
  for (;;) {
    switch (Peek()) {
      case Type::kObject:
        BeginObject();
        open.push_back('o');
        break;
      case Type::kArray:
        BeginArray();
        open.push_back('a');
        break;
      case Type::kString:
        ReadString(nullptr, kMaxString, "a string");
        break;
      case Type::kNumber:
        Number();
        break;
      case Type::kTrue:
        Word("true");
        break;
      case Type::kFalse:
        Word("false");
        break;
      case Type::kNull:
        Null();
        break;
      case Type::kEnd:
        Fail("invalid JSON: the input ends inside a value");
    }
    // On to the next value of the innermost container, closing those that end here.
    for (;;) {
      if (open.empty()) return;
      if (open.back() == 'o' ? NextKey(nullptr) : NextElement()) break;
      open.pop_back();
    }
  }
}

void JsonPull::End() {
  SkipSpace();
  if (Look() >= 0) Fail("invalid JSON: data after the end of the document");
}

}  // namespace torch2pprof
