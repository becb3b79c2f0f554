#include "backend/dpdk/eal.h"

#include <pthread.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <sched.h>

#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace braid::backend::dpdk {
namespace {

struct EalState {
  std::mutex mu;
  bool tried = false;
  absl::Status result;
  std::string args;
  // rte_eal_init keeps pointers into argv (device arguments), so the
  // strings live as long as the process.
  std::vector<std::string> argv_storage;
  std::vector<char*> argv;
};

EalState& State() {
  static EalState* s = new EalState;  // never destroyed: DPDK outlives main
  return *s;
}

absl::Status Init(EalState& s, absl::string_view args) {
  std::vector<std::string> tokens;
  if (absl::Status st = SplitEalArgs(args, &tokens); !st.ok()) return st;
  for (const std::string& t : tokens) {
    // The EAL prints its usage and exits the process on these.
    if (t == "-h" || t == "--help") {
      return absl::InvalidArgumentError(absl::StrCat(
          "DPDK EAL arguments: \"", t, "\" would exit the process"));
    }
  }
  s.argv_storage.push_back("braid");
  for (std::string& t : tokens) s.argv_storage.push_back(std::move(t));
  for (std::string& t : s.argv_storage) s.argv.push_back(t.data());
  s.argv.push_back(nullptr);

  cpu_set_t affinity;
  const bool have_affinity =
      pthread_getaffinity_np(pthread_self(), sizeof(affinity), &affinity) == 0;
  const int r =
      rte_eal_init(static_cast<int>(s.argv.size() - 1), s.argv.data());
  const int err = rte_errno;
  if (have_affinity) {
    pthread_setaffinity_np(pthread_self(), sizeof(affinity), &affinity);
  }
  if (r < 0) {
    return absl::UnavailableError(absl::StrCat(
        "DPDK EAL initialisation failed (rte_eal_init: ", rte_strerror(err),
        ") with arguments \"", args, "\""));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SplitEalArgs(absl::string_view args,
                          std::vector<std::string>* out) {
  out->clear();
  std::string cur;
  bool in_token = false;
  char quote = 0;
  for (char c : args) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        cur.push_back(c);
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_token = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_token) out->push_back(std::move(cur));
      cur.clear();
      in_token = false;
    } else {
      cur.push_back(c);
      in_token = true;
    }
  }
  if (quote != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("DPDK EAL arguments: unterminated ", std::string(1, quote),
                     " quote in \"", args, "\""));
  }
  if (in_token) out->push_back(std::move(cur));
  return absl::OkStatus();
}

absl::Status EnsureEal(absl::string_view args) {
  EalState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.tried) {
    s.tried = true;
    s.args = std::string(args);
    s.result = Init(s, args);
    return s.result;
  }
  if (!s.result.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "DPDK EAL: an earlier initialisation in this process failed and "
        "cannot be retried: ",
        s.result.message()));
  }
  if (!args.empty() && args != s.args) {
    return absl::FailedPreconditionError(
        absl::StrCat("DPDK EAL: already initialised in this process with \"",
                     s.args, "\"; another endpoint passed \"", args,
                     "\" (pass the same arguments or none)"));
  }
  return absl::OkStatus();
}

}  // namespace braid::backend::dpdk
