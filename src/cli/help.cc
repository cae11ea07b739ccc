#include "cli/help.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <sstream>

namespace torch2pprof::cli {

namespace {
constexpr size_t kDefaultWidth = 100;
constexpr size_t kNarrowest = 60;  // below this a wrapped description is a column of words
}  // namespace

size_t HelpWidth(bool terminal_is_ours) {
  winsize ws{};
  if (terminal_is_ours && ::isatty(1) && ::ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
    return ws.ws_col < kNarrowest ? kNarrowest : ws.ws_col;
  }
  return kDefaultWidth;
}

std::string Wrap(const std::string& text, size_t width, size_t indent) {
  std::string out;
  std::istringstream lines(text);
  std::string line;
  bool first_line = true;
  while (std::getline(lines, line)) {
    if (!first_line) out += '\n';
    first_line = false;
    // A line's own leading spaces are kept on its first row and its continuations.
    const size_t lead = line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' ');
    std::string row = line.substr(0, lead);
    size_t row_width = lead;
    bool row_has_word = false;
    std::istringstream words(line.substr(lead));
    std::string word;
    while (words >> word) {
      if (row_has_word && row_width + 1 + word.size() > width) {
        out += row + '\n';
        row = std::string(indent + lead, ' ');
        row_width = indent + lead;
        row_has_word = false;
      }
      if (row_has_word) row += ' ', ++row_width;
      row += word;
      row_width += word.size();
      row_has_word = true;
    }
    out += row;
  }
  if (!text.empty() && text.back() == '\n') out += '\n';
  return out;
}

size_t WrappedHelp::Right() const { return width_ > column_width_ + 20 ? width_ - column_width_ : 20; }

std::string WrappedHelp::make_option_desc(const CLI::Option* opt) const {
  return Wrap(CLI::Formatter::make_option_desc(opt), Right());
}

std::string WrappedHelp::make_subcommand(const CLI::App* sub) const {
  std::stringstream out;
  CLI::detail::format_help(out, sub->get_display_name(true), Wrap(sub->get_description(), Right()), column_width_);
  return out.str();
}

std::string WrappedHelp::make_description(const CLI::App* app) const {
  return Wrap(CLI::Formatter::make_description(app), width_);
}

std::string WrappedHelp::make_footer(const CLI::App* app) const {
  const std::string footer = app->get_footer();
  return footer.empty() ? std::string() : Wrap(footer, width_, 4) + "\n";
}

}  // namespace torch2pprof::cli
