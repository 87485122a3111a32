// Memory for large received messages, shared by the addons (ucx.cc, shm.cc, and ucx-worker.cc,
// which knows nothing of Node-API; hand-over.h makes JavaScript's ArrayBuffers of it).
//
// A large message is handed to JavaScript as an ArrayBuffer over memory of ours. Once JavaScript
// drops it and V8 frees the ArrayBuffer, the memory comes back here (at most IDLE_RECEIVE_BYTES
// per receiving thread stays idle), so that later large messages land in pages that are already
// mapped instead of fresh ones that the kernel faults in and zeroes, which costs about as much as
// copying the message. One pool for the process, behind a lock: V8 frees an ArrayBuffer's memory
// on whichever thread sweeps it (a background thread too), and a body received by one thread may
// be freed by another.
//
// Pooled blocks are mappings of their own (not malloc's, which would unmap and map them again), in
// powers of two. A fresh one's pages fault in as the copy reaches them, by both ends of a copy
// shared with the sender (single-copy.ts): populated first, on the receiver alone, it kept the
// sender from helping. Nor are they in transparent huge pages: where those must be compacted
// first (defrag=madvise) a fresh 16 MiB block took 1.5 to 38 ms here instead of 6 to 8.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace ccjs {

// Messages up to this size are cheap to allocate: they are not pooled.
constexpr size_t POOLED_BYTES = 64 * 1024;
// Idle memory kept for the next large messages, per thread that receives them: enough for the
// bodies a ping-pong or a collective drops between two of its isolate's collections (which V8
// starts after about 64 MiB of ArrayBuffers), so that in a steady state large receives reuse
// memory. It is memory the thread's dropped bodies held anyway until V8 collected them.
constexpr size_t IDLE_RECEIVE_BYTES = 128 * 1024 * 1024;

// What the pool did, for tests and benchmarks (receiveMemoryStats in shm.cc).
struct ReceiveMemoryStats {
  // Large bodies served from idle memory, and those that needed fresh memory.
  size_t reused = 0;
  size_t fresh = 0;
  size_t idle_bytes = 0;
};

class ReceiveMemory {
 public:
  // Never destroyed: V8 may free a body's memory while the process exits.
  static ReceiveMemory& Shared() {
    static ReceiveMemory* memory = new ReceiveMemory();
    return *memory;
  }

  // Memory for `length` bytes (at least 1), to be given back with the same length; nullptr when
  // there is none.
  void* Take(size_t length) {
    if (!Pooled(length)) return malloc(length > 0 ? length : 1);
    size_t size = SizeClass(length);
    static thread_local Receiver receiver(*this);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<void*>& idle = idle_[size];
      if (!idle.empty()) {
        void* data = idle.back();
        idle.pop_back();
        stats_.idle_bytes -= size;
        stats_.reused += 1;
        return data;
      }
      stats_.fresh += 1;
    }
    void* data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) return nullptr;
    return data;
  }

  // Kept idle if it fits, after the idle blocks of other sizes that must go to make room: the
  // size just received is the likeliest to come next.
  void Give(void* data, size_t length) {
    if (!Pooled(length)) {
      free(data);
      return;
    }
    size_t size = SizeClass(length);
    std::vector<std::pair<void*, size_t>> unmapped;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      size_t most = IdleLimit();
      for (auto other = idle_.begin(); other != idle_.end() && stats_.idle_bytes + size > most; ++other) {
        for (std::vector<void*>& blocks = other->second; other->first != size && !blocks.empty() && stats_.idle_bytes + size > most; blocks.pop_back()) {
          unmapped.emplace_back(blocks.back(), other->first);
          stats_.idle_bytes -= other->first;
        }
      }
      if (stats_.idle_bytes + size <= most) {
        idle_[size].push_back(data);
        stats_.idle_bytes += size;
      } else {
        unmapped.emplace_back(data, size);
      }
    }
    for (auto [block, bytes] : unmapped) munmap(block, bytes);
  }

  ReceiveMemoryStats Stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

 private:
  ReceiveMemory() = default;

  // Counts the threads that took large bodies while they live (a worker thread ends).
  struct Receiver {
    explicit Receiver(ReceiveMemory& memory) : memory(memory) {
      std::lock_guard<std::mutex> lock(memory.mutex_);
      memory.receivers_ += 1;
    }
    ~Receiver() {
      std::lock_guard<std::mutex> lock(memory.mutex_);
      memory.receivers_ -= 1;
    }
    ReceiveMemory& memory;
  };

  // With mutex_ held.
  size_t IdleLimit() const { return IDLE_RECEIVE_BYTES * std::max<size_t>(receivers_, 1); }

  // Pooled: larger than POOLED_BYTES, and of a size class the pool may keep (a longer body has
  // memory of its exact length, from malloc).
  static bool Pooled(size_t length) { return length > POOLED_BYTES && SizeClass(length) <= IDLE_RECEIVE_BYTES; }

  // Powers of two, so that messages of about one size share memory.
  static size_t SizeClass(size_t length) {
    size_t size = POOLED_BYTES;
    while (size < length) size *= 2;
    return size;
  }

  std::mutex mutex_;
  size_t receivers_ = 0;
  std::map<size_t, std::vector<void*>> idle_;
  ReceiveMemoryStats stats_;
};

}  // namespace ccjs
