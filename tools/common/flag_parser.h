// A small command-line parser shared by the tools (braid-perf, braid-sim).
// Each flag is registered once with its type and range; Parse() walks argv in
// order and runs each flag's handler as it meets it, so a later flag sees
// what an earlier one set. Every error is an InvalidArgument status whose
// message names the flag and what it accepts:
//   "--spines: expected an integer in 1..64, got '0'"
//   "--cc: expected swift or none"
//   "--json: takes no value"
//   "--hots: unknown flag"
// A value is given as "--flag value" or "--flag=value" (split at the first
// '='; only flags starting with "--" take the joined form). A flag without a
// value given one ("--json=1") is an error. "-h" and "--help" stop parsing.
#ifndef BRAID_TOOLS_COMMON_FLAG_PARSER_H_
#define BRAID_TOOLS_COMMON_FLAG_PARSER_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace braid::tools {

// Exit code of a tool given bad flags.
inline constexpr int kExitBadFlags = 2;

// InvalidArgument "FLAG: WHY", the one shape of every flag error.
absl::Status FlagError(absl::string_view flag, absl::string_view why);

// Parses `value` as an integer in [lo, hi] into *out; otherwise
// "FLAG: expected an integer in LO..HI, got 'VALUE'" and *out is unchanged.
template <typename T>
absl::Status ParseIntFlag(absl::string_view flag, absl::string_view value,
                          std::type_identity_t<T> lo,
                          std::type_identity_t<T> hi, T* out) {
  static_assert(std::is_integral_v<T>);
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  Wide x = 0;
  if (!absl::SimpleAtoi(value, &x) || x < static_cast<Wide>(lo) ||
      x > static_cast<Wide>(hi)) {
    return FlagError(
        flag, absl::StrCat("expected an integer in ", static_cast<Wide>(lo),
                           "..", static_cast<Wide>(hi), ", got '", value, "'"));
  }
  *out = static_cast<T>(x);
  return absl::OkStatus();
}

// A range of real numbers; each end closed unless marked open.
struct RealRange {
  double lo = 0;
  double hi = 0;
  bool lo_open = false;
  bool hi_open = false;
};

// Parses `value` as a finite number within `range` into *out; otherwise
// "FLAG: expected a number in LO..HI, got 'VALUE'" (a closed range) or
// "... in [LO, HI), got ..." (a range with an open end).
absl::Status ParseRealFlag(absl::string_view flag, absl::string_view value,
                           const RealRange& range, double* out);

// "a", "a or b", "a, b or c": the accepted values of a flag, for messages.
std::string ChoiceList(const std::vector<std::string>& names);

class FlagParser {
 public:
  // Runs when a value flag is given; returns the flag's error, if any (as is:
  // use FlagError to name the flag).
  using ValueHandler =
      std::function<absl::Status(absl::string_view flag, absl::string_view)>;
  // Runs when a flag without a value is given.
  using SwitchHandler = std::function<absl::Status(absl::string_view flag)>;
  using Names = std::initializer_list<const char*>;

  // A flag without a value, under each of `names` (aliases).
  void Switch(Names names, SwitchHandler on);
  // A flag without a value that sets *out = value.
  void Switch(Names names, bool* out, bool value = true);
  // A flag with a value of the caller's own syntax.
  void Value(Names names, ValueHandler on);
  // An integer flag in [lo, hi] (ParseIntFlag).
  template <typename T>
  void Int(Names names, std::type_identity_t<T> lo, std::type_identity_t<T> hi,
           T* out) {
    Value(names, [=](absl::string_view flag, absl::string_view v) {
      return ParseIntFlag<T>(flag, v, lo, hi, out);
    });
  }
  // A real-number flag within `range` (ParseRealFlag).
  void Real(Names names, RealRange range, double* out);
  // A flag taking one of the listed words: sets *out to the word's value, or
  // fails with "FLAG: expected a, b or c".
  template <typename T>
  void Choice(Names names, std::vector<std::pair<std::string, T>> choices,
              T* out) {
    Value(names, [choices = std::move(choices), out](absl::string_view flag,
                                                     absl::string_view v) {
      std::vector<std::string> words;
      for (const auto& [word, value] : choices) {
        if (v == word) {
          *out = value;
          return absl::OkStatus();
        }
        words.push_back(word);
      }
      return FlagError(flag, absl::StrCat("expected ", ChoiceList(words)));
    });
  }

  // Parses argv[1..argc) in order, running each flag's handler; stops at the
  // first error and returns it. An unknown flag is "FLAG: unknown flag", or
  // "FLAG: needs a value (or unknown flag)" when it ends argv. After "-h" or
  // "--help" the rest is ignored and help() is true.
  absl::Status Parse(int argc, char** argv);
  // Whether Parse() met -h or --help.
  bool help() const { return help_; }

 private:
  struct Flag {
    ValueHandler value;  // null for a switch
    SwitchHandler on;
  };
  void Add(Names names, Flag flag);

  std::map<std::string, Flag, std::less<>> flags_;
  bool help_ = false;
};

// Prints "TOOL: MESSAGE" and "(try --help)" on stderr for a flag error and
// returns kExitBadFlags, the tool's exit code.
int ReportBadFlags(absl::string_view tool, const absl::Status& error);

// Arguments argv[first..argc) joined by single spaces, as echoed in reports.
std::string JoinArgs(int argc, char** argv, int first);

}  // namespace braid::tools

#endif  // BRAID_TOOLS_COMMON_FLAG_PARSER_H_
