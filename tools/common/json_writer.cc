#include "tools/common/json_writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace braid::tools {
namespace {

double Reparsed(const char* format, int precision, double v) {
  if (!std::isfinite(v)) return v;
  char buf[400];
  std::snprintf(buf, sizeof buf, format, precision, v);
  return std::strtod(buf, nullptr);
}

}  // namespace

double Fixed(double v, int decimals) { return Reparsed("%.*f", decimals, v); }

double Significant(double v) { return Reparsed("%.*g", 6, v); }

std::string JsonLine(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

Json ParseJson(const std::string& text) {
  return Json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace braid::tools
