// The shared-memory device's native part (transport/shm): memory that processes of one host share,
// and a doorbell that one process rings and another's event loop hears.
//
//   open(name, bytes, create) -> SharedArrayBuffer   shm_open + mmap, unmapped when collected;
//                                                     bytes 0 when opening: the whole segment
//   unlink(name)                                      shm_unlink: the memory lives on while mapped
//   new Doorbell(path, woken)                         a FIFO made at path and watched by this
//     .arm() / .close()                               thread's event loop: once armed, the next
//                                                     byte written to it calls woken()
//   openBell(path) -> fd / ringBell(fd) / closeBell(fd)
//                                                     a sender's end of a peer's doorbell
//   copy(target, source)                              memcpy between byte views (large bodies
//                                                     into and out of the rings)
//   receiveBuffer(length) -> ArrayBuffer              memory for a large received body, given
//                                                     back for the next one once collected
//                                                     (receive-memory.h, hand-over.h)
//   receiveMemoryStats() -> { reused, fresh, idleBytes }
//                                                     large bodies served from that memory, and
//                                                     from fresh memory; bytes of it idle now
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

#include "hand-over.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <vector>
#include <uv.h>
#include <unistd.h>

namespace {

// Node-API values are V8 locals underneath (js_native_api_v8.h): a V8 local crosses back as one.
napi_value FromV8(v8::Local<v8::Value> local) {
  return reinterpret_cast<napi_value>(*local);
}

Napi::Error ErrnoError(Napi::Env env, const std::string& what, int error) {
  Napi::Error failure = Napi::Error::New(env, what + ": " + std::strerror(error));
  failure.Set("code", Napi::String::New(env, error == ENOENT ? "ENOENT" : error == EEXIST ? "EEXIST" : error == ESRCH ? "ESRCH" : "ESYSCALL"));
  failure.Set("errno", Napi::Number::New(env, error));
  return failure;
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

// A process endpoint's doorbell: a FIFO next to its segment, which its senders write a byte to and
// its own event loop watches (uv_poll). A wake-up is one write and one epoll return, where a
// futex would need a thread of ours between the two (a context switch more per wake-up).
class Doorbell : public Napi::ObjectWrap<Doorbell> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Doorbell", {InstanceMethod("arm", &Doorbell::Arm), InstanceMethod("close", &Doorbell::Close)});
  }

  explicit Doorbell(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Doorbell>(info) {
    Napi::Env env = info.Env();
    std::string path = info[0].As<Napi::String>();
    if (mkfifo(path.c_str(), 0600) != 0) throw ErrnoError(env, "mkfifo " + path, errno);
    // Read and write: the FIFO never reports end of file, whoever closes it.
    fd_ = open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) {
      int error = errno;
      unlink(path.c_str());
      throw ErrnoError(env, "opening " + path, error);
    }
    woken_ = Napi::Persistent(info[1].As<Napi::Function>());
    async_ = std::make_unique<Napi::AsyncContext>(env, "ccjs:shm");
    uv_loop_t* loop = nullptr;
    napi_get_uv_event_loop(env, &loop);
    poll_ = new uv_poll_t;
    uv_poll_init(loop, poll_, fd_);
    poll_->data = this;
    // The job's own handles keep the event loop alive; a doorbell alone must not.
    uv_unref(reinterpret_cast<uv_handle_t*>(poll_));
    uv_poll_start(poll_, UV_READABLE, OnReadable);
  }

  ~Doorbell() override { Stop(); }

 private:
  // The next ring calls back once. Rings heard while not armed only empty the FIFO: the endpoint
  // was awake and polling its rings anyway.
  Napi::Value Arm(const Napi::CallbackInfo& info) {
    armed_ = true;
    return info.Env().Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    Stop();
    return info.Env().Undefined();
  }

  void Stop() {
    if (poll_ == nullptr) return;
    uv_close(reinterpret_cast<uv_handle_t*>(poll_), [](uv_handle_t* handle) { delete reinterpret_cast<uv_poll_t*>(handle); });
    poll_ = nullptr;
    close(fd_);
    fd_ = -1;
    armed_ = false;
  }

  static void OnReadable(uv_poll_t* handle, int, int) {
    auto* self = static_cast<Doorbell*>(handle->data);
    char bytes[64];
    while (read(self->fd_, bytes, sizeof bytes) > 0) {
    }
    if (!self->armed_) return;
    self->armed_ = false;
    Napi::Env env = self->Env();
    Napi::HandleScope scope(env);
    self->woken_.MakeCallback(self->Value(), {}, *self->async_);
  }

  int fd_ = -1;
  uv_poll_t* poll_ = nullptr;
  bool armed_ = false;
  Napi::FunctionReference woken_;
  std::unique_ptr<Napi::AsyncContext> async_;
};

// A sender's end of a peer's doorbell: a file descriptor to write to.
Napi::Value OpenBell(const Napi::CallbackInfo& info) {
  std::string path = info[0].As<Napi::String>();
  int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw ErrnoError(info.Env(), "opening " + path, errno);
  return Napi::Number::New(info.Env(), fd);
}

// Node ignores SIGPIPE, so a reader that is gone is EPIPE here, and a full FIFO EAGAIN: either
// way nobody needs another byte.
Napi::Value RingBell(const Napi::CallbackInfo& info) {
  const char byte = 1;
  ssize_t written = write(info[0].As<Napi::Number>().Int32Value(), &byte, 1);
  (void)written;
  return info.Env().Undefined();
}

Napi::Value CloseBell(const Napi::CallbackInfo& info) {
  close(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

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
  int64_t length = info[0].As<Napi::Number>().Int64Value();
  if (length < 0) throw Napi::RangeError::New(info.Env(), "receiveBuffer: a length of " + std::to_string(length));
  return ccjs::ReceiveBuffer(info.Env(), static_cast<size_t>(length));
}

Napi::Value ReceiveMemoryStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ccjs::ReceiveMemoryStats stats = ccjs::ReceiveMemory::Shared().Stats();
  Napi::Object result = Napi::Object::New(env);
  result.Set("reused", Napi::Number::New(env, static_cast<double>(stats.reused)));
  result.Set("fresh", Napi::Number::New(env, static_cast<double>(stats.fresh)));
  result.Set("idleBytes", Napi::Number::New(env, static_cast<double>(stats.idle_bytes)));
  return result;
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
    Napi::ArrayBuffer body = ccjs::ReceiveBuffer(env, remote[i].iov_len);
    local[i] = {body.Data(), remote[i].iov_len};
    bodies[i] = body;
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
  exports.Set("Doorbell", Doorbell::Define(env));
  exports.Set("openBell", Napi::Function::New(env, OpenBell));
  exports.Set("ringBell", Napi::Function::New(env, RingBell));
  exports.Set("closeBell", Napi::Function::New(env, CloseBell));
  exports.Set("copy", Napi::Function::New(env, Copy));
  exports.Set("receiveBuffer", Napi::Function::New(env, ReceiveBuffer));
  exports.Set("receiveMemoryStats", Napi::Function::New(env, ReceiveMemoryStats));
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
