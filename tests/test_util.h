// Helpers shared by the unit tests: temporary files, loading a trace from text,
// and decoding a written profile back into folded stacks with protobuf.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/analyzer.h"
#include "torch2pprof/stages/trace.h"

namespace torch2pprof::testing {

// A fresh directory, removed with its files when the object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const;

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path);
std::string Gunzip(const std::string& data);
// Bytes from hex text, two digits a byte ("8002" -> "\x80\x02"): pickles written out.
std::string Unhex(const std::string& hex);

// Loads a trace given as JSON text (written to a temporary file first).
Trace LoadText(const std::string& json);

// Analyses a trace given as JSON text, repairs allowed, on `threads` threads.
Analysis AnalyzeText(const std::string& json, AnalysisOptions options = {}, int threads = 1);

// A profile decoded from its .pb.gz bytes.
struct Decoded {
  std::vector<std::string> sample_types;  // "type/unit"
  std::string default_sample_type;
  // "pid=1,tid=2|root;child;leaf" (system names, root first) -> summed values
  std::map<std::string, std::vector<int64_t>> stacks;
  std::map<std::string, std::string> display_names;              // system name -> Function.name
  std::map<std::string, std::pair<std::string, int64_t>> files;  // system name -> (filename, line)
  std::vector<std::string> comments;
  int64_t time_nanos = 0;
  int64_t duration_nanos = 0;
  size_t functions = 0, locations = 0, mappings = 0;
  std::string mapping_file;      // the first Mapping's filename
  bool locations_mapped = true;  // every Location names that Mapping
  std::string problem;           // non-empty when the profile breaks a pprof rule
};
Decoded DecodeProfile(const std::string& gz_bytes);

// Converts JSON text through the whole pipeline and decodes the result.
Decoded ConvertText(const std::string& json, int threads = 1);

}  // namespace torch2pprof::testing
