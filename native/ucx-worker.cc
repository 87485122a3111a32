// The UCX worker of the UCX addon (ucx-worker.h says how frames travel).
#include "ucx-worker.h"

#include "receive-memory.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ccjs::ucx {

namespace {

size_t Padded(size_t bytes) { return (bytes + 7) & ~static_cast<size_t>(7); }

// The tag: the sender's rank in the low 31 bits, then the deferred flag; in the high 32, on a
// frame's first part how many parts follow it, on a part that follows the key (0: none) of the
// buffer expected for it.
constexpr int HIGH_SHIFT = 32;
constexpr ucp_tag_t DEFERRED = ucp_tag_t{1} << 31;
ucp_tag_t TagOf(uint32_t rank, uint32_t high, bool deferred = false) {
  return static_cast<ucp_tag_t>(rank) | (static_cast<ucp_tag_t>(high) << HIGH_SHIFT) | (deferred ? DEFERRED : 0);
}

Failure UcxFailure(const std::string& what, ucs_status_t status) { return Failure(what + ": " + ucs_status_string(status)); }

}  // namespace

Worker::Worker(uint32_t rank, uint8_t* inbox, size_t inbox_bytes, void* outbox, uv_loop_t* loop, std::function<void()> wake,
               const std::vector<std::pair<std::string, std::string>>& settings)
    : wake_(std::move(wake)), rank_(rank), inbox_(inbox), inbox_bytes_(inbox_bytes), outbox_(outbox) {
  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) throw UcxFailure("ucp_config_read", status);
  for (const auto& [name, value] : settings) {
    status = ucp_config_modify(config, name.c_str(), value.c_str());
    if (status != UCS_OK) {
      ucp_config_release(config);
      throw UcxFailure("ucp_config_modify " + name + "=" + value, status);
    }
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP;
  status = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  if (status != UCS_OK) throw UcxFailure("ucp_init", status);
  ucp_worker_params_t worker_params{};
  worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
  status = ucp_worker_create(context_, &worker_params, &worker_);
  if (status != UCS_OK) {
    ucp_cleanup(context_);
    context_ = nullptr;
    throw UcxFailure("ucp_worker_create", status);
  }
  int fd = -1;
  status = ucp_worker_get_efd(worker_, &fd);
  if (status != UCS_OK) {
    Destroy();
    throw UcxFailure("ucp_worker_get_efd", status);
  }
  poll_ = new uv_poll_t;
  prepare_ = new uv_prepare_t;
  uv_poll_init(loop, poll_, fd);
  uv_prepare_init(loop, prepare_);
  poll_->data = prepare_->data = this;
  // The doorbell never keeps the process alive by itself (the job's control connection does).
  uv_unref(reinterpret_cast<uv_handle_t*>(poll_));
  uv_unref(reinterpret_cast<uv_handle_t*>(prepare_));
  OfThisThread().push_back(this);
}

Worker::~Worker() { Destroy(); }

std::vector<Worker*>& Worker::OfThisThread() {
  static thread_local std::vector<Worker*> workers;
  return workers;
}

std::vector<uint8_t> Worker::Address() {
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS;
  ucs_status_t status = ucp_worker_query(worker_, &attr);
  if (status != UCS_OK) throw UcxFailure("ucp_worker_query", status);
  const auto* bytes = reinterpret_cast<const uint8_t*>(attr.address);
  std::vector<uint8_t> copy(bytes, bytes + attr.address_length);
  ucp_worker_release_address(worker_, attr.address);
  return copy;
}

void Worker::Connect(uint32_t rank, const void* address) {
  if (peers_.size() <= rank) peers_.resize(rank + 1);
  Peer& peer = peers_[rank];
  peer.worker = this;
  peer.rank = rank;
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = static_cast<const ucp_address_t*>(address);
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = OnPeerError;
  params.err_handler.arg = &peer;
  ucs_status_t status = ucp_ep_create(worker_, &params, &peer.ep);
  if (status != UCS_OK) throw UcxFailure("ucp_ep_create to endpoint " + std::to_string(rank), status);
}

bool Worker::Connected(uint32_t rank) const { return rank < peers_.size() && peers_[rank].ep != nullptr; }

bool Worker::Send(uint32_t rank, const std::vector<Outgoing>& parts, uint32_t token, uint32_t key, bool deferred,
                  const std::function<std::unique_ptr<Pin>(uint32_t part)>& pin) {
  Peer& peer = peers_[rank];
  uint32_t count = static_cast<uint32_t>(parts.size());
  // Most small frames go at once: their InFlight is kept for the next frame rather than freed.
  InFlight* send = spare_ != nullptr ? spare_.release() : new InFlight{this, 0, 0, 0, UCS_OK, {}};
  send->rank = rank;
  send->token = token;
  ucp_request_param_t params{};
  params.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  params.cb.send = OnSent;
  params.user_data = send;
  for (uint32_t i = 0; i < count; i += 1) {
    ucs_status_ptr_t request = ucp_tag_send_nbx(peer.ep, parts[i].data, parts[i].length, TagOf(rank_, i == 0 ? count - 1 : key, i > 0 && deferred), &params);
    // Done at once, or failed (the peer's failure comes through its error handler): that part is free.
    if (request == nullptr || UCS_PTR_IS_ERR(request)) continue;
    send->pending += 1;
    send->keep.push_back(pin(i));
  }
  if (send->pending == 0) {
    spare_.reset(send);
    return true;
  }
  sending_ += 1;
  return false;
}

void Worker::SendOut(uint32_t rank, size_t length) {
  Peer& peer = peers_[rank];
  ucp_request_param_t params{};
  params.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
  ucs_status_ptr_t request = ucp_tag_send_nbx(peer.ep, outbox_, length, TagOf(rank_, 0), &params);
  // Sent, or failed (the peer's failure comes through its error handler).
  if (request == nullptr || (UCS_PTR_IS_ERR(request) && UCS_PTR_STATUS(request) != UCS_ERR_NO_RESOURCE)) return;
  // UCX cannot send it at once: it sends a copy, which it may read later.
  auto* send = new InFlight{this, peer.rank, 0, 1, UCS_OK, {}, malloc(length > 0 ? length : 1)};
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

uint32_t Worker::Progress(bool drain) {
  if (worker_ == nullptr) return 0;
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

void Worker::WriteRecord(size_t& at, uint32_t kind, uint32_t rank, uint32_t value, uint32_t length) {
  uint32_t* words = reinterpret_cast<uint32_t*>(inbox_ + at);
  words[0] = kind;
  words[1] = rank;
  words[2] = value;
  words[3] = length;
  at += RECORD_BYTES;
}

// Records the first frame of `peer`'s receives: copied into the inbox when it is one small
// message, else held for TakeHeld(), or its failure. False when the inbox has no room for it.
bool Worker::HandFrame(Peer& peer, size_t& at) {
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

bool Worker::HasHeld() const { return !held_.empty(); }

std::vector<Part> Worker::TakeHeld() {
  std::vector<Receive*> receives = std::move(held_.front());
  held_.pop_front();
  std::vector<Part> parts(receives.size());
  for (size_t i = 0; i < receives.size(); i += 1) {
    if (receives[i]->message == nullptr) {
      parts[i] = TakePart(receives[i]);
      delete receives[i];
      continue;
    }
    // A deferred part: its length now, itself from ReceiveHeld().
    parts[i].length = receives[i]->length;
    parts[i].deferred = true;
    if (awaiting_ != nullptr) Release(awaiting_);
    awaiting_ = receives[i];
  }
  return parts;
}

void Worker::Arm() {
  if (worker_ != nullptr && !armed_) {
    armed_ = true;
    // Armed just before libuv blocks: arming often reports BUSY while the worker is active.
    uv_prepare_start(prepare_, OnPrepare);
  }
}

bool Worker::Busy() const { return sending_ + receiving_ > 0 || !completions_.empty(); }

bool Worker::Sending() const { return sending_ > 0; }

void Worker::Expect(uint32_t rank, uint32_t key, void* data, size_t length, std::unique_ptr<Pin> pin) {
  peers_[rank].expected[key] = Expected{std::move(pin), data, length};
}

std::optional<std::string> Worker::Lanes(uint32_t rank) const {
  if (!Connected(rank)) return std::nullopt;
  char* text = nullptr;
  size_t size = 0;
  FILE* stream = open_memstream(&text, &size);
  if (stream == nullptr) return std::nullopt;
  ucp_ep_print_info(peers_[rank].ep, stream);
  fclose(stream);
  std::string lanes(text, size);
  free(text);
  return lanes;
}

void Worker::Disconnect(uint32_t rank) {
  if (rank < peers_.size()) CloseEndpoint(peers_[rank], UCP_EP_CLOSE_FLAG_FORCE);
}

void Worker::Close() {
  for (Peer& peer : peers_) CloseEndpoint(peer, peer.failed ? UCP_EP_CLOSE_FLAG_FORCE : 0);
  Destroy();
}

void Worker::CloseEndpoint(Peer& peer, uint32_t flags) {
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

// Gives a receive's memory back (ReceiveMemory's) or lets go of the caller's buffer, and frees it.
void Worker::Free(Receive* receive) {
  if (receive->data != nullptr && receive->pin == nullptr) ccjs::ReceiveMemory::Shared().Give(receive->data, receive->length);
  delete receive;
}

// Frees a receive that is done with; a deferred part never received is received and dropped (UCX holds its message until then).
void Worker::Release(Receive* receive) {
  if (receive->message == nullptr) {
    Free(receive);
    return;
  }
  ucp_tag_message_h message = receive->message;
  receive->message = nullptr;
  receive->done = false;
  receive->orphan = true;
  receive->data = ccjs::ReceiveMemory::Shared().Take(receive->length);
  ucp_request_param_t params{};
  params.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  params.cb.recv = OnReceived;
  params.user_data = receive;
  ucs_status_ptr_t request = ucp_tag_msg_recv_nbx(worker_, receive->data, receive->length, message, &params);
  if (request == nullptr || UCS_PTR_IS_ERR(request)) Free(receive);
}

std::optional<size_t> Worker::AwaitedLength() const {
  if (awaiting_ == nullptr) return std::nullopt;
  return awaiting_->length;
}

Part Worker::ReceiveHeld(void* data, std::unique_ptr<Pin> pin, uint32_t timeout_ms) {
  std::unique_ptr<Receive> receive(awaiting_);
  awaiting_ = nullptr;
  if (data != nullptr) {
    receive->data = data;
    receive->pin = std::move(pin);
  } else {
    receive->data = ccjs::ReceiveMemory::Shared().Take(receive->length);
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
  // arrives meanwhile is received by the next Progress().)
  // A sender stopped in the middle (shared memory's fragments need its progress) would hold this
  // thread: past timeout_ms the part is left to UCX (its callback frees it) and the peer is lost.
  const Peer& peer = peers_[receive->rank];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool cancelled = false;
  for (uint32_t round = 1; !receive->done; round += 1) {
    for (Worker* worker : OfThisThread()) ucp_worker_progress(worker->worker_);
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
      throw Failure("a message body of " + std::to_string(length) + " bytes did not arrive within " + std::to_string(timeout_ms) + " ms (its sender stopped?)");
    }
  }
  if (receive->status != UCS_OK) {
    ucs_status_t status = receive->status;
    Free(receive.release());
    throw UcxFailure("a receive failed", status);
  }
  return TakePart(receive.get());
}

// The data of a received part, which `receive` no longer owns.
Part Worker::TakePart(Receive* receive) {
  Part part;
  part.data = receive->data;
  part.length = receive->length;
  part.pin = std::move(receive->pin);
  receive->data = nullptr;
  return part;
}

// A receive whose peer is gone: freed now if done, else by its callback once UCX cancels it.
void Worker::Abandon(Receive* receive) {
  if (receive->done) {
    Release(receive);
    return;
  }
  receive->orphan = true;
  if (receive->request != nullptr) ucp_request_cancel(worker_, receive->request);
}

void Worker::Destroy() {
  if (poll_ != nullptr) {
    uv_close(reinterpret_cast<uv_handle_t*>(poll_), [](uv_handle_t* handle) { delete reinterpret_cast<uv_poll_t*>(handle); });
    uv_close(reinterpret_cast<uv_handle_t*>(prepare_), [](uv_handle_t* handle) { delete reinterpret_cast<uv_prepare_t*>(handle); });
    poll_ = nullptr;
    prepare_ = nullptr;
  }
  if (worker_ != nullptr) {
    std::vector<Worker*>& workers = OfThisThread();
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
unsigned Worker::Drain(int rounds) {
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

unsigned Worker::ReceiveArrived() {
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
    if (Connected(rank)) {
      Peer& peer = peers_[rank];
      if (peer.following > 0) {
        peer.following -= 1;
        if ((info.sender_tag & DEFERRED) != 0) {
          // Received once the caller says where (ReceiveHeld); it counts as arrived.
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
    if (receive->data == nullptr) receive->data = ccjs::ReceiveMemory::Shared().Take(info.length);
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
void Worker::TakeExpected(Peer& peer, uint32_t key, Receive* receive) {
  auto found = peer.expected.find(key);
  if (found == peer.expected.end()) return;
  if (found->second.length == receive->length) {
    receive->data = found->second.data;
    receive->pin = std::move(found->second.pin);
  }
  peer.expected.erase(found);
}

// A receive finished (not in a callback's stack when called from ReceiveArrived).
void Worker::Complete(Receive* receive, ucs_status_t status) {
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
bool Worker::FrameArrived(const Peer& peer) {
  if (peer.receives.empty()) return false;
  size_t parts = 1 + peer.receives.front()->following;
  if (peer.receives.size() < parts) return false;
  for (size_t i = 0; i < parts; i += 1) {
    if (!peer.receives[i]->done) return false;
  }
  return true;
}

void Worker::OnReceived(void* request, ucs_status_t status, const ucp_tag_recv_info_t*, void* user_data) {
  auto* receive = static_cast<Receive*>(user_data);
  receive->worker->Complete(receive, status);
  ucp_request_free(request);
}

void Worker::OnSent(void* request, ucs_status_t status, void* user_data) {
  auto* send = static_cast<InFlight*>(user_data);
  ucp_request_free(request);
  if (status != UCS_OK) send->status = status;
  if (--send->pending > 0) return;
  send->worker->sending_ -= 1;
  if (send->copy != nullptr) free(send->copy);
  else send->worker->completions_.push_back({SENT, send->rank, send->token, send->status});
  // UCX calls back from inside ucp_worker_progress, which only the caller's thread calls: the pins may go.
  delete send;
}

void Worker::OnPeerError(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* peer = static_cast<Peer*>(arg);
  if (peer->failed) return;
  peer->failed = true;
  peer->worker->lost_.push_back(peer);
  peer->worker->completions_.push_back({LOST, peer->rank, 0, status});
}

void Worker::OnPrepare(uv_prepare_t* handle) {
  auto* self = static_cast<Worker*>(handle->data);
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

void Worker::OnReadable(uv_poll_t* handle, int, int) {
  auto* self = static_cast<Worker*>(handle->data);
  uv_poll_stop(handle);
  self->Wake();
}

void Worker::Wake() {
  armed_ = false;
  wake_();
}

}  // namespace ccjs::ucx
