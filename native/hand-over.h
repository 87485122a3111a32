// Received bodies handed to JavaScript: ArrayBuffers over ReceiveMemory's memory (receive-memory.h)
// that give it back once V8 frees them; for the addons' N-API side (shm.cc, ucx.cc).
#pragma once

#include <napi.h>
#include <v8.h>

#include <cstdlib>
#include <string>

#include "receive-memory.h"

namespace ccjs {

// V8's limit on an ArrayBuffer on 64-bit hosts (Number.MAX_SAFE_INTEGER); it has no public name.
constexpr size_t MAX_ARRAY_BUFFER_BYTES = (size_t{1} << 53) - 1;

// An ArrayBuffer over `data` (from ReceiveMemory::Take(length)) that gives it back when V8 frees
// it. V8's own, not Node-API's: Node-API makes it through a Buffer, whose finalizer runs on a
// later turn of the event loop (SetImmediate), which a member spinning through a ping-pong rarely
// gives, so every receive took fresh memory meanwhile; and a Buffer holds at most
// node::Buffer::kMaxLength bytes. V8 calls the deleter on the thread that frees the memory, which
// the shared pool allows.
inline Napi::ArrayBuffer HandOver(Napi::Env env, void* data, size_t length) {
  if (length > MAX_ARRAY_BUFFER_BYTES) {
    ReceiveMemory::Shared().Give(data, length);
    throw Napi::RangeError::New(env, "no ArrayBuffer holds " + std::to_string(length) + " bytes");
  }
  std::unique_ptr<v8::BackingStore> store = v8::ArrayBuffer::NewBackingStore(
      data, length, [](void* freed, size_t bytes, void*) { ReceiveMemory::Shared().Give(freed, bytes); }, nullptr);
  v8::Local<v8::ArrayBuffer> buffer = v8::ArrayBuffer::New(v8::Isolate::GetCurrent(), std::move(store));
  // Node-API values are V8 locals underneath (js_native_api_v8.h): a V8 local crosses back as one.
  return Napi::ArrayBuffer(env, reinterpret_cast<napi_value>(*buffer));
}

// Memory for a received body of `length` bytes, handed over as an ArrayBuffer; RangeError when
// there is not that much.
inline Napi::ArrayBuffer ReceiveBuffer(Napi::Env env, size_t length) {
  void* data = ReceiveMemory::Shared().Take(length);
  if (data == nullptr) throw Napi::RangeError::New(env, "cannot allocate " + std::to_string(length) + " bytes for a received body");
  return HandOver(env, data, length);
}

}  // namespace ccjs
