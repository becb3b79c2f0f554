#include "tools/common/flag_parser.h"

#include <cassert>
#include <cmath>
#include <cstdio>

#include "absl/strings/match.h"

namespace braid::tools {

absl::Status FlagError(absl::string_view flag, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(flag, ": ", why));
}

absl::Status ParseRealFlag(absl::string_view flag, absl::string_view value,
                           const RealRange& r, double* out) {
  double x = 0;
  const bool ok = absl::SimpleAtod(value, &x) && std::isfinite(x) &&
                  (r.lo_open ? x > r.lo : x >= r.lo) &&
                  (r.hi_open ? x < r.hi : x <= r.hi);
  if (!ok) {
    const std::string range =
        r.lo_open || r.hi_open ? absl::StrCat(r.lo_open ? "(" : "[", r.lo, ", ",
                                              r.hi, r.hi_open ? ")" : "]")
                               : absl::StrCat(r.lo, "..", r.hi);
    return FlagError(flag, absl::StrCat("expected a number in ", range,
                                        ", got '", value, "'"));
  }
  *out = x;
  return absl::OkStatus();
}

std::string ChoiceList(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

void FlagParser::Add(Names names, Flag flag) {
  for (const char* name : names) {
    const bool added = flags_.emplace(name, flag).second;
    assert(added && "a flag is registered twice");
    (void)added;
  }
}

void FlagParser::Switch(Names names, SwitchHandler on) {
  Add(names, Flag{nullptr, std::move(on)});
}

void FlagParser::Switch(Names names, bool* out, bool value) {
  Switch(names, [out, value](absl::string_view) {
    *out = value;
    return absl::OkStatus();
  });
}

void FlagParser::Value(Names names, ValueHandler on) {
  Add(names, Flag{std::move(on), nullptr});
}

void FlagParser::Real(Names names, RealRange range, double* out) {
  Value(names, [range, out](absl::string_view flag, absl::string_view v) {
    return ParseRealFlag(flag, v, range, out);
  });
}

absl::Status FlagParser::Parse(int argc, char** argv) {
  help_ = false;
  for (int i = 1; i < argc; ++i) {
    // "--flag=value" is the same as "--flag value".
    absl::string_view flag = argv[i];
    absl::string_view joined;
    bool has_joined = false;
    if (absl::StartsWith(flag, "--")) {
      const size_t eq = flag.find('=');
      if (eq != absl::string_view::npos) {
        joined = flag.substr(eq + 1);
        flag = flag.substr(0, eq);
        has_joined = true;
      }
    }
    const bool is_help = flag == "-h" || flag == "--help";
    const auto it = flags_.find(flag);
    const bool is_switch = is_help || (it != flags_.end() && !it->second.value);
    if (is_switch) {
      if (has_joined) return FlagError(flag, "takes no value");
      if (is_help) {
        help_ = true;
        return absl::OkStatus();
      }
      absl::Status s = it->second.on(flag);
      if (!s.ok()) return s;
      continue;
    }
    if (!has_joined && i + 1 >= argc) {
      return FlagError(flag, "needs a value (or unknown flag)");
    }
    if (it == flags_.end()) return FlagError(flag, "unknown flag");
    const absl::string_view value = has_joined ? joined : argv[++i];
    absl::Status s = it->second.value(flag, value);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

int ReportBadFlags(absl::string_view tool, const absl::Status& error) {
  std::fprintf(stderr, "%s: %s\n(try --help)\n", std::string(tool).c_str(),
               std::string(error.message()).c_str());
  return kExitBadFlags;
}

std::string JoinArgs(int argc, char** argv, int first) {
  std::string out;
  for (int i = first; i < argc; ++i) {
    absl::StrAppend(&out, i > first ? " " : "", argv[i]);
  }
  return out;
}

}  // namespace braid::tools
