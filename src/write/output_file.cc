#include "torch2pprof/output.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>

#include "base/gzip.h"
#include "base/magic.h"
#include "torch2pprof/error.h"
#include "write/output_guard.h"

namespace torch2pprof {
namespace {

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// The temporary file being written, for the signal handler: SIGINT or SIGTERM
// mid-write removes it, so no partial file is ever left behind. (Process-wide by
// nature: a signal handler can reach nothing else.)
char g_temp_path[PATH_MAX];
volatile sig_atomic_t g_temp_active = 0;

void RemoveTempAndDie(int sig) {
  if (g_temp_active) ::unlink(g_temp_path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

struct TempGuard {
  explicit TempGuard(const std::string& path) {
    std::snprintf(g_temp_path, sizeof g_temp_path, "%s", path.c_str());
    g_temp_active = 1;
    old_int_ = ::signal(SIGINT, RemoveTempAndDie);
    old_term_ = ::signal(SIGTERM, RemoveTempAndDie);
  }
  ~TempGuard() {
    g_temp_active = 0;
    ::signal(SIGINT, old_int_);
    ::signal(SIGTERM, old_term_);
  }
  TempGuard(const TempGuard&) = delete;
  TempGuard& operator=(const TempGuard&) = delete;
  void (*old_int_)(int);
  void (*old_term_)(int);
};

// The process's umask, read without setting it (umask(2) can only set it, and setting it
// even for a moment changes the mode of files other threads create meanwhile).
mode_t CurrentUmask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  }
  return 022;
}

// A link into /proc or /dev (/dev/stdout -> /proc/self/fd/1): an open descriptor, whatever
// file it is now; renaming over the path would replace the link, not write to it.
bool IsDescriptorLink(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return false;
    char target[PATH_MAX];
    ssize_t n = ::readlink(p.c_str(), target, sizeof target - 1);
    if (n < 0) return false;
    target[n] = '\0';
    std::string t = target;
    if (t.rfind("/proc/", 0) == 0 || t.rfind("/dev/fd/", 0) == 0) return true;
    if (t[0] != '/') t = p.substr(0, p.rfind('/') + 1) + t;
    p = t;
  }
  return false;
}

// The first bytes of the file at path, as many as n.
std::string ReadHead(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string head(n, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

}  // namespace

bool LooksLikeOutput(const std::string& path) {
  const std::string head = ReadHead(path, 1 << 20);
  if (head.empty()) return true;
  if (StartsLikeProfile(IsGzip(head) ? InflateHead(head, 256) : head)) return true;
  if (StartsLikeSummary(head)) return true;
  if (head.rfind(kTimelineHead, 0) == 0) return true;
  // pstats: a marshalled dict ('{', with or without marshal's reference flag).
  if (head[0] == '{' || static_cast<unsigned char>(head[0]) == 0xfb) {
    return head.size() > 1 && (head[1] == '0' || head[1] == '(' || static_cast<unsigned char>(head[1]) == 0xa8);
  }
  return StartsLikeFolded(head);
}

struct OutputFile::State {
  std::string path;    // as given, for messages
  std::string target;  // the file replaced: path, or what a link to a file points to
  std::string dir, base;
  std::string tmp;  // the temporary file's name, once it has one
  int fd = -1;
  bool replace = false;  // written aside, then renamed over target (else in place)
  bool unnamed = false;  // O_TMPFILE: no name until it is complete
  bool committed = false;
  std::optional<TempGuard> guard;
};

OutputFile::OutputFile(const std::string& path, const WriteOptions& options) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.path = path;
  if (path.empty()) ThrowOutput(path, "the output name is empty");
  if (path == "-") {
    s.fd = 1;
    s.path = "standard output";
    return;
  }
  for (const std::string& input : options.inputs) {
    if (input != "-" && (path == input || SameFile(path, input))) ThrowOutput(path, "refusing to overwrite an input");
  }
  struct stat out_st;
  const bool exists = ::stat(path.c_str(), &out_st) == 0;
  if (IsDescriptorLink(path) || (exists && !S_ISREG(out_st.st_mode) && !S_ISDIR(out_st.st_mode))) {
    // A device, pipe or socket (/dev/null, /dev/full, a fifo), or a link to a descriptor
    // (/dev/stdout): written as it is; renaming a file over it would replace the node.
    s.fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (s.fd < 0) s.fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);  // a device may refuse O_TRUNC
    if (s.fd < 0) ThrowOutput(path, std::string("cannot open for writing: ") + std::strerror(errno));
    return;
  }
  if (exists && S_ISDIR(out_st.st_mode)) ThrowOutput(path, "is a directory");
  // A link to a file: the file is replaced, the link stays.
  s.target = path;
  if (exists) {
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved)) s.target = resolved;
  }
  if (exists && !options.force && !LooksLikeOutput(s.target)) {
    ThrowOutput(path,
                "refusing to replace a file that is no profile, folded stacks, pstats or summary torch2pprof wrote; "
                "--force replaces it");
  }
  size_t slash = s.target.rfind('/');
  s.dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : s.target.substr(0, slash));
  s.base = slash == std::string::npos ? s.target : s.target.substr(slash + 1);
  if (s.base.empty()) ThrowOutput(path, "the output names a directory, not a file");
  s.replace = true;
  const mode_t mode = 0666 & ~CurrentUmask();
  // An unnamed file in the output's directory, linked in only once complete: a kill at
  // any point leaves nothing behind. Where the file system has none, a named temporary
  // file, removed on an error (and with remove_on_signal, on SIGINT and SIGTERM).
  s.fd = ::open(s.dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
  s.unnamed = s.fd >= 0;
  if (!s.unnamed) {
    s.tmp = s.dir + "/." + s.base + ".tmp.XXXXXX";
    s.fd = ::mkstemp(s.tmp.data());
    if (s.fd < 0) ThrowOutput(path, std::string("cannot create a file in ") + s.dir + ": " + std::strerror(errno));
    if (options.remove_on_signal) s.guard.emplace(s.tmp);
    ::fchmod(s.fd, mode);
  }
}

OutputFile::~OutputFile() {
  State& s = *s_;
  if (s.committed) return;
  if (s.fd >= 0 && s.path != "standard output") ::close(s.fd);
  if (s.replace && !s.unnamed && !s.tmp.empty()) ::unlink(s.tmp.c_str());
}

void OutputFile::Write(std::string_view data) {
  State& s = *s_;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(s.fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ThrowOutput(s.path, std::string("cannot write: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

void OutputFile::Commit() {
  State& s = *s_;
  if (s.path == "standard output") {
    s.committed = true;
    return;
  }
  if (s.replace && s.unnamed) {
    // linkat needs a name that does not exist: link under a temporary name, then rename.
    const std::string proc = "/proc/self/fd/" + std::to_string(s.fd);
    for (int attempt = 0; attempt < 100 && s.tmp.empty(); ++attempt) {
      std::string name = s.dir + "/." + s.base + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(attempt);
      if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        s.tmp = name;
        s.unnamed = false;
      } else if (errno != EEXIST) {
        ThrowOutput(s.path, std::string("cannot link the written file into ") + s.dir + ": " + std::strerror(errno));
      }
    }
    if (s.tmp.empty())
      ThrowOutput(s.path, "cannot link the written file into " + s.dir + ": every temporary name is taken");
  }
  const int fd = s.fd;
  s.fd = -1;
  if (::close(fd) != 0) ThrowOutput(s.path, std::string("cannot write: ") + std::strerror(errno));
  if (s.replace && ::rename(s.tmp.c_str(), s.target.c_str()) != 0)
    ThrowOutput(s.path, std::string("cannot rename into place: ") + std::strerror(errno));
  s.committed = true;
}

void WriteOutputFile(const std::string& path, const std::string& data, const WriteOptions& options) {
  OutputFile out(path, options);
  out.Write(data);
  out.Commit();
}

}  // namespace torch2pprof
