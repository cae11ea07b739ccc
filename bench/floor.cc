// The floor convert is measured against: one thread that inflates the input and
// visits every event's ph, name, pid, tid, ts and dur with simdjson on-demand, and
// does nothing else. It holds the whole JSON text, so it stops at simdjson's 4 GiB
// single-document limit (convert streams and has none).
#include <simdjson.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::string ReadAll(const char* path) {
  gzFile f = gzopen(path, "rb");  // reads plain files as they are, inflates gzip
  if (!f) {
    std::perror(path);
    std::exit(1);
  }
  gzbuffer(f, 1 << 20);
  std::string out;
  std::vector<char> buf(1 << 22);
  int n;
  while ((n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()))) > 0)
    out.append(buf.data(), static_cast<size_t>(n));
  gzclose(f);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: torch2pprof_floor TRACE\n");
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  std::string json = ReadAll(argv[1]);
  if (json.size() >= (size_t{4} << 30)) {
    std::fprintf(stderr, "floor: %zu bytes is beyond simdjson's 4 GiB document limit\n", json.size());
    return 3;
  }
  size_t len = json.size();
  json.append(simdjson::SIMDJSON_PADDING, ' ');
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(json.data(), len, json.size()).get(doc)) return 1;
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
  std::printf("floor: %llu events, %zu bytes of JSON, %.3f s, %.1f MB/s (checksum %llu)\n",
              static_cast<unsigned long long>(count), len, secs, len / secs / 1e6,
              static_cast<unsigned long long>(bytes));
  return 0;
}
