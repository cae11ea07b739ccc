// The block kernels: the same raw masks from AVX2, SSE2 or a loop over the bytes.
#include "load/json_blocks.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TORCH2PPROF_AVX2 1
#endif

namespace torch2pprof {
namespace {

void ClassifyBytes(const char* p, size_t n, RawMasks* out) {
  for (size_t k = 0; k < n; ++k, p += 64) {
    RawMasks m{0, 0, 0, 0};
    for (int i = 0; i < 64; ++i) {
      const char c = p[i];
      const uint64_t bit = uint64_t{1} << i;
      if (c == '"') m.quote |= bit;
      if (c == '\\') m.backslash |= bit;
      if (c == '{' || c == '[') m.open |= bit;
      if (c == '}' || c == ']') m.close |= bit;
    }
    out[k] = m;
  }
}

#ifdef __SSE2__
void ClassifySse2(const char* p, size_t n, RawMasks* out) {
  for (size_t k = 0; k < n; ++k, p += 64) {
    RawMasks m{0, 0, 0, 0};
    for (int q = 0; q < 4; ++q) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * q));
      // '{' 0x7b and '[' 0x5b differ in bit 0x20 only, as do '}' and ']'.
      const __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
      auto bits = [&](__m128i eq) {
        return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(eq))) << (16 * q);
      };
      m.quote |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
      m.backslash |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
      m.open |= bits(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')));
      m.close |= bits(_mm_cmpeq_epi8(folded, _mm_set1_epi8('}')));
    }
    out[k] = m;
  }
}
#endif

#ifdef TORCH2PPROF_AVX2
// Compiled for AVX2 whatever the build targets; only called where the CPU has it. No
// lambdas inside: they would not inherit the target.
__attribute__((target("avx2"))) void ClassifyAvx2(const char* p, size_t n, RawMasks* out) {
  const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\');
  const __m256i open = _mm256_set1_epi8('{'), close = _mm256_set1_epi8('}'), fold = _mm256_set1_epi8(0x20);
#define T2P_MASK(lo, hi, c)                                                                       \
  (static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, c)))) | \
   static_cast<uint64_t>(static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, c)))) << 32)
  for (size_t k = 0; k < n; ++k, p += 64) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    const __m256i folded_lo = _mm256_or_si256(lo, fold), folded_hi = _mm256_or_si256(hi, fold);
    out[k] = RawMasks{T2P_MASK(lo, hi, quote), T2P_MASK(lo, hi, backslash), T2P_MASK(folded_lo, folded_hi, open),
                      T2P_MASK(folded_lo, folded_hi, close)};
  }
#undef T2P_MASK
}
#endif

}  // namespace

bool Supported(BlockKernel kernel) {
  switch (kernel) {
    case BlockKernel::kBytes:
      return true;
    case BlockKernel::kSse2:
#ifdef __SSE2__
      return true;
#else
      return false;
#endif
    case BlockKernel::kAvx2:
#ifdef TORCH2PPROF_AVX2
      return __builtin_cpu_supports("avx2");
#else
      return false;
#endif
  }
  return false;
}

BlockKernel FastestBlockKernel() {
  if (Supported(BlockKernel::kAvx2)) return BlockKernel::kAvx2;
  return Supported(BlockKernel::kSse2) ? BlockKernel::kSse2 : BlockKernel::kBytes;
}

void ClassifyBlocks(BlockKernel kernel, const char* p, size_t n, RawMasks* out) {
#ifdef TORCH2PPROF_AVX2
  if (kernel == BlockKernel::kAvx2) return ClassifyAvx2(p, n, out);
#endif
#ifdef __SSE2__
  if (kernel == BlockKernel::kSse2) return ClassifySse2(p, n, out);
#endif
  ClassifyBytes(p, n, out);
}

}  // namespace torch2pprof
