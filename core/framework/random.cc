#include "core/framework/random.h"

#include <cmath>
#include <cstring>
#include <mutex>
#include <random>

namespace onyx {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// splitmix64's finaliser: neighbouring inputs (seed 7 and 8) give unrelated
// outputs.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct GlobalSeed {
  std::mutex mu;
  bool set = false;
  uint64_t seed = 0;
  uint64_t counter = 0;
};

GlobalSeed& Global() {
  static GlobalSeed* g = new GlobalSeed();  // never destroyed: kernels may be created during exit
  return *g;
}

}  // namespace

void SetGlobalSeed(int64_t seed) {
  GlobalSeed& g = Global();
  std::lock_guard<std::mutex> lock(g.mu);
  g.set = true;
  g.seed = static_cast<uint64_t>(seed);
}

void ResetGlobalSeed() {
  GlobalSeed& g = Global();
  std::lock_guard<std::mutex> lock(g.mu);
  g.set = false;
  g.seed = 0;
}

int64_t NextKernelSeed() {
  GlobalSeed& g = Global();
  std::lock_guard<std::mutex> lock(g.mu);
  if (g.set) return static_cast<int64_t>(g.seed);
  // Nondeterministic: the device's entropy, and a counter in case the device
  // is a fixed-sequence fallback on some platform.
  uint64_t k = ++g.counter;
  std::random_device rd;
  uint64_t r = (static_cast<uint64_t>(rd()) << 32) ^ static_cast<uint64_t>(rd());
  return static_cast<int64_t>(Mix(r + kGolden * k));
}

int64_t NodeSeed(int64_t base, const std::string& node_key) {
  // FNV-1a: std::hash differs between standard libraries.
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : node_key) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return static_cast<int64_t>(Mix(Mix(static_cast<uint64_t>(base)) + kGolden * Mix(h)));
}

int64_t SeedFromAttribute(float seed) {
  if (seed == 0.0f) seed = 0.0f;  // -0.0 and 0.0 are the same seed
  uint32_t bits;
  std::memcpy(&bits, &seed, sizeof(bits));
  // Salted, so a seed attribute and a global seed of the same value do not
  // share a stream.
  return static_cast<int64_t>(Mix(static_cast<uint64_t>(bits) ^ 0x5EEDA77B5EEDA77Bull));
}

RandomStream::RandomStream(int64_t seed) {
  uint64_t s = static_cast<uint64_t>(seed);
  key_[0] = static_cast<uint32_t>(s);
  key_[1] = static_cast<uint32_t>(s >> 32);
}

uint64_t RandomStream::Reserve(uint64_t words) {
  return next_block_.fetch_add((words + 1) / 2, std::memory_order_relaxed);
}

// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC'11): ten rounds of multiply-xor over a 128-bit counter under a
// 64-bit key.
void Philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * c0;
    uint64_t p1 = static_cast<uint64_t>(kM1) * c2;
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

// The counter is (block, 0): a stream has 2^64 blocks.
void RandomStream::Block(uint64_t b, uint64_t out[2]) const {
  const uint32_t ctr[4] = {static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0};
  uint32_t x[4];
  Philox4x32(ctr, key_, x);
  out[0] = static_cast<uint64_t>(x[0]) | (static_cast<uint64_t>(x[1]) << 32);
  out[1] = static_cast<uint64_t>(x[2]) | (static_cast<uint64_t>(x[3]) << 32);
}

void StandardNormalPair(uint64_t w0, uint64_t w1, double* z0, double* z1) {
  // 1 - u lies in (0, 1], so the log is finite.
  double r = std::sqrt(-2.0 * std::log(1.0 - UnitDouble(w0)));
  double theta = 6.283185307179586476925286766559 * UnitDouble(w1);
  *z0 = r * std::cos(theta);
  *z1 = r * std::sin(theta);
}

}  // namespace onyx
