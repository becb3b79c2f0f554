// JSON output of the tools, through one writer (nlohmann-json). Objects are
// ordered_json, so keys print in the order they are set. Numbers print in
// their shortest exact form: a figure the tools round to a few decimals is
// stored rounded (Fixed), so it prints no more digits than the table shows.
#ifndef BRAID_TOOLS_COMMON_JSON_WRITER_H_
#define BRAID_TOOLS_COMMON_JSON_WRITER_H_

#include <string>

#include "nlohmann/json.hpp"

namespace braid::tools {

using Json = nlohmann::ordered_json;

// `v` rounded as printf("%.*f", decimals, v) rounds it (e.g. Fixed(1.23456,
// 3) == 1.235). Not finite values are returned as they are.
double Fixed(double v, int decimals);
// `v` rounded to 6 significant digits, as printf("%g") rounds it.
double Significant(double v);

// The compact text of `j` and a newline. Strings that are not valid UTF-8
// have the bad bytes replaced (U+FFFD); never throws.
std::string JsonLine(const Json& j);

// Parses `text` (an object from another formatter); a discarded value if it
// is not JSON. Never throws.
Json ParseJson(const std::string& text);

}  // namespace braid::tools

#endif  // BRAID_TOOLS_COMMON_JSON_WRITER_H_
