// The built-in reductions' typed-array loops (reduction/reductions.ts), compiled ahead of time:
// V8's loop takes about 1.9 ns per element here, this one about 0.3 for SUM of doubles (the
// compiler vectorizes it), and allReduce of large arrays spends much of its time in them.
//
//   combine(operator, a, b, result)   result[i] = a[i] OP b[i] for every i; the three are typed
//                                     arrays of one type and length, and result may be a or b
//
// operator: 0 SUM, 1 PROD, 2 MIN, 3 MAX, 4 LAND, 5 LOR, 6 BAND, 7 BOR, 8 BXOR. Every result is the
// one JavaScript's expression stores (reductions.ts): integers wrap as their type does (products
// of small types too), Uint8ClampedArray clamps, MIN and MAX of floats follow Math.min/max (NaN
// wins, -0 is below +0), LAND and LOR store 0 or 1, and a float32 sum or product rounded once is
// the double's rounded to float (53 >= 2 * 24 + 2 bits).
#include <napi.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace {

enum Operator { SUM, PROD, MIN, MAX, LAND, LOR, BAND, BOR, BXOR, OPERATORS };

template <typename T>
bool Truthy(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != 0 && !std::isnan(x);
  return x != 0;
}

template <typename T>
T Minimum(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
    if (x == y) return std::signbit(x) ? x : y;
  }
  return x < y ? x : y;
}

template <typename T>
T Maximum(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
    if (x == y) return std::signbit(x) ? y : x;
  }
  return x > y ? x : y;
}

// Integer arithmetic in unsigned words at least 32 bits wide: wraps as the typed array's store
// does, and never overflows a signed int (uint16_t operands would be promoted to int).
template <typename T>
using Wide = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;

// One element of the result, for elements of type T; `clamped` is Uint8ClampedArray's arithmetic.
template <Operator op, typename T, bool clamped = false>
struct Kernel {
  static T Apply(T x, T y) {
    if constexpr (clamped && (op == SUM || op == PROD)) {
      uint32_t exact = op == SUM ? uint32_t{x} + y : uint32_t{x} * y;
      return exact > 255 ? 255 : static_cast<T>(exact);
    } else if constexpr ((op == SUM || op == PROD) && std::is_floating_point_v<T>) {
      return op == SUM ? x + y : x * y;
    } else if constexpr (op == SUM || op == PROD) {
      Wide<T> wx = static_cast<Wide<T>>(x), wy = static_cast<Wide<T>>(y);
      return static_cast<T>(op == SUM ? wx + wy : wx * wy);
    } else if constexpr (op == MIN) {
      return Minimum(x, y);
    } else if constexpr (op == MAX) {
      return Maximum(x, y);
    } else if constexpr (op == LAND) {
      return Truthy(x) && Truthy(y) ? 1 : 0;
    } else if constexpr (op == LOR) {
      return Truthy(x) || Truthy(y) ? 1 : 0;
    } else if constexpr (op == BAND) {
      return x & y;
    } else if constexpr (op == BOR) {
      return x | y;
    } else {
      return x ^ y;
    }
  }

  // Three shapes, so that the compiler may vectorize each without checking for overlap: a result
  // of its own, or the result in place of one operand (or of both).
  static void Run(T* a, T* b, T* result, size_t length) {
    if (result == a && result == b) {
      Into(result, length);
    } else if (result == a) {
      IntoLeft(a, b, length);
    } else if (result == b) {
      IntoRight(a, b, length);
    } else {
      Apart(a, b, result, length);
    }
  }

  static void Apart(const T* __restrict a, const T* __restrict b, T* __restrict result, size_t length) {
    for (size_t i = 0; i < length; i += 1) result[i] = Apply(a[i], b[i]);
  }

  static void IntoLeft(T* __restrict a, const T* __restrict b, size_t length) {
    for (size_t i = 0; i < length; i += 1) a[i] = Apply(a[i], b[i]);
  }

  static void IntoRight(const T* __restrict a, T* __restrict b, size_t length) {
    for (size_t i = 0; i < length; i += 1) b[i] = Apply(a[i], b[i]);
  }

  static void Into(T* __restrict a, size_t length) {
    for (size_t i = 0; i < length; i += 1) a[i] = Apply(a[i], a[i]);
  }
};

using Loop = void (*)(void*, void*, void*, size_t);

template <Operator op, typename T, bool clamped = false>
void RunAs(void* a, void* b, void* result, size_t length) {
  Kernel<op, T, clamped>::Run(static_cast<T*>(a), static_cast<T*>(b), static_cast<T*>(result), length);
}

// The loop of `op` for elements of type T, or nullptr where JavaScript has none (bitwise on floats).
template <typename T, bool clamped = false>
Loop LoopOf(Operator op) {
  switch (op) {
    case SUM: return RunAs<SUM, T, clamped>;
    case PROD: return RunAs<PROD, T, clamped>;
    case MIN: return RunAs<MIN, T, clamped>;
    case MAX: return RunAs<MAX, T, clamped>;
    case LAND: return RunAs<LAND, T, clamped>;
    case LOR: return RunAs<LOR, T, clamped>;
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case BAND: return RunAs<BAND, T, clamped>;
      case BOR: return RunAs<BOR, T, clamped>;
      case BXOR: return RunAs<BXOR, T, clamped>;
      default: break;
    }
  }
  return nullptr;
}

Loop LoopFor(Operator op, napi_typedarray_type type) {
  switch (type) {
    case napi_int8_array: return LoopOf<int8_t>(op);
    case napi_uint8_array: return LoopOf<uint8_t>(op);
    case napi_uint8_clamped_array: return LoopOf<uint8_t, true>(op);
    case napi_int16_array: return LoopOf<int16_t>(op);
    case napi_uint16_array: return LoopOf<uint16_t>(op);
    case napi_int32_array: return LoopOf<int32_t>(op);
    case napi_uint32_array: return LoopOf<uint32_t>(op);
    case napi_float32_array: return LoopOf<float>(op);
    case napi_float64_array: return LoopOf<double>(op);
    case napi_bigint64_array: return LoopOf<int64_t>(op);
    case napi_biguint64_array: return LoopOf<uint64_t>(op);
    default: return nullptr;
  }
}

struct Elements {
  napi_typedarray_type type;
  size_t length;
  void* data;
};

// One Node-API call per operand (the C++ wrappers' ArrayBuffer() costs more than a short loop).
bool ElementsOf(napi_env env, napi_value value, Elements* elements) {
  bool typed = false;
  if (napi_is_typedarray(env, value, &typed) != napi_ok || !typed) return false;
  return napi_get_typedarray_info(env, value, &elements->type, &elements->length, &elements->data, nullptr, nullptr) == napi_ok;
}

Napi::Value Combine(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint32_t op = info[0].As<Napi::Number>().Uint32Value();
  Elements a, b, result;
  if (op >= OPERATORS || !ElementsOf(env, info[1], &a) || !ElementsOf(env, info[2], &b) || !ElementsOf(env, info[3], &result)) {
    throw Napi::TypeError::New(env, "combine(operator, a, b, result): an operator code and three typed arrays");
  }
  if (b.type != a.type || result.type != a.type || b.length != a.length || result.length != a.length) {
    throw Napi::TypeError::New(env, "combine: the three typed arrays differ in type or length");
  }
  Loop loop = LoopFor(static_cast<Operator>(op), a.type);
  if (loop == nullptr) throw Napi::TypeError::New(env, "combine: operator " + std::to_string(op) + " does not apply to these elements");
  // A detached buffer has no data (and length 0).
  if (a.length > 0 && a.data != nullptr && b.data != nullptr && result.data != nullptr) loop(a.data, b.data, result.data, a.length);
  return env.Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("combine", Napi::Function::New(env, Combine));
  return exports;
}

}  // namespace

NODE_API_MODULE(ccjs_reduce, Init)
