#include "retransmit/retransmit_types.h"

namespace braid::retransmit {

const char* LossCauseName(LossCause cause) {
  switch (cause) {
    case LossCause::kPathGap:
      return "path_gap";
    case LossCause::kTime:
      return "time";
    case LossCause::kRto:
      return "rto";
    case LossCause::kTailProbe:
      return "tail_probe";
    case LossCause::kNak:
      return "nak";
    case LossCause::kRefused:
      return "refused";
  }
  return "unknown";
}

}  // namespace braid::retransmit
