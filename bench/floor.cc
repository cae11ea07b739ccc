// The floor convert is measured against: one thread that visits every event's ph,
// name, pid, tid, ts and dur with simdjson on-demand, and does nothing else. Plain JSON
// is mapped (mmap with MAP_POPULATE, from the page cache) and parsed in place, so no
// copy of the text counts against it; .json.gz is inflated as a stream, with the
// inflater convert uses (ISA-L or zlib), into memory first. It holds the whole text, so
// it stops at simdjson's 4 GiB single-document limit (convert streams and has none).
// `--inflate TRACE` only inflates, through the same byte source: the compressed floor.
#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/gzip.h"
#include "load/byte_source.h"

namespace {

// Plain files as they are, gzip inflated; `keep` false only counts the bytes.
std::string ReadAll(const char* path, bool keep, uint64_t* total) {
  torch2pprof::ByteSource src(path);
  std::string out;
  std::vector<char> buf(1 << 20);
  while (size_t n = src.Read(buf.data(), buf.size())) {
    if (keep) out.append(buf.data(), n);
    *total += n;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool inflate_only = argc == 3 && std::strcmp(argv[1], "--inflate") == 0;
  if (argc != 2 && !inflate_only) {
    std::fprintf(stderr, "usage: torch2pprof_floor [--inflate] TRACE\n");
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  if (inflate_only) {
    uint64_t total = 0;
    ReadAll(argv[2], false, &total);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("inflate (%s): %llu bytes, %.3f s, %.1f MB/s\n", torch2pprof::InflateLibrary().c_str(),
                static_cast<unsigned long long>(total), secs, total / secs / 1e6);
    return 0;
  }
  // Mapped in place when the file is plain JSON and its last page leaves simdjson's
  // padding readable; else read (and inflated) into memory.
  std::string json;
  const char* text = nullptr;
  size_t len = 0, capacity = 0;
  int fd = open(argv[1], O_RDONLY);
  struct stat st {};
  unsigned char magic[2] = {0, 0};
  if (fd < 0 || fstat(fd, &st) != 0 || pread(fd, magic, 2, 0) < 0) {
    std::perror(argv[1]);
    return 1;
  }
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t size = static_cast<size_t>(st.st_size);
  bool gzipped = magic[0] == 0x1f && magic[1] == 0x8b;
  if (!gzipped && size > 0 && (size + page - 1) / page * page - size >= simdjson::SIMDJSON_PADDING) {
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED) {
      std::perror("mmap");
      return 1;
    }
    text = static_cast<const char*>(map);
    len = size;
    capacity = (size + page - 1) / page * page;
  } else {
    uint64_t total = 0;
    json = ReadAll(argv[1], true, &total);
    len = json.size();
    json.append(simdjson::SIMDJSON_PADDING, ' ');
    text = json.data();
    capacity = json.size();
  }
  close(fd);
  if (len >= (size_t{4} << 30)) {
    std::fprintf(stderr, "floor: %zu bytes is beyond simdjson's 4 GiB document limit\n", len);
    return 3;
  }
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(text, len, capacity).get(doc)) return 1;
  simdjson::ondemand::array events;
  simdjson::ondemand::value root;
  if (doc.get_value().get(root)) return 1;
  simdjson::ondemand::json_type type;
  if (root.type().get(type)) return 1;
  if (type == simdjson::ondemand::json_type::array) {
    if (root.get_array().get(events)) return 1;
  } else if (root["traceEvents"].get_array().get(events)) {
    return 1;
  }
  // Checksums keep the compiler from dropping the visits.
  uint64_t count = 0, bytes = 0;
  for (auto element : events) {
    simdjson::ondemand::object ev;
    if (element.get_object().get(ev)) return 1;
    for (auto field : ev) {
      simdjson::ondemand::raw_json_string key;
      if (field.key().get(key)) return 1;
      simdjson::ondemand::value v = field.value();
      if (key == "ph" || key == "name" || key == "pid" || key == "tid") {
        std::string_view s;
        if (!v.get_string().get(s))
          bytes += s.size();
        else
          bytes += v.raw_json_token().size();
      } else if (key == "ts" || key == "dur") {
        bytes += v.raw_json_token().size();
      }
    }
    ++count;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("floor (%s): %llu events, %zu bytes of JSON, %.3f s, %.1f MB/s (checksum %llu)\n",
              text == json.data() ? (gzipped ? "inflated" : "read") : "mapped", static_cast<unsigned long long>(count),
              len, secs, len / secs / 1e6, static_cast<unsigned long long>(bytes));
  return 0;
}
