// The UCX addon: one UCP context and worker per JavaScript thread, moving whole frames between
// endpoints as UCP tagged messages. Matching, ordering and
// the protocols of ccjs stay in its engine; UCX chooses the wire protocol of each message (eager or
// rendezvous, zero-copy where it can) and the transport (InfiniBand, RoCE, shared memory, TCP).
//
// JavaScript is never called from inside a UCX callback (they only record what completed, and UCX
// aborts on re-entrant progress): progress() writes what completed since the last call into the
// inbox, an ArrayBuffer of JavaScript's, and the doorbell (the worker's event fd, watched by libuv)
// calls back only from libuv.
//
// Small frames cost no JavaScript object on the way: JavaScript writes one into the outbox (another
// ArrayBuffer) and calls sendOut(rank, length), and a received one is copied into the inbox, where
// JavaScript reads it. The two calls made for every message (progress and sendOut) are functions
// bound to their worker rather than methods, which V8 would have to unwrap first.
//
// A frame given as several parts (a header and large bodies) goes as one contiguous message per
// part, so that UCX can move each body without copying it (its rendezvous protocols are zero-copy
// only for contiguous data). The tag says who sent a message and, on a frame's first part, how
// many parts follow: the receiver hands the parts over together. UCX matches one sender's
// messages in the order they were sent, so the parts that follow a first part are its own.
//
// The body of a message that a receive waits for with a buffer of its own (receive's `into`) is
// received straight into that buffer. For a message the receiver cleared (rendezvous), the engine
// names the buffer by the frame's id before it clears it (expect()), and the sender puts that id in
// the tag of the part. A message sent without asking (a binary point-to-point one the peer may
// read from the sender's memory) is marked "deferred" by its sender: its body is left in UCX's
// hands until JavaScript, having read the frame's header, says where it goes (receiveHeld()).
#include <napi.h>
#include <uv.h>
#include <ucp/api/ucp.h>

#include "receive-memory.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

// The kinds of the inbox's records (transport/ucx/native.ts).
enum RecordKind : uint32_t { RECEIVED = 1, SENT = 2, LOST = 3, HELD = 4, RECEIVE_FAILED = 5 };

// Frames of one message up to this size travel through the inbox; larger ones are held for takeHeld().
constexpr size_t INLINE_BYTES = 4096;
// The inbox: a count of records, then the records, each four words (kind, rank, value, length) and,
// for RECEIVED, a frame of `length` bytes padded to 8.
constexpr size_t RECORDS_AT = 8;
constexpr size_t RECORD_BYTES = 16;

// Held messages up to this size are copied into a JavaScript ArrayBuffer; larger ones are handed over in place.
constexpr size_t COPY_OUT_BYTES = ccjs::POOLED_BYTES;

size_t Padded(size_t bytes) { return (bytes + 7) & ~static_cast<size_t>(7); }

// The tag: the sender's rank in the low 31 bits, then the deferred flag; in the high 32, on a
// frame's first part how many parts follow it, on a part that follows the key (0: none) of the
// buffer expected for it.
constexpr int HIGH_SHIFT = 32;
constexpr uint32_t MAX_RANK = 0x7fffffff;
constexpr ucp_tag_t DEFERRED = ucp_tag_t{1} << 31;
ucp_tag_t TagOf(uint32_t rank, uint32_t high, bool deferred = false) {
  return static_cast<ucp_tag_t>(rank) | (static_cast<ucp_tag_t>(high) << HIGH_SHIFT) | (deferred ? DEFERRED : 0);
}

// A buffer of JavaScript's that a part is expected to be received into (expect()).
struct Expected {
  Napi::Reference<Napi::Value> buffer;
  void* data;
  size_t length;
};

class UcxWorker;

struct Receive {
  UcxWorker* worker = nullptr;
  uint32_t rank = 0;
  void* data = nullptr;
  size_t length = 0;
  void* request = nullptr;
  // On a frame's first part: how many parts follow it (they are the next receives of its peer).
  uint32_t following = 0;
  bool done = false;
  // Nobody waits for it any more (its peer was lost, or receiveHeld() gave it up): the callback frees it.
  bool orphan = false;
  // Counted in the worker's operations in flight.
  bool counted = false;
  ucs_status_t status = UCS_OK;
  // When `data` is JavaScript's buffer (an expected part), that buffer; else `data` is ReceiveMemory's.
  Napi::Reference<Napi::Value> buffer;
  // A deferred part not received yet (data is null): its message, for receiveHeld().
  ucp_tag_message_h message = nullptr;
  // Received by receiveHeld(), which waits for it itself: its completion is no record.
  bool held = false;
};

// Gives a receive's memory back (ReceiveMemory's) or lets go of JavaScript's buffer, and frees it.
void Free(Receive* receive) {
  if (receive->data != nullptr && receive->buffer.IsEmpty()) ccjs::ReceiveMemory::OfThisThread().Give(receive->data, receive->length);
  delete receive;
}

// A frame's parts in flight, reported as sent once UCX is done with every one.
struct Send {
  UcxWorker* worker;
  uint32_t rank;
  uint32_t token;
  uint32_t pending = 0;
  ucs_status_t status = UCS_OK;
  // The JavaScript buffers of the parts, kept alive while UCX may read them.
  std::vector<Napi::Reference<Napi::Value>> keep;
  // Or a copy of the outbox's frame, which JavaScript is not told about.
  void* copy = nullptr;
};

struct Peer {
  UcxWorker* worker = nullptr;
  uint32_t rank = 0;
  ucp_ep_h ep = nullptr;
  bool failed = false;
  std::deque<Receive*> receives;
  // Parts still to come of the frame whose first part arrived last.
  uint32_t following = 0;
  // Buffers parts from this peer are expected to be received into, by key.
  std::unordered_map<uint32_t, Expected> expected;
};

struct Completion {
  uint32_t kind;
  uint32_t rank;
  uint32_t token;
  ucs_status_t status;
};

Napi::Error UcxError(Napi::Env env, const std::string& what, ucs_status_t status) {
  return Napi::Error::New(env, what + ": " + ucs_status_string(status));
}

class UcxWorker : public Napi::ObjectWrap<UcxWorker> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "UcxWorker",
                       {InstanceMethod("address", &UcxWorker::Address), InstanceMethod("connect", &UcxWorker::Connect),
                        InstanceMethod("send", &UcxWorker::SendFrame), InstanceMethod("takeHeld", &UcxWorker::TakeHeld),
                        InstanceMethod("arm", &UcxWorker::Arm), InstanceMethod("busy", &UcxWorker::Busy),
                        InstanceMethod("sending", &UcxWorker::Sending), InstanceMethod("expect", &UcxWorker::Expect),
                        InstanceMethod("receiveHeld", &UcxWorker::ReceiveHeld),
                        InstanceMethod("lanes", &UcxWorker::Lanes),
                        InstanceMethod("disconnect", &UcxWorker::Disconnect), InstanceMethod("close", &UcxWorker::Close)});
  }

  // new UcxWorker(rank, wake, inbox, outbox): `rank` tags what this endpoint sends; wake() is called
  // from the event loop when the worker has something to progress; inbox and outbox are
  // ArrayBuffers, the inbox of at least RECORDS_AT + RECORD_BYTES + INLINE_BYTES bytes.
  explicit UcxWorker(const Napi::CallbackInfo& info) : Napi::ObjectWrap<UcxWorker>(info) {
    Napi::Env env = info.Env();
    rank_ = info[0].As<Napi::Number>().Uint32Value();
    if (rank_ > MAX_RANK) throw Napi::RangeError::New(env, "UcxWorker: rank " + std::to_string(rank_) + " does not fit in a tag");
    wake_ = Napi::Persistent(info[1].As<Napi::Function>());
    Napi::ArrayBuffer inbox = info[2].As<Napi::ArrayBuffer>();
    Napi::ArrayBuffer outbox = info[3].As<Napi::ArrayBuffer>();
    if (inbox.ByteLength() < RECORDS_AT + RECORD_BYTES + INLINE_BYTES || outbox.ByteLength() < INLINE_BYTES) {
      throw Napi::RangeError::New(env, "UcxWorker: inbox or outbox too small");
    }
    inbox_ = static_cast<uint8_t*>(inbox.Data());
    inbox_bytes_ = inbox.ByteLength();
    outbox_ = outbox.Data();
    inbox_box_ = Napi::Persistent(inbox);
    outbox_box_ = Napi::Persistent(outbox);
    Napi::Object self = info.This().As<Napi::Object>();
    self.Set("progress", Napi::Function::New(env, ProgressOf, "progress", this));
    self.Set("sendOut", Napi::Function::New(env, SendOutOf, "sendOut", this));
    ucp_config_t* config = nullptr;
    ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
    if (status != UCS_OK) throw UcxError(env, "ucp_config_read", status);
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
    status = ucp_init(&params, config, &context_);
    ucp_config_release(config);
    if (status != UCS_OK) throw UcxError(env, "ucp_init", status);
    ucp_worker_params_t worker_params{};
    worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
    status = ucp_worker_create(context_, &worker_params, &worker_);
    if (status != UCS_OK) {
      ucp_cleanup(context_);
      context_ = nullptr;
      throw UcxError(env, "ucp_worker_create", status);
    }
    int fd = -1;
    status = ucp_worker_get_efd(worker_, &fd);
    if (status != UCS_OK) {
      Destroy();
      throw UcxError(env, "ucp_worker_get_efd", status);
    }
    uv_loop_t* loop = nullptr;
    napi_get_uv_event_loop(env, &loop);
    poll_ = new uv_poll_t;
    prepare_ = new uv_prepare_t;
    uv_poll_init(loop, poll_, fd);
    uv_prepare_init(loop, prepare_);
    poll_->data = prepare_->data = this;
    // The doorbell never keeps the process alive by itself (the job's control connection does).
    uv_unref(reinterpret_cast<uv_handle_t*>(poll_));
    uv_unref(reinterpret_cast<uv_handle_t*>(prepare_));
    async_ = std::make_unique<Napi::AsyncContext>(env, "ccjs:ucx");
    OfThisThread().push_back(this);
  }

  ~UcxWorker() override { Destroy(); }

  // The workers of this thread (those not destroyed yet).
  static std::vector<UcxWorker*>& OfThisThread() {
    static thread_local std::vector<UcxWorker*> workers;
    return workers;
  }

 private:
  // address(): this worker's address, for peers to connect to.
  Napi::Value Address(const Napi::CallbackInfo& info) {
    ucp_worker_attr_t attr{};
    attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS;
    ucs_status_t status = ucp_worker_query(worker_, &attr);
    if (status != UCS_OK) throw UcxError(info.Env(), "ucp_worker_query", status);
    Napi::Buffer<uint8_t> copy = Napi::Buffer<uint8_t>::Copy(info.Env(), reinterpret_cast<uint8_t*>(attr.address), attr.address_length);
    ucp_worker_release_address(worker_, attr.address);
    return copy;
  }

  // connect(rank, address): an endpoint to the peer, which reports its failure (UCP_ERR_HANDLING_MODE_PEER).
  Napi::Value Connect(const Napi::CallbackInfo& info) {
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    Napi::Uint8Array address = info[1].As<Napi::Uint8Array>();
    if (peers_.size() <= rank) peers_.resize(rank + 1);
    Peer& peer = peers_[rank];
    peer.worker = this;
    peer.rank = rank;
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address = reinterpret_cast<const ucp_address_t*>(address.Data());
    params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = OnPeerError;
    params.err_handler.arg = &peer;
    ucs_status_t status = ucp_ep_create(worker_, &params, &peer.ep);
    if (status != UCS_OK) throw UcxError(info.Env(), "ucp_ep_create to endpoint " + std::to_string(rank), status);
    return info.Env().Undefined();
  }

  // send(rank, parts, token, key, deferred): sends the parts (Uint8Arrays) of one frame, each as a
  // contiguous message, those after the first with `key` (0: none; see expect()) or, `deferred`, to
  // be received where receiveHeld() says. True when UCX is done with them at once; otherwise
  // progress() reports [SENT, rank, token] once they may all be reused.
  Napi::Value SendFrame(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    Napi::Array parts = info[1].As<Napi::Array>();
    uint32_t token = info[2].As<Napi::Number>().Uint32Value();
    uint32_t key = info[3].As<Napi::Number>().Uint32Value();
    bool deferred = info[4].As<Napi::Boolean>().Value();
    if (rank >= peers_.size() || peers_[rank].ep == nullptr) throw Napi::Error::New(env, "no UCX endpoint to endpoint " + std::to_string(rank));
    Peer& peer = peers_[rank];
    uint32_t count = parts.Length();
    // Most small frames go at once: their Send is kept for the next frame rather than freed.
    Send* send = spare_ != nullptr ? spare_.release() : new Send{this, 0, 0, 0, UCS_OK, {}};
    send->rank = rank;
    send->token = token;
    ucp_request_param_t params{};
    params.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    params.cb.send = OnSent;
    params.user_data = send;
    for (uint32_t i = 0; i < count; i += 1) {
      Napi::Value value = parts.Get(i);
      Napi::Uint8Array part = value.As<Napi::Uint8Array>();
      ucs_status_ptr_t request = ucp_tag_send_nbx(peer.ep, part.Data(), part.ByteLength(), TagOf(rank_, i == 0 ? count - 1 : key, i > 0 && deferred), &params);
      // Done at once, or failed (the peer's failure comes through its error handler): that part is free.
      if (request == nullptr || UCS_PTR_IS_ERR(request)) continue;
      send->pending += 1;
      send->keep.push_back(Napi::Persistent(value));
    }
    if (send->pending == 0) {
      spare_.reset(send);
      return Napi::Boolean::New(env, true);
    }
    sending_ += 1;
    return Napi::Boolean::New(env, false);
  }

  // sendOut(rank, length): sends the outbox's first `length` bytes (a whole frame) to `rank`; the
  // outbox may be reused at once.
  static Napi::Value SendOutOf(const Napi::CallbackInfo& info) {
    auto* self = static_cast<UcxWorker*>(info.Data());
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    uint32_t length = info[1].As<Napi::Number>().Uint32Value();
    if (rank >= self->peers_.size() || self->peers_[rank].ep == nullptr || length > INLINE_BYTES) {
      throw Napi::Error::New(info.Env(), "sendOut: no UCX endpoint to endpoint " + std::to_string(rank) + " or a frame of " + std::to_string(length) + " bytes");
    }
    self->SendOut(self->peers_[rank], length);
    return info.Env().Undefined();
  }

  void SendOut(Peer& peer, size_t length) {
    ucp_request_param_t params{};
    params.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    ucs_status_ptr_t request = ucp_tag_send_nbx(peer.ep, outbox_, length, TagOf(rank_, 0), &params);
    // Sent, or failed (the peer's failure comes through its error handler).
    if (request == nullptr || (UCS_PTR_IS_ERR(request) && UCS_PTR_STATUS(request) != UCS_ERR_NO_RESOURCE)) return;
    // UCX cannot send it at once: it sends a copy, which it may read later.
    auto* send = new Send{this, peer.rank, 0, 1, UCS_OK, {}, malloc(length > 0 ? length : 1)};
    memcpy(send->copy, outbox_, length);
    params.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    params.cb.send = OnSent;
    params.user_data = send;
    request = ucp_tag_send_nbx(peer.ep, send->copy, length, TagOf(rank_, 0), &params);
    if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
      sending_ += 1;
      return;
    }
    free(send->copy);
    delete send;
  }

  // progress(drain): advances the worker (once, or until it is idle), receives what arrived, and
  // writes into the inbox what completed (its first word: how many records; see RecordKind), in
  // order per peer. Returns how many events the worker processed and records it wrote (0: nothing
  // happened). What does not fit waits for the next call.
  static Napi::Value ProgressOf(const Napi::CallbackInfo& info) {
    auto* self = static_cast<UcxWorker*>(info.Data());
    bool drain = info[0].As<Napi::Boolean>().Value();
    // An integer (a small one stays a Smi), not a double, which V8 would box on every call.
    napi_value moved = nullptr;
    napi_create_uint32(info.Env(), self->worker_ == nullptr ? 0 : self->Progress(drain), &moved);
    return Napi::Value(info.Env(), moved);
  }

  uint32_t Progress(bool drain) {
    // A spinning caller polls again at once: one round, since over TCP every round is a system call
    // (epoll_wait), which a second round after a message would add to every hop; but while a large
    // message streams (through shared memory's FIFO, a fragment per round), rounds until it stalls.
    uint32_t events = drain || sending_ + receiving_ > 0 ? Drain() : Drain(1);
    uint32_t records = 0;
    if (!completions_.empty()) {
      // Swapped with a vector kept between calls, so that neither allocates once warm.
      handing_.swap(completions_);
      completions_.clear();
      // Losses last: a peer's messages that arrived before it was lost are delivered first.
      std::stable_partition(handing_.begin(), handing_.end(), [](const Completion& completion) { return completion.kind != LOST; });
      size_t at = RECORDS_AT;
      size_t handed = 0;
      for (; handed < handing_.size(); handed += 1) {
        const Completion& completion = handing_[handed];
        if (completion.kind == RECEIVED) {
          // A frame is handed over once all its parts and the frames probed before it from its peer are in.
          if (completion.rank >= peers_.size()) continue;
          Peer& peer = peers_[completion.rank];
          bool full = false;
          while (!full && FrameArrived(peer)) {
            full = !HandFrame(peer, at);
            if (!full) records += 1;
          }
          if (full) break;
          continue;
        }
        if (at + RECORD_BYTES > inbox_bytes_) break;
        WriteRecord(at, completion.kind, completion.rank, completion.kind == SENT ? completion.token : static_cast<uint32_t>(completion.status), 0);
        records += 1;
      }
      completions_.assign(handing_.begin() + handed, handing_.end());
      handing_.clear();
    }
    reinterpret_cast<uint32_t*>(inbox_)[0] = records;
    return events + records;
  }

  void WriteRecord(size_t& at, uint32_t kind, uint32_t rank, uint32_t value, uint32_t length) {
    uint32_t* words = reinterpret_cast<uint32_t*>(inbox_ + at);
    words[0] = kind;
    words[1] = rank;
    words[2] = value;
    words[3] = length;
    at += RECORD_BYTES;
  }

  // Records the first frame of `peer`'s receives: copied into the inbox when it is one small
  // message, else held for takeHeld(), or its failure. False when the inbox has no room for it.
  bool HandFrame(Peer& peer, size_t& at) {
    size_t parts = 1 + peer.receives.front()->following;
    Receive* first = peer.receives.front();
    bool inline_frame = parts == 1 && first->length <= INLINE_BYTES;
    if (at + RECORD_BYTES + (inline_frame ? Padded(first->length) : 0) > inbox_bytes_) return false;
    ucs_status_t status = UCS_OK;
    for (size_t i = 0; i < parts; i += 1) {
      if (peer.receives[i]->status != UCS_OK) status = peer.receives[i]->status;
    }
    if (status != UCS_OK) {
      WriteRecord(at, RECEIVE_FAILED, peer.rank, static_cast<uint32_t>(status), 0);
      for (size_t i = 0; i < parts; i += 1) {
        Receive* receive = peer.receives.front();
        peer.receives.pop_front();
        Release(receive);
      }
      return true;
    }
    if (!inline_frame) {
      WriteRecord(at, HELD, peer.rank, 0, 0);
      held_.emplace_back(peer.receives.begin(), peer.receives.begin() + parts);
      peer.receives.erase(peer.receives.begin(), peer.receives.begin() + parts);
      return true;
    }
    uint32_t length = static_cast<uint32_t>(first->length);
    WriteRecord(at, RECEIVED, peer.rank, 0, length);
    if (length > 0) memcpy(inbox_ + at, first->data, length);
    at += Padded(length);
    peer.receives.pop_front();
    Release(first);
    return true;
  }

  // takeHeld(): the frame of the oldest HELD record: its only part as an ArrayBuffer, or its parts
  // as an Array of them.
  Napi::Value TakeHeld(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (held_.empty()) throw Napi::Error::New(env, "takeHeld: no frame is held");
    std::vector<Receive*> parts = std::move(held_.front());
    held_.pop_front();
    Napi::Value frame;
    if (parts.size() == 1) {
      frame = TakeBuffer(env, parts[0]);
    } else {
      Napi::Array array = Napi::Array::New(env, parts.size());
      for (size_t i = 0; i < parts.size(); i += 1) {
        if (parts[i]->message == nullptr) {
          array.Set(static_cast<uint32_t>(i), TakeBuffer(env, parts[i]));
          continue;
        }
        // A deferred part: its length now, itself from receiveHeld().
        array.Set(static_cast<uint32_t>(i), Napi::Number::New(env, static_cast<double>(parts[i]->length)));
        if (awaiting_ != nullptr) Release(awaiting_);
        awaiting_ = parts[i];
        parts[i] = nullptr;
      }
      frame = array;
    }
    for (Receive* receive : parts) delete receive;
    return frame;
  }

  // arm(): calls wake() from the event loop once the worker has something to progress (one call per arm).
  Napi::Value Arm(const Napi::CallbackInfo& info) {
    if (worker_ != nullptr && !armed_) {
      armed_ = true;
      // Armed just before libuv blocks: arming often reports BUSY while the worker is active.
      uv_prepare_start(prepare_, OnPrepare);
    }
    return info.Env().Undefined();
  }

  // busy(): whether sends or receives are in flight, or completions wait for room in the inbox. Some
  // transports (shared memory) do not wake a sender whose data waits for room: while anything is in
  // flight, the worker must be polled.
  Napi::Value Busy(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), sending_ + receiving_ > 0 || !completions_.empty()); }

  // sending(): whether UCX still sends something of ours (a frame of the outbox's among them).
  Napi::Value Sending(const Napi::CallbackInfo& info) { return Napi::Boolean::New(info.Env(), sending_ > 0); }

  // expect(rank, key, buffer): the part from `rank` sent with `key` (see send()) is received straight
  // into `buffer` (a Uint8Array kept until then), if it has the buffer's length. takeHeld() then
  // gives `buffer` itself as that part.
  Napi::Value Expect(const Napi::CallbackInfo& info) {
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    uint32_t key = info[1].As<Napi::Number>().Uint32Value();
    Napi::Uint8Array buffer = info[2].As<Napi::Uint8Array>();
    if (rank >= peers_.size() || peers_[rank].ep == nullptr || key == 0) throw Napi::Error::New(info.Env(), "expect: no UCX endpoint to endpoint " + std::to_string(rank) + " or key 0");
    peers_[rank].expected[key] = Expected{Napi::Persistent(info[2]), buffer.Data(), buffer.ByteLength()};
    return info.Env().Undefined();
  }

  // lanes(rank): UCX's description of the endpoint to `rank` (ucp_ep_print_info): which transports it uses.
  Napi::Value Lanes(const Napi::CallbackInfo& info) {
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    if (rank >= peers_.size() || peers_[rank].ep == nullptr) return info.Env().Undefined();
    char* text = nullptr;
    size_t size = 0;
    FILE* stream = open_memstream(&text, &size);
    if (stream == nullptr) return info.Env().Undefined();
    ucp_ep_print_info(peers_[rank].ep, stream);
    fclose(stream);
    Napi::String result = Napi::String::New(info.Env(), text, size);
    free(text);
    return result;
  }

  // disconnect(rank): drops the endpoint to a lost peer and the receives still in flight from it.
  Napi::Value Disconnect(const Napi::CallbackInfo& info) {
    uint32_t rank = info[0].As<Napi::Number>().Uint32Value();
    if (rank < peers_.size()) CloseEndpoint(peers_[rank], UCP_EP_CLOSE_FLAG_FORCE);
    return info.Env().Undefined();
  }

  // close(): flushes and closes every endpoint (a lost one by force), then the worker and the context.
  Napi::Value Close(const Napi::CallbackInfo& info) {
    for (Peer& peer : peers_) CloseEndpoint(peer, peer.failed ? UCP_EP_CLOSE_FLAG_FORCE : 0);
    Destroy();
    // Nothing of JavaScript is left for the finalizer, which may run while Node tears the environment down.
    wake_.Reset();
    async_.reset();
    inbox_box_.Reset();
    outbox_box_.Reset();
    return info.Env().Undefined();
  }

  void CloseEndpoint(Peer& peer, uint32_t flags) {
    if (peer.ep == nullptr) return;
    for (Receive* receive : peer.receives) Abandon(receive);
    peer.receives.clear();
    peer.following = 0;
    peer.expected.clear();
    ucp_request_param_t params{};
    params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    params.flags = flags;
    ucs_status_ptr_t request = ucp_ep_close_nbx(peer.ep, &params);
    peer.ep = nullptr;
    if (request == nullptr || UCS_PTR_IS_ERR(request)) return;
    // A flush waits for the peer; bounded, then forced.
    for (int round = 0; round < 200000 && ucp_request_check_status(request) == UCS_INPROGRESS; round += 1) ucp_worker_progress(worker_);
    if (ucp_request_check_status(request) == UCS_INPROGRESS) ucp_request_cancel(worker_, request);
    ucp_request_free(request);
  }

  // Frees a receive that is done with; a deferred part never received is received and dropped (UCX holds its message until then).
  void Release(Receive* receive) {
    if (receive->message == nullptr) {
      Free(receive);
      return;
    }
    ucp_tag_message_h message = receive->message;
    receive->message = nullptr;
    receive->done = false;
    receive->orphan = true;
    receive->data = ccjs::ReceiveMemory::OfThisThread().Take(receive->length);
    ucp_request_param_t params{};
    params.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    params.cb.recv = OnReceived;
    params.user_data = receive;
    ucs_status_ptr_t request = ucp_tag_msg_recv_nbx(worker_, receive->data, receive->length, message, &params);
    if (request == nullptr || UCS_PTR_IS_ERR(request)) Free(receive);
  }

  // receiveHeld(buffer, timeoutMs): receives the deferred part of the frame takeHeld() just gave
  // (as its length) into `buffer` (a Uint8Array of that length; else new memory), progressing the
  // worker until it is in. Returns the part (`buffer` itself, or an ArrayBuffer); throws if UCX
  // fails it (its peer lost) or if it is not in within timeoutMs (its sender stopped).
  Napi::Value ReceiveHeld(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    uint32_t timeout_ms = info[1].As<Napi::Number>().Uint32Value();
    std::unique_ptr<Receive> receive(awaiting_);
    awaiting_ = nullptr;
    if (!receive) throw Napi::Error::New(env, "receiveHeld: no part waits");
    if (info[0].IsTypedArray() && info[0].As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array && info[0].As<Napi::Uint8Array>().ByteLength() == receive->length) {
      receive->data = info[0].As<Napi::Uint8Array>().Data();
      receive->buffer = Napi::Persistent(info[0]);
    } else {
      receive->data = ccjs::ReceiveMemory::OfThisThread().Take(receive->length);
    }
    ucp_tag_message_h message = receive->message;
    receive->message = nullptr;
    receive->done = false;
    receive->held = true;
    ucp_request_param_t params{};
    params.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    params.cb.recv = OnReceived;
    params.user_data = receive.get();
    ucs_status_ptr_t request = ucp_tag_msg_recv_nbx(worker_, receive->data, receive->length, message, &params);
    if (request == nullptr) {
      receive->done = true;
    } else if (UCS_PTR_IS_ERR(request)) {
      receive->done = true;
      receive->status = UCS_PTR_STATUS(request);
    } else {
      receive->request = request;
    }
    // The caller waits for this part (the frame's receive is matched): it is received now, as
    // shared memory's single copy reads a body, unless its peer is lost meanwhile. The other
    // workers of this thread are progressed too: the sender may be one of them. (What else
    // arrives meanwhile is received by the next progress().)
    // A sender stopped in the middle (shared memory's fragments need its progress) would hold this
    // thread: past timeoutMs the part is left to UCX (its callback frees it) and the peer is lost.
    const Peer& peer = peers_[receive->rank];
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    bool cancelled = false;
    for (uint32_t round = 1; !receive->done; round += 1) {
      for (UcxWorker* worker : OfThisThread()) ucp_worker_progress(worker->worker_);
      if (!cancelled && (peer.failed || peer.ep == nullptr)) {
        ucp_request_cancel(worker_, receive->request);
        cancelled = true;
      }
      if (round % 1024 == 0 && !receive->done && std::chrono::steady_clock::now() > deadline) {
        // Orphaned before the cancel, whose callback may free it at once.
        size_t length = receive->length;
        Receive* abandoned = receive.release();
        abandoned->orphan = true;
        ucp_request_cancel(worker_, abandoned->request);
        throw Napi::Error::New(env, "a message body of " + std::to_string(length) + " bytes did not arrive within " + std::to_string(timeout_ms) + " ms (its sender stopped?)");
      }
    }
    if (receive->status != UCS_OK) {
      ucs_status_t status = receive->status;
      Free(receive.release());
      throw UcxError(env, "a receive failed", status);
    }
    return TakeBuffer(env, receive.get());
  }

  // A receive whose peer is gone: freed now if done, else by its callback once UCX cancels it.
  void Abandon(Receive* receive) {
    if (receive->done) {
      Release(receive);
      return;
    }
    receive->orphan = true;
    if (receive->request != nullptr) ucp_request_cancel(worker_, receive->request);
  }

  void Destroy() {
    if (poll_ != nullptr) {
      uv_close(reinterpret_cast<uv_handle_t*>(poll_), [](uv_handle_t* handle) { delete reinterpret_cast<uv_poll_t*>(handle); });
      uv_close(reinterpret_cast<uv_handle_t*>(prepare_), [](uv_handle_t* handle) { delete reinterpret_cast<uv_prepare_t*>(handle); });
      poll_ = nullptr;
      prepare_ = nullptr;
    }
    if (worker_ != nullptr) {
      std::vector<UcxWorker*>& workers = OfThisThread();
      workers.erase(std::remove(workers.begin(), workers.end(), this), workers.end());
      // What arrived and was never asked for is received and dropped (no peer holds it any more),
      // not left to UCX's warnings.
      for (Peer& peer : peers_) peer.ep = nullptr;
      Drain();
      for (Peer& peer : peers_) {
        for (Receive* receive : peer.receives) Abandon(receive);
        peer.receives.clear();
      }
      for (std::vector<Receive*>& parts : held_) {
        for (Receive* receive : parts) Abandon(receive);
      }
      held_.clear();
      if (awaiting_ != nullptr) Abandon(awaiting_);
      awaiting_ = nullptr;
      ucp_worker_progress(worker_);
      ucp_worker_destroy(worker_);
      worker_ = nullptr;
    }
    if (context_ != nullptr) {
      ucp_cleanup(context_);
      context_ = nullptr;
    }
  }

  // Progresses until the worker is idle (at most `rounds` times), posting a receive for each message that arrived.
  unsigned Drain(int rounds = 64) {
    unsigned events = 0;
    for (int round = 0; round < rounds; round += 1) {
      unsigned now = ucp_worker_progress(worker_);
      unsigned received = ReceiveArrived();
      events += now + received;
      if (now == 0 && received == 0) break;
    }
    // Receives a lost peer will never finish are cancelled (they belong to the worker, not the
    // endpoint); what it finished before it went is still handed over, before the loss.
    for (Peer* peer : lost_) {
      for (Receive* receive : peer->receives) {
        if (!receive->done && receive->request != nullptr) ucp_request_cancel(worker_, receive->request);
      }
    }
    lost_.clear();
    return events;
  }

  unsigned ReceiveArrived() {
    unsigned count = 0;
    ucp_tag_recv_info_t info{};
    for (;;) {
      ucp_tag_message_h message = ucp_tag_probe_nb(worker_, 0, 0, 1, &info);
      if (message == nullptr) return count;
      count += 1;
      uint32_t rank = static_cast<uint32_t>(info.sender_tag) & MAX_RANK;
      uint32_t high = static_cast<uint32_t>(info.sender_tag >> HIGH_SHIFT);
      auto* receive = new Receive();
      receive->worker = this;
      receive->rank = rank;
      receive->length = info.length;
      bool known = rank < peers_.size() && peers_[rank].ep != nullptr;
      if (known) {
        Peer& peer = peers_[rank];
        if (peer.following > 0) {
          peer.following -= 1;
          if ((info.sender_tag & DEFERRED) != 0) {
            // Received once JavaScript says where (receiveHeld); it counts as arrived.
            receive->message = message;
            receive->done = true;
            peer.receives.push_back(receive);
            completions_.push_back({RECEIVED, rank, 0, UCS_OK});
            continue;
          }
          if (high != 0) TakeExpected(peer, high, receive);
        } else {
          receive->following = high;
          peer.following = high;
        }
        peer.receives.push_back(receive);
      } else {
        receive->orphan = true;  // not from a peer of ours: received and dropped
      }
      if (receive->data == nullptr) receive->data = ccjs::ReceiveMemory::OfThisThread().Take(info.length);
      ucp_request_param_t params{};
      params.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
      params.cb.recv = OnReceived;
      params.user_data = receive;
      ucs_status_ptr_t request = ucp_tag_msg_recv_nbx(worker_, receive->data, info.length, message, &params);
      if (request == nullptr) {
        Complete(receive, UCS_OK);
      } else if (UCS_PTR_IS_ERR(request)) {
        Complete(receive, UCS_PTR_STATUS(request));
      } else if (!receive->done) {
        receive->request = request;
        receive->counted = true;
        receiving_ += 1;
      }
    }
  }

  // The part `receive` goes into the buffer expected for `key`, if one of its length is (the buffer is expected once).
  static void TakeExpected(Peer& peer, uint32_t key, Receive* receive) {
    auto found = peer.expected.find(key);
    if (found == peer.expected.end()) return;
    if (found->second.length == receive->length) {
      receive->data = found->second.data;
      receive->buffer = std::move(found->second.buffer);
    }
    peer.expected.erase(found);
  }

  // A receive finished (not in a callback's stack when called from ReceiveArrived).
  void Complete(Receive* receive, ucs_status_t status) {
    if (receive->counted) receiving_ -= 1;
    receive->counted = false;
    if (receive->orphan) {
      Release(receive);
      return;
    }
    receive->done = true;
    receive->status = status;
    receive->request = nullptr;
    if (!receive->held) completions_.push_back({RECEIVED, receive->rank, 0, status});
  }

  // Whether the first frame of `peer`'s receives has all its parts.
  static bool FrameArrived(const Peer& peer) {
    if (peer.receives.empty()) return false;
    size_t parts = 1 + peer.receives.front()->following;
    if (peer.receives.size() < parts) return false;
    for (size_t i = 0; i < parts; i += 1) {
      if (!peer.receives[i]->done) return false;
    }
    return true;
  }

  // The data of a received part as an ArrayBuffer (or the Uint8Array it was expected in); `receive` no longer owns it.
  Napi::Value TakeBuffer(Napi::Env env, Receive* receive) {
    if (!receive->buffer.IsEmpty()) {
      Napi::Value buffer = receive->buffer.Value();
      receive->buffer.Reset();
      return buffer;
    }
    if (receive->length <= COPY_OUT_BYTES) {
      Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(env, receive->length);
      if (receive->length > 0) memcpy(buffer.Data(), receive->data, receive->length);
      ccjs::ReceiveMemory::OfThisThread().Give(receive->data, receive->length);
      return buffer;
    }
    return ccjs::HandOver(env, receive->data, receive->length);
  }

  static void OnReceived(void* request, ucs_status_t status, const ucp_tag_recv_info_t*, void* user_data) {
    auto* receive = static_cast<Receive*>(user_data);
    receive->worker->Complete(receive, status);
    ucp_request_free(request);
  }

  static void OnSent(void* request, ucs_status_t status, void* user_data) {
    auto* send = static_cast<Send*>(user_data);
    ucp_request_free(request);
    if (status != UCS_OK) send->status = status;
    if (--send->pending > 0) return;
    send->worker->sending_ -= 1;
    if (send->copy != nullptr) free(send->copy);
    else send->worker->completions_.push_back({SENT, send->rank, send->token, send->status});
    // UCX calls back from inside ucp_worker_progress, which only the JavaScript thread calls: the references may go.
    delete send;
  }

  static void OnPeerError(void* arg, ucp_ep_h, ucs_status_t status) {
    auto* peer = static_cast<Peer*>(arg);
    if (peer->failed) return;
    peer->failed = true;
    peer->worker->lost_.push_back(peer);
    peer->worker->completions_.push_back({LOST, peer->rank, 0, status});
  }

  static void OnPrepare(uv_prepare_t* handle) {
    auto* self = static_cast<UcxWorker*>(handle->data);
    uv_prepare_stop(handle);
    for (int attempt = 0; attempt < 8; attempt += 1) {
      self->Drain();
      ucp_tag_recv_info_t info{};
      bool waiting = !self->completions_.empty() || ucp_tag_probe_nb(self->worker_, 0, 0, 0, &info) != nullptr;
      if (waiting) break;
      ucs_status_t status = ucp_worker_arm(self->worker_);
      if (status == UCS_OK) {
        uv_poll_start(self->poll_, UV_READABLE, OnReadable);
        return;
      }
      if (status != UCS_ERR_BUSY) break;
    }
    self->Wake();
  }

  static void OnReadable(uv_poll_t* handle, int, int) {
    auto* self = static_cast<UcxWorker*>(handle->data);
    uv_poll_stop(handle);
    self->Wake();
  }

  void Wake() {
    armed_ = false;
    if (wake_.IsEmpty()) return;
    Napi::Env env = Env();
    Napi::HandleScope scope(env);
    wake_.MakeCallback(Value(), {}, *async_);
  }

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  uv_poll_t* poll_ = nullptr;
  uv_prepare_t* prepare_ = nullptr;
  bool armed_ = false;
  // Sends and receives UCX has not finished.
  size_t sending_ = 0;
  size_t receiving_ = 0;
  Napi::FunctionReference wake_;
  std::unique_ptr<Napi::AsyncContext> async_;
  uint32_t rank_ = 0;
  // A deque: peers added later leave the addresses of earlier ones (their error handlers' argument) valid.
  std::deque<Peer> peers_;
  std::vector<Peer*> lost_;
  std::vector<Completion> completions_;
  // The completions being handed over by progress().
  std::vector<Completion> handing_;
  // The parts of frames recorded as HELD, oldest first.
  std::deque<std::vector<Receive*>> held_;
  uint8_t* inbox_ = nullptr;
  size_t inbox_bytes_ = 0;
  void* outbox_ = nullptr;
  // The inbox and the outbox, kept alive while the worker writes and reads them.
  Napi::Reference<Napi::ArrayBuffer> inbox_box_;
  Napi::Reference<Napi::ArrayBuffer> outbox_box_;
  // A Send whose frame went at once, for the next one.
  std::unique_ptr<Send> spare_;
  // The deferred part of the frame takeHeld() gave last, until receiveHeld() takes it.
  Receive* awaiting_ = nullptr;
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
