// Memory for large received messages, shared by the addons (ucx.cc, shm.cc).
//
// A large message is handed to JavaScript as an ArrayBuffer over memory of ours. Once JavaScript
// drops it (V8 finalizes the ArrayBuffer), the memory comes back here, up to IDLE_RECEIVE_BYTES, so
// that later large messages land in pages that are already mapped instead of fresh ones that the
// kernel faults in and zeroes, which costs about as much as copying the message. Kept per thread:
// V8 finalizes an ArrayBuffer on the thread that made it.
#pragma once

#include <napi.h>
#include <node_buffer.h>
#include <v8.h>

#include <cstdlib>
#include <string>
#include <map>
#include <vector>

namespace ccjs {

// V8's limit on an ArrayBuffer on 64-bit hosts (Number.MAX_SAFE_INTEGER); it has no public name.
constexpr size_t MAX_ARRAY_BUFFER_BYTES = (size_t{1} << 53) - 1;
// Messages up to this size are cheap to allocate: they are not pooled.
constexpr size_t POOLED_BYTES = 64 * 1024;
// Idle memory kept for the next large messages, per thread.
constexpr size_t IDLE_RECEIVE_BYTES = 64 * 1024 * 1024;

class ReceiveMemory {
 public:
  ~ReceiveMemory() {
    for (auto& [size, buffers] : idle_) {
      for (void* data : buffers) free(data);
    }
    idle_.clear();
    gone_ = true;
  }

  static ReceiveMemory& OfThisThread() {
    static thread_local ReceiveMemory memory;
    return memory;
  }

  // Memory for `length` bytes (at least 1), to be given back with the same length; nullptr when
  // there is none.
  void* Take(size_t length) {
    size_t size = SizeClass(length);
    // Memory too large to be kept idle is never pooled: its exact length, not its size class.
    if (length <= POOLED_BYTES || gone_ || size > IDLE_RECEIVE_BYTES) return malloc(length > 0 ? length : 1);
    std::vector<void*>& idle = idle_[size];
    if (idle.empty()) return malloc(size);
    void* data = idle.back();
    idle.pop_back();
    idle_bytes_ -= size;
    return data;
  }

  void Give(void* data, size_t length) {
    size_t size = SizeClass(length);
    if (length <= POOLED_BYTES || gone_ || idle_bytes_ + size > IDLE_RECEIVE_BYTES) {
      free(data);
      return;
    }
    idle_[size].push_back(data);
    idle_bytes_ += size;
  }

 private:
  // Powers of two, so that messages of about one size share memory.
  static size_t SizeClass(size_t length) {
    size_t size = POOLED_BYTES;
    while (size < length) size *= 2;
    return size;
  }

  std::map<size_t, std::vector<void*>> idle_;
  size_t idle_bytes_ = 0;
  // Set when the thread ends: a finalizer that runs after that frees its memory instead.
  static inline thread_local bool gone_ = false;
};

// An ArrayBuffer over `data` (from ReceiveMemory::Take(length)) that gives it back once finalized.
// Node-API makes such an ArrayBuffer through a Buffer, which holds at most node::Buffer::kMaxLength
// bytes (4 GiB on Node 20); past that it fails after running the finalizer, which freed the
// memory twice. A longer one is V8's own over `data`: V8 may drop it on another thread, so it is
// freed there, never pooled (far above IDLE_RECEIVE_BYTES anyway).
inline Napi::ArrayBuffer HandOver(Napi::Env env, void* data, size_t length) {
  if (length <= node::Buffer::kMaxLength) {
    return Napi::ArrayBuffer::New(
        env, data, length,
        [](Napi::Env, void* finalized, size_t* bytes) {
          ReceiveMemory::OfThisThread().Give(finalized, *bytes);
          delete bytes;
        },
        new size_t(length));
  }
  if (length > MAX_ARRAY_BUFFER_BYTES) {
    free(data);
    throw Napi::RangeError::New(env, "no ArrayBuffer holds " + std::to_string(length) + " bytes");
  }
  std::unique_ptr<v8::BackingStore> store = v8::ArrayBuffer::NewBackingStore(data, length, [](void* freed, size_t, void*) { free(freed); }, nullptr);
  v8::Local<v8::ArrayBuffer> buffer = v8::ArrayBuffer::New(v8::Isolate::GetCurrent(), std::move(store));
  // Node-API values are V8 locals underneath (js_native_api_v8.h): a V8 local crosses back as one.
  return Napi::ArrayBuffer(env, reinterpret_cast<napi_value>(*buffer));
}

// Memory for a received body of `length` bytes, handed over as an ArrayBuffer; RangeError when
// there is not that much.
inline Napi::ArrayBuffer ReceiveBuffer(Napi::Env env, size_t length) {
  void* data = ReceiveMemory::OfThisThread().Take(length);
  if (data == nullptr) throw Napi::RangeError::New(env, "cannot allocate " + std::to_string(length) + " bytes for a received body");
  return HandOver(env, data, length);
}

}  // namespace ccjs
