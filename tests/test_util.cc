#include "test_util.h"

#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "base/executor.h"
#include "convert/aggregator.h"
#include "model/lane_builder.h"
#include "proto/profile.pb.h"
#include "torch2pprof/output.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof::testing {

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "t2p_test.XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::Write(const std::string& name, const std::string& content) const {
  std::string p = path_ + "/" + name;
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

std::string Gunzip(const std::string& data) {
  z_stream zs{};
  inflateInit2(&zs, 15 + 16);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[1 << 16];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof buf - zs.avail_out);
  } while (rc == Z_OK);
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("bad gzip");
  return out;
}

Trace LoadText(const std::string& json) {
  TempDir dir;
  return LoadTrace(LoadOptions{dir.Write("trace.json", json)});
}

Analysis AnalyzeText(const std::string& json, AnalysisOptions options, int threads) {
  TempDir dir;
  Trace trace = LoadTrace(LoadOptions{dir.Write("t.json", json), 1, true});
  Executor ex(threads);
  return Analyze(trace, BuildModel(trace), options, ex);
}

Decoded DecodeProfile(const std::string& gz_bytes) {
  perftools::profiles::Profile pb;
  Decoded d;
  if (!pb.ParseFromString(Gunzip(gz_bytes))) {
    d.problem = "not a profile.proto message";
    return d;
  }
  auto str = [&](int64_t i) -> std::string {
    if (i < 0 || i >= pb.string_table_size()) {
      d.problem = "string index out of range";
      return "";
    }
    return pb.string_table(static_cast<int>(i));
  };
  if (pb.string_table_size() == 0 || !pb.string_table(0).empty()) d.problem = "string_table[0] is not empty";
  std::set<std::string> unique(pb.string_table().begin(), pb.string_table().end());
  if (unique.size() != static_cast<size_t>(pb.string_table_size())) d.problem = "a string is in the table twice";
  for (const auto& t : pb.sample_type()) d.sample_types.push_back(str(t.type()) + "/" + str(t.unit()));
  d.default_sample_type = str(pb.default_sample_type());
  std::map<uint64_t, std::string> fn_sys;
  for (const auto& f : pb.function()) {
    if (f.id() == 0 || fn_sys.count(f.id())) d.problem = "function id 0 or repeated";
    fn_sys[f.id()] = str(f.system_name());
    d.display_names[str(f.system_name())] = str(f.name());
    d.files[str(f.system_name())] = {str(f.filename()), f.start_line()};
  }
  std::map<uint64_t, std::string> loc_sys;
  for (const auto& l : pb.location()) {
    if (l.id() == 0 || loc_sys.count(l.id()) || l.line_size() != 1) d.problem = "bad location";
    if (l.line_size() == 1) {
      loc_sys[l.id()] = fn_sys.at(l.line(0).function_id());
      if (l.line(0).line() != d.files[loc_sys[l.id()]].second) d.problem = "Line.line differs from start_line";
    }
  }
  for (const auto& s : pb.sample()) {
    if (s.value_size() != pb.sample_type_size()) d.problem = "sample value arity";
    std::map<std::string, std::string> labels;
    for (const auto& l : s.label()) labels[str(l.key())] = l.str() ? str(l.str()) : std::to_string(l.num());
    std::string key;
    for (const auto& [k, v] : labels) key += (key.empty() ? "" : ",") + k + "=" + v;
    key += "|";
    for (int i = s.location_id_size() - 1; i >= 0; --i) {
      auto it = loc_sys.find(s.location_id(i));
      if (it == loc_sys.end()) d.problem = "dangling location id";
      key += (i == s.location_id_size() - 1 ? "" : ";") + (it == loc_sys.end() ? "?" : it->second);
    }
    auto& v = d.stacks[key];
    v.resize(static_cast<size_t>(s.value_size()));
    for (int i = 0; i < s.value_size(); ++i) v[static_cast<size_t>(i)] += s.value(i);
  }
  for (int64_t c : pb.comment()) d.comments.push_back(str(c));
  d.time_nanos = pb.time_nanos();
  d.duration_nanos = pb.duration_nanos();
  d.functions = static_cast<size_t>(pb.function_size());
  d.locations = static_cast<size_t>(pb.location_size());
  d.mappings = static_cast<size_t>(pb.mapping_size());
  if (pb.mapping_size() > 0) d.mapping_file = str(pb.mapping(0).filename());
  for (const auto& loc : pb.location()) {
    d.locations_mapped &= pb.mapping_size() > 0 && loc.mapping_id() == pb.mapping(0).id() && loc.address() == 0;
  }
  return d;
}

Decoded ConvertText(const std::string& json, int threads) {
  Trace trace = LoadText(json);
  return DecodeProfile(Gzip(EncodeProfile(Aggregate(trace, threads))));
}

}  // namespace torch2pprof::testing
