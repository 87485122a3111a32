// Memory for large received messages, shared by the addons (ucx.cc, shm.cc, and ucx-worker.cc,
// which knows nothing of Node-API; hand-over.h makes JavaScript's ArrayBuffers of it).
//
// A large message is handed to JavaScript as an ArrayBuffer over memory of ours. Once JavaScript
// drops it (V8 finalizes the ArrayBuffer), the memory comes back here, up to IDLE_RECEIVE_BYTES, so
// that later large messages land in pages that are already mapped instead of fresh ones that the
// kernel faults in and zeroes, which costs about as much as copying the message. Kept per thread:
// V8 finalizes an ArrayBuffer on the thread that made it.
#pragma once

#include <cstdlib>
#include <map>
#include <vector>

namespace ccjs {

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

}  // namespace ccjs
