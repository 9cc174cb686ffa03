// Random numbers for the random operators (RandomNormal, Bernoulli, ...): a
// process-wide seed, as onnxruntime's `set_seed`, and a counter-based stream
// (Philox4x32-10) whose numbers depend only on (seed, position), so a tensor
// filled in parallel chunks is the same whatever the thread count.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace onyx {

// Makes random kernels created afterwards (at session creation) without a
// `seed` attribute reproducible, like onnxruntime's set_seed: each such
// kernel's stream follows from (seed, its node's output name). So "SetGlobalSeed(7);
// create a session; run" gives the same numbers every time, all sessions of a
// model created after one call agree (whatever their order or thread), and
// the random nodes of one graph still get distinct streams. Thread-safe.
void SetGlobalSeed(int64_t seed);

// Back to nondeterministic kernel seeds, as at process start (for tests).
void ResetGlobalSeed();

// The base seed for a kernel without a `seed` attribute: the global seed when
// one was set, else a nondeterministic one (std::random_device mixed with a
// counter), new on each call. Thread-safe.
int64_t NextKernelSeed();

// The seed of one node's stream: `base` (from NextKernelSeed) combined with
// `node_key`, the node's identity in its graph (its output name), so nodes of
// one graph draw different numbers under one global seed. Platform-stable.
int64_t NodeSeed(int64_t base, const std::string& node_key);

// The seed of a kernel whose node has a `seed` float attribute: a function of
// the attribute's value alone (distinct floats give distinct seeds).
int64_t SeedFromAttribute(float seed);

// The Philox4x32-10 bijection: `out` from a 128-bit counter and 64-bit key.
void Philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

// One generator per kernel instance. Each call to Reserve hands out a fresh,
// never-reused range of the stream; the numbers in it are a pure function of
// (seed, position), so filling may be split across threads freely. Reserve is
// lock-free and safe to call from concurrent Compute calls.
class RandomStream {
 public:
  explicit RandomStream(int64_t seed);

  // Reserves `words` 64-bit random words and returns the first block of the
  // range; word j of the range is Word(first_block, j). Ranges start on a
  // block (two words) so pairs of words (Box-Muller) never straddle calls.
  uint64_t Reserve(uint64_t words);

  // Block `b` of the stream: two 64-bit words.
  void Block(uint64_t b, uint64_t out[2]) const;
  uint64_t Word(uint64_t first_block, uint64_t j) const {
    uint64_t w[2];
    Block(first_block + j / 2, w);
    return w[j % 2];
  }

 private:
  uint32_t key_[2];
  std::atomic<uint64_t> next_block_{0};
};

// A double in [0, 1) from the top 53 bits of a random word.
inline double UnitDouble(uint64_t w) { return static_cast<double>(w >> 11) * (1.0 / 9007199254740992.0); }

// Two independent standard normal values from two random words (Box-Muller),
// in double precision.
void StandardNormalPair(uint64_t w0, uint64_t w1, double* z0, double* z1);

}  // namespace onyx
