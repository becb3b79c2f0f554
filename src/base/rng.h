// A small, fast, seeded random generator (xoshiro256**-style, written for
// braid). Protocol objects take one of these from their owner; nothing in the
// core calls a global RNG, so every run is reproducible from its seed.
#ifndef BRAID_BASE_RNG_H_
#define BRAID_BASE_RNG_H_

#include <cstdint>

namespace braid {

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) { Seed(seed); }

  void Seed(uint64_t seed) {
    // Expand the seed with splitmix64 so nearby seeds give unrelated streams.
    for (auto& w : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      w = z ^ (z >> 31);
    }
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n). n must be > 0.
  uint64_t Uniform(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >>
                                 64);
  }
  // Uniform in [0, 1).
  double UniformDouble() { return (Next() >> 11) * (1.0 / 9007199254740992.0); }
  // True with probability p.
  bool Bernoulli(double p) { return UniformDouble() < p; }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace braid

#endif  // BRAID_BASE_RNG_H_
