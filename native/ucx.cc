// The UCX addon's binding to JavaScript: UcxWorker (transport/ucx/native.ts) over a ucx::Worker
// (ucx-worker.h, which says how frames travel), one UCP context and worker per JavaScript thread.
// Here are only N-API's concerns: converting arguments, keeping JavaScript's buffers alive while
// UCX uses them (pins), handing received parts over as ArrayBuffers, calling back into JavaScript
// and reporting failures as errors.
//
// Small frames cost no JavaScript object on the way: JavaScript writes one into the outbox (an
// ArrayBuffer) and calls sendOut(rank, length), and a received one is copied into the inbox
// (another), where JavaScript reads it. The two calls made for every message (progress and sendOut)
// are functions bound to their worker rather than methods, which V8 would have to unwrap first.
#include <napi.h>
#include <uv.h>

#include "hand-over.h"
#include "ucx-worker.h"

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

using ccjs::ucx::INLINE_BYTES;

// Held parts up to this size are copied into a JavaScript ArrayBuffer; larger ones are handed over in place.
constexpr size_t COPY_OUT_BYTES = ccjs::POOLED_BYTES;

// A JavaScript buffer kept alive while UCX uses its memory; the binding makes every pin the worker holds.
class BufferPin : public ccjs::ucx::Pin {
 public:
  explicit BufferPin(Napi::Value buffer) : buffer_(Napi::Persistent(buffer)) {}
  Napi::Value Buffer() const { return buffer_.Value(); }

 private:
  Napi::Reference<Napi::Value> buffer_;
};

// Runs a call of the worker's, throwing its failure to JavaScript as an Error.
template <typename Call>
auto Reported(Napi::Env env, Call call) -> decltype(call()) {
  try {
    return call();
  } catch (const ccjs::ucx::Failure& failure) {
    throw Napi::Error::New(env, failure.what());
  }
}

class UcxWorker : public Napi::ObjectWrap<UcxWorker> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "UcxWorker",
                       {InstanceMethod("address", &UcxWorker::Address), InstanceMethod("connect", &UcxWorker::Connect),
                        InstanceMethod("send", &UcxWorker::Send), InstanceMethod("takeHeld", &UcxWorker::TakeHeld),
                        InstanceMethod("arm", &UcxWorker::Arm), InstanceMethod("busy", &UcxWorker::Busy),
                        InstanceMethod("sending", &UcxWorker::Sending), InstanceMethod("expect", &UcxWorker::Expect),
                        InstanceMethod("receiveHeld", &UcxWorker::ReceiveHeld),
                        InstanceMethod("lanes", &UcxWorker::Lanes),
                        InstanceMethod("disconnect", &UcxWorker::Disconnect), InstanceMethod("close", &UcxWorker::Close)});
  }

  // new UcxWorker(rank, wake, inbox, outbox, settings): `rank` tags what this endpoint sends; wake()
  // is called from the event loop when the worker has something to progress; inbox and outbox are
  // ArrayBuffers, the inbox of at least RECORDS_AT + RECORD_BYTES + INLINE_BYTES bytes; settings is
  // an object of strings that override UCX's configuration (names without "UCX_").
  explicit UcxWorker(const Napi::CallbackInfo& info) : Napi::ObjectWrap<UcxWorker>(info) {
    Napi::Env env = info.Env();
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    if (rank > ccjs::ucx::MAX_RANK) throw Napi::RangeError::New(env, "UcxWorker: rank " + std::to_string(rank) + " does not fit in a tag");
    wake_ = Napi::Persistent(info[1].As<Napi::Function>());
    Napi::ArrayBuffer inbox = info[2].As<Napi::ArrayBuffer>();
    Napi::ArrayBuffer outbox = info[3].As<Napi::ArrayBuffer>();
    if (inbox.ByteLength() < ccjs::ucx::RECORDS_AT + ccjs::ucx::RECORD_BYTES + INLINE_BYTES || outbox.ByteLength() < INLINE_BYTES) {
      throw Napi::RangeError::New(env, "UcxWorker: inbox or outbox too small");
    }
    if (!info[4].IsObject()) throw Napi::TypeError::New(env, "UcxWorker: settings must be an object of strings");
    Napi::Object given = info[4].As<Napi::Object>();
    Napi::Array names = given.GetPropertyNames();
    std::vector<std::pair<std::string, std::string>> settings;
    for (uint32_t i = 0; i < names.Length(); i += 1) {
      Napi::Value name = names.Get(i);
      Napi::Value value = given.Get(name);
      if (!value.IsString()) throw Napi::TypeError::New(env, "UcxWorker: setting " + name.ToString().Utf8Value() + " is not a string");
      settings.emplace_back(name.ToString().Utf8Value(), value.As<Napi::String>().Utf8Value());
    }
    inbox_box_ = Napi::Persistent(inbox);
    outbox_box_ = Napi::Persistent(outbox);
    Napi::Object self = info.This().As<Napi::Object>();
    self.Set("progress", Napi::Function::New(env, ProgressOf, "progress", this));
    self.Set("sendOut", Napi::Function::New(env, SendOutOf, "sendOut", this));
    uv_loop_t* loop = nullptr;
    napi_get_uv_event_loop(env, &loop);
    worker_ = Reported(env, [&] {
      return std::make_unique<ccjs::ucx::Worker>(rank, static_cast<uint8_t*>(inbox.Data()), inbox.ByteLength(), outbox.Data(), loop, [this] { Wake(); }, settings);
    });
    async_ = std::make_unique<Napi::AsyncContext>(env, "ccjs:ucx");
  }

  // The worker first, as it was torn down before the references of JavaScript's went.
  ~UcxWorker() override { worker_.reset(); }

 private:
  // address(): this worker's address, for peers to connect to.
  Napi::Value Address(const Napi::CallbackInfo& info) {
    std::vector<uint8_t> address = Reported(info.Env(), [&] { return worker_->Address(); });
    return Napi::Buffer<uint8_t>::Copy(info.Env(), address.data(), address.size());
  }

  // connect(rank, address): an endpoint to the peer, which reports its failure.
  Napi::Value Connect(const Napi::CallbackInfo& info) {
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    Napi::Uint8Array address = info[1].As<Napi::Uint8Array>();
    Reported(info.Env(), [&] { worker_->Connect(rank, address.Data()); });
    return info.Env().Undefined();
  }

  // send(rank, parts, token, key, deferred): sends the parts (Uint8Arrays) of one frame (see
  // ucx::Worker::Send); true when they may be reused at once, else progress() reports [SENT, rank,
  // token] once they may.
  Napi::Value Send(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    Napi::Array parts = info[1].As<Napi::Array>();
    uint32_t token = info[2].As<Napi::Number>().Uint32Value();
    uint32_t key = info[3].As<Napi::Number>().Uint32Value();
    bool deferred = info[4].As<Napi::Boolean>().Value();
    if (!worker_->Connected(rank)) throw Napi::Error::New(env, "no UCX endpoint to endpoint " + std::to_string(rank));
    // Kept between calls, so that it does not allocate once warm.
    outgoing_.clear();
    uint32_t count = parts.Length();
    for (uint32_t i = 0; i < count; i += 1) {
      Napi::Uint8Array part = parts.Get(i).As<Napi::Uint8Array>();
      outgoing_.push_back({part.Data(), part.ByteLength()});
    }
    bool done = worker_->Send(rank, outgoing_, token, key, deferred, [&](uint32_t part) { return std::make_unique<BufferPin>(parts.Get(part)); });
    return Napi::Boolean::New(env, done);
  }

  // sendOut(rank, length): sends the outbox's first `length` bytes (a whole frame) to `rank`; the
  // outbox may be reused at once.
  static Napi::Value SendOutOf(const Napi::CallbackInfo& info) {
    auto* self = static_cast<UcxWorker*>(info.Data());
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    uint32_t length = info[1].As<Napi::Number>().Uint32Value();
    if (!self->worker_->Connected(rank) || length > INLINE_BYTES) {
      throw Napi::Error::New(info.Env(), "sendOut: no UCX endpoint to endpoint " + std::to_string(rank) + " or a frame of " + std::to_string(length) + " bytes");
    }
    self->worker_->SendOut(rank, length);
    return info.Env().Undefined();
  }

  // progress(drain): advances the worker and writes what completed into the inbox (see
  // ucx::Worker::Progress); returns how many events and records that was (0: nothing happened).
  static Napi::Value ProgressOf(const Napi::CallbackInfo& info) {
    auto* self = static_cast<UcxWorker*>(info.Data());
    bool drain = info[0].As<Napi::Boolean>().Value();
    // An integer (a small one stays a Smi), not a double, which V8 would box on every call.
    napi_value moved = nullptr;
    napi_create_uint32(info.Env(), self->worker_->Progress(drain), &moved);
    return Napi::Value(info.Env(), moved);
  }

  // takeHeld(): the frame of the oldest HELD record: its only part as an ArrayBuffer, or its parts
  // as an Array of them (an expected one as its buffer, a deferred one as its length).
  Napi::Value TakeHeld(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!worker_->HasHeld()) throw Napi::Error::New(env, "takeHeld: no frame is held");
    std::vector<ccjs::ucx::Part> parts = worker_->TakeHeld();
    if (parts.size() == 1) return TakeBuffer(env, parts[0]);
    Napi::Array array = Napi::Array::New(env, parts.size());
    for (size_t i = 0; i < parts.size(); i += 1) {
      if (parts[i].deferred) {
        array.Set(static_cast<uint32_t>(i), Napi::Number::New(env, static_cast<double>(parts[i].length)));
      } else {
        array.Set(static_cast<uint32_t>(i), TakeBuffer(env, parts[i]));
      }
    }
    return array;
  }

  // arm(): calls wake() from the event loop once the worker has something to progress (one call per arm).
  Napi::Value Arm(const Napi::CallbackInfo& info) {
    worker_->Arm();
    return info.Env().Undefined();
  }

  // busy(): whether sends or receives are in flight, or completions wait for room in the inbox.
  Napi::Value Busy(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), worker_->Busy()); }

  // sending(): whether UCX still sends something of ours (a frame of the outbox's among them).
  Napi::Value Sending(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), worker_->Sending()); }

  // expect(rank, key, buffer): the part from `rank` sent with `key` (see send()) is received straight
  // into `buffer` (a Uint8Array kept until then), if it has the buffer's length. takeHeld() then
  // gives `buffer` itself as that part.
  Napi::Value Expect(const Napi::CallbackInfo& info) {
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    uint32_t key = info[1].As<Napi::Number>().Uint32Value();
    Napi::Uint8Array buffer = info[2].As<Napi::Uint8Array>();
    if (!worker_->Connected(rank) || key == 0) throw Napi::Error::New(info.Env(), "expect: no UCX endpoint to endpoint " + std::to_string(rank) + " or key 0");
    worker_->Expect(rank, key, buffer.Data(), buffer.ByteLength(), std::make_unique<BufferPin>(info[2]));
    return info.Env().Undefined();
  }

  // receiveHeld(buffer, timeoutMs): receives the deferred part of the frame takeHeld() just gave
  // (as its length) into `buffer` (a Uint8Array of that length; else new memory). Returns the part
  // (`buffer` itself, or an ArrayBuffer); throws if UCX fails it (its peer lost) or if it is not in
  // within timeoutMs (its sender stopped).
  Napi::Value ReceiveHeld(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    uint32_t timeout_ms = info[1].As<Napi::Number>().Uint32Value();
    std::optional<size_t> awaited = worker_->AwaitedLength();
    if (!awaited) throw Napi::Error::New(env, "receiveHeld: no part waits");
    Napi::Value given = info[0];
    bool fits = given.IsTypedArray() && given.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array && given.As<Napi::Uint8Array>().ByteLength() == *awaited;
    ccjs::ucx::Part part = Reported(env, [&] {
      if (!fits) return worker_->ReceiveHeld(nullptr, nullptr, timeout_ms);
      return worker_->ReceiveHeld(given.As<Napi::Uint8Array>().Data(), std::make_unique<BufferPin>(given), timeout_ms);
    });
    return TakeBuffer(env, part);
  }

  // lanes(rank): UCX's description of the endpoint to `rank`: which transports it uses.
  Napi::Value Lanes(const Napi::CallbackInfo& info) {
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    std::optional<std::string> lanes = worker_->Lanes(rank);
    if (!lanes) return info.Env().Undefined();
    return Napi::String::New(info.Env(), *lanes);
  }

  // disconnect(rank): drops the endpoint to a lost peer and the receives still in flight from it.
  Napi::Value Disconnect(const Napi::CallbackInfo& info) {
    worker_->Disconnect(info[0].As<Napi::Number>().Uint32Value());
    return info.Env().Undefined();
  }

  // close(): flushes and closes every endpoint (a lost one by force), then the worker and the context.
  Napi::Value Close(const Napi::CallbackInfo& info) {
    worker_->Close();
    // Nothing of JavaScript is left for the finalizer, which may run while Node tears the environment down.
    wake_.Reset();
    async_.reset();
    inbox_box_.Reset();
    outbox_box_.Reset();
    return info.Env().Undefined();
  }

  // A received part as JavaScript's: the buffer it was received into, or an ArrayBuffer (a copy of
  // a small one; a large one's memory handed over).
  static Napi::Value TakeBuffer(Napi::Env env, ccjs::ucx::Part& part) {
    if (part.pin != nullptr) return static_cast<BufferPin&>(*part.pin).Buffer();
    if (part.length <= COPY_OUT_BYTES) {
      Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(env, part.length);
      if (part.length > 0) memcpy(buffer.Data(), part.data, part.length);
      ccjs::ReceiveMemory::Shared().Give(part.data, part.length);
      return buffer;
    }
    return ccjs::HandOver(env, part.data, part.length);
  }

  void Wake() {
    if (wake_.IsEmpty()) return;
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    wake_.MakeCallback(Value(), {}, *async_);
  }

  Napi::FunctionReference wake_;
  std::unique_ptr<Napi::AsyncContext> async_;
  // The inbox and the outbox, kept alive while the worker writes and reads them.
  Napi::Reference<Napi::ArrayBuffer> inbox_box_;
  Napi::Reference<Napi::ArrayBuffer> outbox_box_;
  // The parts of the frame send() is sending.
  std::vector<ccjs::ucx::Outgoing> outgoing_;
  std::unique_ptr<ccjs::ucx::Worker> worker_;
};

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("UcxWorker", UcxWorker::Define(env));
  exports.Set("version", Napi::String::New(env, ucp_get_version_string()));
  exports.Set("inlineBytes", Napi::Number::New(env, INLINE_BYTES));
  exports.Set("statusText", Napi::Function::New(env, [](const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), ucs_status_string(static_cast<ucs_status_t>(info[0].As<Napi::Number>().Int32Value())));
  }, "statusText"));
  return exports;
}

NODE_API_MODULE(ccjs_ucx, Init)
