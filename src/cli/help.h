// --help for people: CLI11 prints each description on one line however long (510
// characters on analyze); this formatter wraps them to the terminal's width.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>

namespace torch2pprof::cli {

// Columns help is wrapped to: the terminal's on standard output, else 100 (pipes, files,
// a host such as the Python module).
size_t HelpWidth(bool terminal_is_ours);

// text broken at spaces into lines of at most width columns (a longer word stays whole);
// the lines after the first start with `indent` spaces. Existing line breaks are kept.
std::string Wrap(const std::string& text, size_t width, size_t indent = 0);

// CLI11's formatter with descriptions, the commands' list and the footers wrapped to
// width; continuation lines stay under the description's column.
class WrappedHelp : public CLI::Formatter {
 public:
  explicit WrappedHelp(size_t width) : width_(width) {}
  std::string make_option_desc(const CLI::Option* opt) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;
  std::string make_footer(const CLI::App* app) const override;

 private:
  size_t Right() const;  // the description column's width
  size_t width_;
};

}  // namespace torch2pprof::cli
