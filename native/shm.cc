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
//   probeAddress() -> number                          where this process keeps PROBE_WORD
//   canRead(pid, address) -> boolean                  can this process read that process's
//                                                     memory (process_vm_readv: same user, and
//                                                     what ptrace rules allow), checked on its
//                                                     PROBE_WORD at `address`
//   bodyTable(format, bodies) -> ArrayBuffer          where a frame's bodies lie in this process:
//                                                     u32 format, u32 count, then per body u64
//                                                     address, u64 length
//   fetch(pid, table) -> ArrayBuffer[]                the bodies a table describes, read from
//                                                     process pid in one copy (receive-memory.h;
//                                                     memcpy when pid is this process)
//   addressOf(bytes) -> number                        where a buffer's bytes lie in this process
//   readChunk(pid, address, target, offset, length)   process_vm_readv of length bytes at address
//                                                     into target[offset..]
//   writeChunk(pid, address, source, offset, length)  process_vm_writev of source[offset..] to
//                                                     address
//
// Node-API cannot make a SharedArrayBuffer over external memory yet (experimental in newer Node),
// so open() uses V8's API for that one object, with the headers node-gyp builds against.
#include <napi.h>
#include <v8.h>

#include "receive-memory.h"

#include <algorithm>
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
#include <sys/uio.h>
#include <thread>
#include <vector>
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
  failure.Set("code", Napi::String::New(env, error == ENOENT ? "ENOENT" : error == EEXIST ? "EEXIST" : error == ESRCH ? "ESRCH" : "ESYSCALL"));
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

// A word whose value a peer checks through process_vm_readv before it reads bodies that way.
constexpr uint64_t PROBE_WORD = 0x63636a7370726f62;  // "ccjsprob"
const volatile uint64_t probe_word = PROBE_WORD;

Napi::Value ProbeAddress(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(reinterpret_cast<uintptr_t>(&probe_word)));
}

// Moves `count` pieces between this process (`local`) and process `pid` (`remote`) with `move`
// (process_vm_readv or process_vm_writev); 0 or an errno. A call may stop short (at most IOV_MAX
// pieces a call, or a partial transfer), so it goes on from where it stopped.
using ProcessMove = ssize_t (*)(pid_t, const iovec*, unsigned long, const iovec*, unsigned long, unsigned long);

int MoveBetween(ProcessMove move, pid_t pid, iovec* local, iovec* remote, size_t count) {
  if (pid == getpid()) {
    // Threads of this process: the same copy without the system call (several times faster here).
    for (size_t i = 0; i < count; i += 1) {
      if (move == process_vm_readv) std::memcpy(local[i].iov_base, remote[i].iov_base, local[i].iov_len);
      else std::memcpy(remote[i].iov_base, local[i].iov_base, local[i].iov_len);
    }
    return 0;
  }
  size_t done = 0;
  for (;;) {
    while (done < count && local[done].iov_len == 0) done += 1;
    if (done == count) return 0;
    size_t batch = std::min<size_t>(count - done, IOV_MAX);
    ssize_t moved = move(pid, local + done, batch, remote + done, batch, 0);
    if (moved < 0) return errno;
    if (moved == 0) return EFAULT;
    for (size_t left = static_cast<size_t>(moved); left > 0;) {
      size_t take = std::min(left, local[done].iov_len);
      local[done].iov_base = static_cast<char*>(local[done].iov_base) + take;
      local[done].iov_len -= take;
      remote[done].iov_base = static_cast<char*>(remote[done].iov_base) + take;
      remote[done].iov_len -= take;
      left -= take;
      if (local[done].iov_len == 0) done += 1;
    }
  }
}

int ReadFrom(pid_t pid, iovec* local, iovec* remote, size_t count) {
  return MoveBetween(process_vm_readv, pid, local, remote, count);
}

Napi::Value CanRead(const Napi::CallbackInfo& info) {
  pid_t pid = info[0].As<Napi::Number>().Int32Value();
  uint64_t address = static_cast<uint64_t>(info[1].As<Napi::Number>().Int64Value());
  uint64_t word = 0;
  iovec local{&word, sizeof(word)};
  iovec remote{reinterpret_cast<void*>(address), sizeof(word)};
  return Napi::Boolean::New(info.Env(), ReadFrom(pid, &local, &remote, 1) == 0 && word == PROBE_WORD);
}

// All the bytes of a typed array or ArrayBuffer.
iovec WholeBytes(Napi::Env env, Napi::Value value) {
  if (value.IsArrayBuffer()) {
    Napi::ArrayBuffer buffer = value.As<Napi::ArrayBuffer>();
    return {buffer.Data(), buffer.ByteLength()};
  }
  if (value.IsTypedArray()) {
    Napi::TypedArray view = value.As<Napi::TypedArray>();
    return {static_cast<char*>(view.ArrayBuffer().Data()) + view.ByteOffset(), view.ByteLength()};
  }
  throw Napi::TypeError::New(env, "expected an ArrayBuffer or a typed array");
}

// The bytes [offset, offset + length) of a typed array or ArrayBuffer, checked against its bounds.
iovec BytesOf(Napi::Env env, Napi::Value value, int64_t offset, int64_t length) {
  iovec whole = WholeBytes(env, value);
  if (offset < 0 || length < 0 || static_cast<uint64_t>(offset) + static_cast<uint64_t>(length) > whole.iov_len) {
    throw Napi::RangeError::New(env, "bytes " + std::to_string(offset) + ".." + std::to_string(offset + length) + " are outside a buffer of " + std::to_string(whole.iov_len));
  }
  return {static_cast<char*>(whole.iov_base) + offset, static_cast<size_t>(length)};
}

constexpr size_t TABLE_HEAD = 8;
constexpr size_t TABLE_ENTRY = 16;
// Bounds a table read from shared memory is checked against before anything is allocated.
constexpr uint32_t MAX_TABLE_BODIES = 1 << 16;
constexpr uint64_t MAX_BODY_BYTES = uint64_t{1} << 46;

Napi::Value BodyTable(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint32_t format = info[0].As<Napi::Number>().Uint32Value();
  Napi::Array bodies = info[1].As<Napi::Array>();
  uint32_t count = bodies.Length();
  Napi::ArrayBuffer table = Napi::ArrayBuffer::New(env, TABLE_HEAD + TABLE_ENTRY * count);
  char* bytes = static_cast<char*>(table.Data());
  std::memcpy(bytes, &format, 4);
  std::memcpy(bytes + 4, &count, 4);
  for (uint32_t i = 0; i < count; i += 1) {
    iovec body = WholeBytes(env, bodies[i]);
    uint64_t address = reinterpret_cast<uintptr_t>(body.iov_base);
    uint64_t length = body.iov_len;
    std::memcpy(bytes + TABLE_HEAD + TABLE_ENTRY * i, &address, 8);
    std::memcpy(bytes + TABLE_HEAD + TABLE_ENTRY * i + 8, &length, 8);
  }
  return table;
}

Napi::Value Fetch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  pid_t pid = info[0].As<Napi::Number>().Int32Value();
  Napi::Uint8Array table = info[1].As<Napi::Uint8Array>();
  const char* bytes = reinterpret_cast<const char*>(table.Data());
  uint32_t count = 0;
  if (table.ByteLength() >= TABLE_HEAD) std::memcpy(&count, bytes + 4, 4);
  if (table.ByteLength() < TABLE_HEAD || count > MAX_TABLE_BODIES || table.ByteLength() != TABLE_HEAD + TABLE_ENTRY * size_t{count}) {
    throw Napi::RangeError::New(env, "fetch: a body table of " + std::to_string(table.ByteLength()) + " bytes for " + std::to_string(count) + " bodies");
  }
  std::vector<iovec> local(count), remote(count);
  for (uint32_t i = 0; i < count; i += 1) {
    uint64_t address = 0, length = 0;
    std::memcpy(&address, bytes + TABLE_HEAD + TABLE_ENTRY * i, 8);
    std::memcpy(&length, bytes + TABLE_HEAD + TABLE_ENTRY * i + 8, 8);
    if (length > MAX_BODY_BYTES) throw Napi::RangeError::New(env, "fetch: a body of " + std::to_string(length) + " bytes");
    remote[i] = {reinterpret_cast<void*>(address), length};
  }
  Napi::Array bodies = Napi::Array::New(env, count);
  for (uint32_t i = 0; i < count; i += 1) {
    size_t length = remote[i].iov_len;
    void* data = ccjs::ReceiveMemory::OfThisThread().Take(length);
    local[i] = {data, length};
    bodies[i] = ccjs::HandOver(env, data, length);
  }
  int error = ReadFrom(pid, local.data(), remote.data(), count);
  if (error != 0) throw ErrnoError(env, "reading bodies from process " + std::to_string(pid), error);
  return bodies;
}

Napi::Value AddressOf(const Napi::CallbackInfo& info) {
  iovec bytes = WholeBytes(info.Env(), info[0]);
  return Napi::Number::New(info.Env(), static_cast<double>(reinterpret_cast<uintptr_t>(bytes.iov_base)));
}

// Copies `length` bytes between process `pid` at `address` and bytes of ours at `offset`.
Napi::Value MoveChunk(const Napi::CallbackInfo& info, ProcessMove move, const char* what) {
  Napi::Env env = info.Env();
  pid_t pid = info[0].As<Napi::Number>().Int32Value();
  uint64_t address = static_cast<uint64_t>(info[1].As<Napi::Number>().Int64Value());
  int64_t offset = info[3].As<Napi::Number>().Int64Value();
  int64_t length = info[4].As<Napi::Number>().Int64Value();
  iovec local = BytesOf(env, info[2], offset, length);
  iovec remote{reinterpret_cast<void*>(address), local.iov_len};
  int error = MoveBetween(move, pid, &local, &remote, 1);
  if (error != 0) throw ErrnoError(env, std::string(what) + " process " + std::to_string(pid), error);
  return env.Undefined();
}

Napi::Value ReadChunk(const Napi::CallbackInfo& info) {
  return MoveChunk(info, process_vm_readv, "reading from");
}

Napi::Value WriteChunk(const Napi::CallbackInfo& info) {
  return MoveChunk(info, process_vm_writev, "writing to");
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("open", Napi::Function::New(env, Open));
  exports.Set("unlink", Napi::Function::New(env, Unlink));
  exports.Set("ring", Napi::Function::New(env, Ring));
  exports.Set("Waiter", Waiter::Define(env));
  exports.Set("copy", Napi::Function::New(env, Copy));
  exports.Set("receiveBuffer", Napi::Function::New(env, ReceiveBuffer));
  exports.Set("probeAddress", Napi::Function::New(env, ProbeAddress));
  exports.Set("canRead", Napi::Function::New(env, CanRead));
  exports.Set("bodyTable", Napi::Function::New(env, BodyTable));
  exports.Set("fetch", Napi::Function::New(env, Fetch));
  exports.Set("addressOf", Napi::Function::New(env, AddressOf));
  exports.Set("readChunk", Napi::Function::New(env, ReadChunk));
  exports.Set("writeChunk", Napi::Function::New(env, WriteChunk));
  return exports;
}

}  // namespace

NODE_API_MODULE(ccjs_shm, Init)
