// The UCX side of the UCX addon: one UCP context and worker moving whole frames between endpoints
// as UCP tagged messages, with nothing of N-API in it (native/ucx.cc binds it to JavaScript).
// Matching, ordering and the protocols of ccjs stay in its engine; UCX chooses the wire protocol of
// each message (eager or rendezvous, zero-copy where it can) and the transport (InfiniBand, RoCE,
// shared memory, TCP).
//
// The caller is never called from inside a UCX callback (they only record what completed, and UCX
// aborts on re-entrant progress): Progress() writes what completed since the last call into the
// inbox, and the doorbell (the worker's event fd, watched by libuv) calls wake() only from libuv.
//
// Small frames are copied both ways: the caller writes one into the outbox and calls SendOut(), and
// a received one is copied into the inbox, where the caller reads it.
//
// A frame given as several parts (a header and large bodies) goes as one contiguous message per
// part, so that UCX can move each body without copying it (its rendezvous protocols are zero-copy
// only for contiguous data). The tag says who sent a message and, on a frame's first part, how
// many parts follow: the receiver hands the parts over together. UCX matches one sender's
// messages in the order they were sent, so the parts that follow a first part are its own.
//
// The body of a message that a receive waits for with a buffer of its own (receive's `into`) is
// received straight into that buffer. For a message the receiver cleared (rendezvous), the engine
// names the buffer by the frame's id before it clears it (Expect()), and the sender puts that id in
// the tag of the part. A message sent without asking (a binary point-to-point one the peer may
// read from the sender's memory) is marked "deferred" by its sender: its body is left in UCX's
// hands until the caller, having read the frame's header, says where it goes (ReceiveHeld()).
#pragma once

#include <ucp/api/ucp.h>
#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ccjs::ucx {

// The kinds of the inbox's records (transport/ucx/native.ts).
enum RecordKind : uint32_t { RECEIVED = 1, SENT = 2, LOST = 3, HELD = 4, RECEIVE_FAILED = 5 };

// Frames of one message up to this size travel through the inbox and the outbox; larger ones are held for TakeHeld().
constexpr size_t INLINE_BYTES = 4096;
// The inbox: a count of records, then the records, each four words (kind, rank, value, length) and,
// for RECEIVED, a frame of `length` bytes padded to 8.
constexpr size_t RECORDS_AT = 8;
constexpr size_t RECORD_BYTES = 16;
// Ranks fit in the tag's low 31 bits.
constexpr uint32_t MAX_RANK = 0x7fffffff;

// Keeps memory of the caller's (a JavaScript buffer) alive while UCX may use it; the worker drops it
// once UCX is done with that memory, or hands it back with the part received into it.
class Pin {
 public:
  virtual ~Pin() = default;
};

// Why a call failed, in the words the caller is told: a UCX call and its status, or a body that did not arrive.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A part of a frame to send: memory UCX reads until the send is done with it.
struct Outgoing {
  const void* data;
  size_t length;
};

// A received part handed over by TakeHeld() or ReceiveHeld(): in the caller's memory (`pin` set),
// in ReceiveMemory's (the taker gives it back), or, `deferred`, not received yet (its length only;
// ReceiveHeld() receives it).
struct Part {
  void* data = nullptr;
  size_t length = 0;
  std::unique_ptr<Pin> pin;
  bool deferred = false;
};

class Worker {
 public:
  // `rank` (at most MAX_RANK) tags what this worker sends; the inbox (at least RECORDS_AT +
  // RECORD_BYTES + INLINE_BYTES bytes) and the outbox (at least INLINE_BYTES) are the caller's and
  // outlive the worker's use of them (until Close()); wake() is called from `loop` when the worker has
  // something to progress (after Arm()). `settings` (UCX's names without "UCX_", e.g. NET_DEVICES)
  // override UCX's configuration for this worker's context. Throws Failure if UCX cannot be set up.
  Worker(uint32_t rank, uint8_t* inbox, size_t inbox_bytes, void* outbox, uv_loop_t* loop, std::function<void()> wake,
         const std::vector<std::pair<std::string, std::string>>& settings);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // This worker's address, for peers to connect to.
  std::vector<uint8_t> Address();
  // An endpoint to the peer `rank`, which reports its failure (UCP_ERR_HANDLING_MODE_PEER).
  void Connect(uint32_t rank, const void* address);
  // Whether there is an endpoint to `rank`.
  bool Connected(uint32_t rank) const;

  // Sends the parts of one frame to `rank` (Connected), each as a contiguous message, those after
  // the first with `key` (0: none; see Expect()) or, `deferred`, to be received where ReceiveHeld()
  // says. pin(i) is asked for each part UCX reads later. True when UCX is done with them at once;
  // otherwise Progress() reports [SENT, rank, token] once they may all be reused.
  bool Send(uint32_t rank, const std::vector<Outgoing>& parts, uint32_t token, uint32_t key, bool deferred,
            const std::function<std::unique_ptr<Pin>(uint32_t part)>& pin);
  // Sends the outbox's first `length` bytes (a whole frame, at most INLINE_BYTES) to `rank`
  // (Connected); the outbox may be reused at once.
  void SendOut(uint32_t rank, size_t length);

  // Advances the worker (once, or until it is idle when `drain`), receives what arrived, and writes
  // into the inbox what completed (its first word: how many records; see RecordKind), in order per
  // peer. Returns how many events the worker processed and records it wrote (0: nothing happened,
  // or the worker is closed). What does not fit waits for the next call.
  uint32_t Progress(bool drain);

  // Whether a frame recorded as HELD waits for TakeHeld().
  bool HasHeld() const;
  // The parts of the oldest HELD frame (HasHeld()). A deferred part waits for ReceiveHeld().
  std::vector<Part> TakeHeld();

  // The part from `rank` (Connected) sent with `key` (not 0) is received straight into `data` (the
  // caller's, kept by `pin` until then) if it has that length; TakeHeld() then gives it in `pin`.
  void Expect(uint32_t rank, uint32_t key, void* data, size_t length, std::unique_ptr<Pin> pin);

  // The length of the deferred part TakeHeld() gave last, until ReceiveHeld() takes it.
  std::optional<size_t> AwaitedLength() const;
  // Receives that part (AwaitedLength()) into `data` (the caller's, of its length, kept by `pin`;
  // null: new memory), progressing the workers of this thread until it is in. Throws Failure if UCX
  // fails it (its peer lost) or if it is not in within `timeout_ms` (its sender stopped: UCX keeps
  // the part and lets it go once done).
  Part ReceiveHeld(void* data, std::unique_ptr<Pin> pin, uint32_t timeout_ms);

  // Has wake() called from the event loop once the worker has something to progress (one call per arm).
  void Arm();
  // Whether sends or receives are in flight, or completions wait for room in the inbox. Some
  // transports (shared memory) do not wake a sender whose data waits for room: while anything is in
  // flight, the worker must be polled.
  bool Busy() const;
  // Whether UCX still sends something of ours (a frame of the outbox's among them).
  bool Sending() const;
  // UCX's description of the endpoint to `rank` (ucp_ep_print_info): which transports it uses.
  std::optional<std::string> Lanes(uint32_t rank) const;

  // Drops the endpoint to a lost peer and the receives still in flight from it.
  void Disconnect(uint32_t rank);
  // Flushes and closes every endpoint (a lost one by force), then the worker and the context.
  void Close();

 private:
  // A buffer of the caller's that a part is expected to be received into (Expect()).
  struct Expected {
    std::unique_ptr<Pin> pin;
    void* data;
    size_t length;
  };

  struct Receive {
    Worker* worker = nullptr;
    uint32_t rank = 0;
    void* data = nullptr;
    size_t length = 0;
    void* request = nullptr;
    // On a frame's first part: how many parts follow it (they are the next receives of its peer).
    uint32_t following = 0;
    bool done = false;
    // Nobody waits for it any more (its peer was lost, or ReceiveHeld() gave it up): the callback frees it.
    bool orphan = false;
    // Counted in the worker's operations in flight.
    bool counted = false;
    ucs_status_t status = UCS_OK;
    // When `data` is the caller's buffer (an expected part), what keeps it; else `data` is ReceiveMemory's.
    std::unique_ptr<Pin> pin;
    // A deferred part not received yet (data is null): its message, for ReceiveHeld().
    ucp_tag_message_h message = nullptr;
    // Received by ReceiveHeld(), which waits for it itself: its completion is no record.
    bool held = false;
  };

  // A frame's parts in flight, reported as sent once UCX is done with every one.
  struct InFlight {
    Worker* worker;
    uint32_t rank;
    uint32_t token;
    uint32_t pending = 0;
    ucs_status_t status = UCS_OK;
    // The caller's parts, kept while UCX may read them.
    std::vector<std::unique_ptr<Pin>> keep;
    // Or a copy of the outbox's frame, which the caller is not told about.
    void* copy = nullptr;
  };

  struct Peer {
    Worker* worker = nullptr;
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

  // The workers of this thread (those not destroyed yet).
  static std::vector<Worker*>& OfThisThread();

  void WriteRecord(size_t& at, uint32_t kind, uint32_t rank, uint32_t value, uint32_t length);
  bool HandFrame(Peer& peer, size_t& at);
  void CloseEndpoint(Peer& peer, uint32_t flags);
  void Release(Receive* receive);
  void Abandon(Receive* receive);
  void Destroy();
  unsigned Drain(int rounds = 64);
  unsigned ReceiveArrived();
  void Complete(Receive* receive, ucs_status_t status);
  void Wake();
  static void Free(Receive* receive);
  static Part TakePart(Receive* receive);
  static void TakeExpected(Peer& peer, uint32_t key, Receive* receive);
  static bool FrameArrived(const Peer& peer);
  static void OnReceived(void* request, ucs_status_t status, const ucp_tag_recv_info_t*, void* user_data);
  static void OnSent(void* request, ucs_status_t status, void* user_data);
  static void OnPeerError(void* arg, ucp_ep_h, ucs_status_t status);
  static void OnPrepare(uv_prepare_t* handle);
  static void OnReadable(uv_poll_t* handle, int, int);

  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  uv_poll_t* poll_ = nullptr;
  uv_prepare_t* prepare_ = nullptr;
  bool armed_ = false;
  std::function<void()> wake_;
  // Sends and receives UCX has not finished.
  size_t sending_ = 0;
  size_t receiving_ = 0;
  uint32_t rank_ = 0;
  // A deque: peers added later leave the addresses of earlier ones (their error handlers' argument) valid.
  std::deque<Peer> peers_;
  std::vector<Peer*> lost_;
  std::vector<Completion> completions_;
  // The completions being handed over by Progress().
  std::vector<Completion> handing_;
  // The parts of frames recorded as HELD, oldest first.
  std::deque<std::vector<Receive*>> held_;
  uint8_t* inbox_ = nullptr;
  size_t inbox_bytes_ = 0;
  void* outbox_ = nullptr;
  // An InFlight whose frame went at once, for the next one.
  std::unique_ptr<InFlight> spare_;
  // The deferred part of the frame TakeHeld() gave last, until ReceiveHeld() takes it.
  Receive* awaiting_ = nullptr;
};

}  // namespace ccjs::ucx
