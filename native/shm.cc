// The shared-memory device's native part (transport/shm): memory that processes of one host share,
// and a doorbell that one process rings and another's event loop hears.
//
//   open(name, bytes, create) -> SharedArrayBuffer   shm_open + mmap, unmapped when collected;
//                                                     bytes 0 when opening: the whole segment
//   unlink(name)                                      shm_unlink: the memory lives on while mapped
//   ring(sab, byteOffset)                             futex wake on the Int32 at that offset
//   new Waiter(sab, byteOffset, callback)             a thread that sleeps on that Int32 while it
//     .arm() / .close()                               holds SLEEPING (1) once armed, then calls
//                                                     back on the JavaScript thread
//   copy(target, source)                              memcpy between byte views (large bodies
//                                                     into and out of the rings)
//   receiveBuffer(length) -> ArrayBuffer              memory for a large received body, given
//                                                     back for the next one once collected
//                                                     (receive-memory.h)
//
// Node-API cannot make a SharedArrayBuffer over external memory yet (experimental in newer Node),
// so open() uses V8's API for that one object, with the headers node-gyp builds against.
#include <napi.h>
#include <v8.h>

#include "receive-memory.h"

#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <fcntl.h>
#include <linux/futex.h>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <thread>
#include <time.h>
#include <unistd.h>

namespace {

constexpr int SLEEPING = 1;

// Node-API values are V8 locals underneath (js_native_api_v8.h); these two cross between them.
v8::Local<v8::Value> ToV8(napi_value value) {
  v8::Local<v8::Value> local;
  static_assert(sizeof(local) == sizeof(value), "napi_value is a V8 local");
  std::memcpy(static_cast<void*>(&local), &value, sizeof(value));
  return local;
}

napi_value FromV8(v8::Local<v8::Value> local) {
  return reinterpret_cast<napi_value>(*local);
}

Napi::Error ErrnoError(Napi::Env env, const std::string& what, int error) {
  Napi::Error failure = Napi::Error::New(env, what + ": " + std::strerror(error));
  failure.Set("code", Napi::String::New(env, error == ENOENT ? "ENOENT" : error == EEXIST ? "EEXIST" : "ESYSCALL"));
  failure.Set("errno", Napi::Number::New(env, error));
  return failure;
}

// The Int32 at byteOffset of a SharedArrayBuffer, checked for bounds and alignment.
int32_t* WordOf(const Napi::CallbackInfo& info, size_t argument) {
  Napi::Env env = info.Env();
  v8::Local<v8::Value> value = ToV8(info[argument]);
  if (!value->IsSharedArrayBuffer()) throw Napi::TypeError::New(env, "expected a SharedArrayBuffer");
  std::shared_ptr<v8::BackingStore> store = value.As<v8::SharedArrayBuffer>()->GetBackingStore();
  int64_t offset = info[argument + 1].As<Napi::Number>().Int64Value();
  if (offset < 0 || offset % 4 != 0 || static_cast<size_t>(offset) + 4 > store->ByteLength()) {
    throw Napi::RangeError::New(env, "byteOffset " + std::to_string(offset) + " is not an aligned Int32 of the buffer");
  }
  return reinterpret_cast<int32_t*>(static_cast<char*>(store->Data()) + offset);
}

long Futex(int32_t* word, int operation, int value, const timespec* timeout) {
  return syscall(SYS_futex, word, operation, value, timeout, nullptr, 0);
}

Napi::Value Open(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::string name = info[0].As<Napi::String>();
  int64_t bytes = info[1].As<Napi::Number>().Int64Value();
  bool create = info[2].As<Napi::Boolean>();
  int fd = shm_open(name.c_str(), create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
  if (fd < 0) throw ErrnoError(env, "shm_open " + name, errno);
  struct stat status;
  if ((create && ftruncate(fd, bytes) != 0) || fstat(fd, &status) != 0) {
    int error = errno;
    close(fd);
    if (create) shm_unlink(name.c_str());
    throw ErrnoError(env, "sizing " + name, error);
  }
  if (!create && bytes == 0) bytes = status.st_size;
  if (bytes == 0 || status.st_size < bytes) {
    close(fd);
    // Its creator has not sized it yet: the caller retries, as for a segment that does not exist.
    throw ErrnoError(env, name + " is not ready", ENOENT);
  }
  void* memory = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int error = errno;
  close(fd);
  if (memory == MAP_FAILED) throw ErrnoError(env, "mmap " + name, error);
  std::unique_ptr<v8::BackingStore> store = v8::SharedArrayBuffer::NewBackingStore(
      memory, static_cast<size_t>(bytes), [](void* data, size_t length, void*) { munmap(data, length); }, nullptr);
  v8::Local<v8::SharedArrayBuffer> buffer = v8::SharedArrayBuffer::New(v8::Isolate::GetCurrent(), std::move(store));
  return Napi::Value(env, FromV8(buffer));
}

Napi::Value Unlink(const Napi::CallbackInfo& info) {
  std::string name = info[0].As<Napi::String>();
  return Napi::Boolean::New(info.Env(), shm_unlink(name.c_str()) == 0);
}

Napi::Value Ring(const Napi::CallbackInfo& info) {
  Futex(WordOf(info, 0), FUTEX_WAKE, INT_MAX, nullptr);
  return info.Env().Undefined();
}

// A consumer's doorbell: once armed, a thread sleeps in the kernel while the word holds SLEEPING
// (a producer changes it and rings), then calls back on the JavaScript thread; one call per arm.
class Waiter : public Napi::ObjectWrap<Waiter> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Waiter", {InstanceMethod("arm", &Waiter::Arm), InstanceMethod("close", &Waiter::Close)});
  }

  explicit Waiter(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Waiter>(info) {
    word_ = WordOf(info, 0);
    // Keeps the buffer (and so the mapping) alive as long as this waiter.
    buffer_ = Napi::Persistent(info[0].As<Napi::Object>());
    callback_ = Napi::ThreadSafeFunction::New(info.Env(), info[2].As<Napi::Function>(), "ccjs shm doorbell", 0, 1);
    // The job's own handles keep the event loop alive; a doorbell alone must not.
    callback_.Unref(info.Env());
    thread_ = std::thread([this] { Run(); });
  }

  ~Waiter() override { Stop(); }

 private:
  Napi::Value Arm(const Napi::CallbackInfo& info) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      armed_ = true;
    }
    changed_.notify_one();
    return info.Env().Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    Stop();
    return info.Env().Undefined();
  }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    changed_.notify_one();
    Futex(word_, FUTEX_WAKE, INT_MAX, nullptr);
    if (thread_.joinable()) thread_.join();
    callback_.Release();
    buffer_.Reset();
  }

  void Run() {
    // Bounded waits, so that Stop() is heard even if its wake-up slips in before a wait starts.
    const timespec slice{0, 100 * 1000 * 1000};
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [this] { return armed_ || stopping_; });
        if (stopping_) return;
        armed_ = false;
      }
      while (__atomic_load_n(word_, __ATOMIC_SEQ_CST) == SLEEPING) {
        if (stopped()) return;
        Futex(word_, FUTEX_WAIT, SLEEPING, &slice);
      }
      if (stopped()) return;
      callback_.NonBlockingCall();
    }
  }

  bool stopped() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopping_;
  }

  int32_t* word_ = nullptr;
  Napi::ObjectReference buffer_;
  Napi::ThreadSafeFunction callback_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false;
  bool stopping_ = false;
};

// memcpy between two byte views (either may be over a SharedArrayBuffer, which V8's own copies
// treat with per-word relaxed atomics, several times slower for large bodies).
Napi::Value Copy(const Napi::CallbackInfo& info) {
  Napi::Uint8Array target = info[0].As<Napi::Uint8Array>();
  Napi::Uint8Array source = info[1].As<Napi::Uint8Array>();
  if (source.ByteLength() > target.ByteLength()) throw Napi::RangeError::New(info.Env(), "copy: the source is larger than the target");
  std::memcpy(target.Data(), source.Data(), source.ByteLength());
  return info.Env().Undefined();
}

Napi::Value ReceiveBuffer(const Napi::CallbackInfo& info) {
  size_t length = info[0].As<Napi::Number>().Int64Value();
  return ccjs::HandOver(info.Env(), ccjs::ReceiveMemory::OfThisThread().Take(length), length);
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("open", Napi::Function::New(env, Open));
  exports.Set("unlink", Napi::Function::New(env, Unlink));
  exports.Set("ring", Napi::Function::New(env, Ring));
  exports.Set("Waiter", Waiter::Define(env));
  exports.Set("copy", Napi::Function::New(env, Copy));
  exports.Set("receiveBuffer", Napi::Function::New(env, ReceiveBuffer));
  return exports;
}

}  // namespace

NODE_API_MODULE(ccjs_shm, Init)
