// CRC32C (Castagnoli) of bytes, for the network devices' opt-in frame checksum
// (transport/crc32c.ts). The CPU's crc32 instruction where it has one (SSE4.2 on x86-64, the CRC
// extension on AArch64), else slicing-by-8 tables: an order of magnitude faster than JavaScript's
// tables, which remain the fallback where this addon is not built.
#include <napi.h>

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#endif

namespace {

constexpr uint32_t POLYNOMIAL = 0x82f63b78;

struct Tables {
  uint32_t entries[8][256];

  Tables() {
    for (uint32_t byte = 0; byte < 256; byte++) {
      uint32_t crc = byte;
      for (int bit = 0; bit < 8; bit++) crc = (crc & 1) ? (crc >> 1) ^ POLYNOMIAL : crc >> 1;
      entries[0][byte] = crc;
    }
    for (int table = 1; table < 8; table++) {
      for (uint32_t byte = 0; byte < 256; byte++) {
        uint32_t previous = entries[table - 1][byte];
        entries[table][byte] = (previous >> 8) ^ entries[0][previous & 0xff];
      }
    }
  }
};

// `state` is the inverted CRC, as the instruction keeps it.
uint32_t Portable(uint32_t state, const uint8_t* bytes, size_t length) {
  static const Tables tables;
  const auto& t = tables.entries;
  while (length >= 8) {
    uint32_t low;
    std::memcpy(&low, bytes, 4);
    low ^= state;
    state = t[7][low & 0xff] ^ t[6][(low >> 8) & 0xff] ^ t[5][(low >> 16) & 0xff] ^ t[4][low >> 24] ^
            t[3][bytes[4]] ^ t[2][bytes[5]] ^ t[1][bytes[6]] ^ t[0][bytes[7]];
    bytes += 8;
    length -= 8;
  }
  while (length-- > 0) state = t[0][(state ^ *bytes++) & 0xff] ^ (state >> 8);
  return state;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t Hardware(uint32_t state, const uint8_t* bytes, size_t length) {
  uint64_t wide = state;
  while (length >= 8) {
    uint64_t word;
    std::memcpy(&word, bytes, 8);
    wide = _mm_crc32_u64(wide, word);
    bytes += 8;
    length -= 8;
  }
  uint32_t narrow = static_cast<uint32_t>(wide);
  while (length-- > 0) narrow = _mm_crc32_u8(narrow, *bytes++);
  return narrow;
}

bool HasHardware() { return __builtin_cpu_supports("sse4.2"); }
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
uint32_t Hardware(uint32_t state, const uint8_t* bytes, size_t length) {
  while (length >= 8) {
    uint64_t word;
    std::memcpy(&word, bytes, 8);
    state = __crc32cd(state, word);
    bytes += 8;
    length -= 8;
  }
  while (length-- > 0) state = __crc32cb(state, *bytes++);
  return state;
}

bool HasHardware() { return true; }
#else
uint32_t Hardware(uint32_t state, const uint8_t* bytes, size_t length) { return Portable(state, bytes, length); }

bool HasHardware() { return false; }
#endif

const bool hardware = HasHardware();

// crc32c(bytes: ArrayBufferView, crc: number): number — the CRC of `bytes` continuing `crc` (the CRC
// of the bytes before them, 0 to start).
Napi::Value Crc32c(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsTypedArray() || !info[1].IsNumber()) {
    throw Napi::TypeError::New(env, "crc32c(bytes: Uint8Array, crc: number)");
  }
  Napi::TypedArray view = info[0].As<Napi::TypedArray>();
  const uint8_t* bytes = static_cast<const uint8_t*>(view.ArrayBuffer().Data()) + view.ByteOffset();
  uint32_t state = ~info[1].As<Napi::Number>().Uint32Value();
  size_t length = view.ByteLength();
  state = hardware ? Hardware(state, bytes, length) : Portable(state, bytes, length);
  return Napi::Number::New(env, ~state);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("crc32c", Napi::Function::New(env, Crc32c));
  exports.Set("hardware", Napi::Boolean::New(env, hardware));
  return exports;
}

}  // namespace

NODE_API_MODULE(ccjs_checksum, Init)
