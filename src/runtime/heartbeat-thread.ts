/**
 * The heartbeat thread of one process (started by src/runtime/heartbeat.ts): it beats and listens in a
 * worker thread of its own, so a main thread that computes is never taken for a lost one, while a
 * stopped, hung or cut-off process is. Process 0's thread serves: every other process's thread
 * connects to it. Each side beats every `periodMs` and declares the other lost once nothing was
 * heard from it for `timeoutMs`, or its connection closed without a goodbye; the server then tells
 * every other process's thread. Each thread tells the endpoints of its process on its
 * BroadcastChannel.
 *
 * Connections authenticate first, with the job secret, as every connection of a job does.
 * The wire: lines of ASCII. Client to server: `hello <processRank>`, then `beat` and at last
 * `bye`. Server to client: `beat`, `lost <processRank> <reason>`, `bye`.
 */
import net from 'node:net';
import { BroadcastChannel, parentPort, workerData } from 'node:worker_threads';
import type { HeartbeatSettings, LossNotice, ThreadOrder, ThreadReport } from './heartbeat.js';
import { Gatekeeper, authenticate, handshakeDeadline } from '../security/handshake.js';

/** Longest line accepted: a peer that sends more is not one of ours. */
const MAX_LINE = 1024;
/** How often silence is checked: a loss is declared at most this much after timeoutMs of it. */
const WATCH_MS = 50;
/** How long a client waits, once the server's connection closed, before declaring process 0 lost. */
const CLOSE_GRACE_MS = 250;

const settings = workerData as HeartbeatSettings;
const secret = Buffer.from(settings.secret, 'hex');
/** Heartbeat threads a server holds unauthenticated at once (a flood drops the oldest). */
const MAX_UNAUTHENTICATED = 64;
const channel = new BroadcastChannel(settings.channel);
const declared = new Set<number>();

function report(message: ThreadReport): void {
  parentPort?.postMessage(message);
}

/** Tells the endpoints of this process that `processRank` was lost (once). */
function declareLost(processRank: number, reason: string): void {
  if (declared.has(processRank)) return;
  declared.add(processRank);
  channel.postMessage({ processRank, reason } satisfies LossNotice);
}

/** Calls `onLine` for each line `socket` brings; a peer sending overlong lines is cut off. */
function readLines(socket: net.Socket, onLine: (line: string) => void): void {
  let pending = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    pending += chunk;
    let end = pending.indexOf('\n');
    while (end >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      onLine(line);
      end = pending.indexOf('\n');
    }
    if (pending.length > MAX_LINE) socket.destroy();
  });
}

function send(socket: net.Socket, line: string): void {
  if (!socket.destroyed && !socket.writableEnded) socket.write(`${line}\n`);
}

interface Client {
  readonly socket: net.Socket;
  lastHeard: number;
}

/** Process 0: accepts every other process's heartbeat thread. */
function serve(): void {
  const clients = new Map<number, Client>();
  /** Processes whose heartbeat thread has not connected yet, with the time since when it should have. */
  const expected = new Map<number, number>();
  const gatekeeper = new Gatekeeper({ what: 'the heartbeat server', secret, deadlineMs: handshakeDeadline(settings.timeoutMs), maxPending: MAX_UNAUTHENTICATED, admit: (socket) => accept(socket) });
  const server = net.createServer({ noDelay: true }, (socket) => gatekeeper.accept(socket));
  server.on('error', (error) => report({ type: 'failed', message: `the heartbeat server cannot listen on ${settings.host}: ${error.message}` }));
  server.listen(0, settings.host, () => report({ type: 'listening', port: (server.address() as net.AddressInfo).port }));

  let stopped = false;
  const lose = (processRank: number, reason: string) => {
    if (stopped) return;
    const client = clients.get(processRank);
    clients.delete(processRank);
    expected.delete(processRank);
    // A process declared lost is cut off: should it wake up, it finds itself alone.
    client?.socket.destroy();
    for (const other of clients.values()) send(other.socket, `lost ${processRank} ${reason}`);
    declareLost(processRank, reason);
  };

  function accept(socket: net.Socket): void {
    socket.on('error', () => {});
    let processRank: number | undefined;
    let saidBye = false;
    readLines(socket, (line) => {
      if (processRank === undefined) {
        const claimed = /^hello (\d+)$/.exec(line);
        const rank = claimed ? Number(claimed[1]) : -1;
        if (rank < 1 || rank >= settings.processCount || clients.has(rank) || declared.has(rank)) {
          socket.destroy();
          return;
        }
        processRank = rank;
        expected.delete(rank);
        clients.set(rank, { socket, lastHeard: Date.now() });
        return;
      }
      const client = clients.get(processRank);
      if (client === undefined) return;
      if (line === 'beat') client.lastHeard = Date.now();
      else if (line === 'bye') {
        saidBye = true;
        clients.delete(processRank);
        socket.end();
      }
    });
    socket.on('close', () => {
      if (processRank !== undefined && !saidBye && clients.get(processRank)?.socket === socket) lose(processRank, 'its heartbeat connection closed without close()');
    });
  }

  const beat = setInterval(() => {
    for (const client of clients.values()) send(client.socket, 'beat');
  }, settings.periodMs);
  const watch = setInterval(() => {
    const now = Date.now();
    for (const [processRank, client] of [...clients]) if (now - client.lastHeard > settings.timeoutMs) lose(processRank, `no heartbeat from it for ${settings.timeoutMs} ms`);
    for (const [processRank, since] of [...expected]) if (now - since > settings.timeoutMs) lose(processRank, `its heartbeat thread did not connect within ${settings.timeoutMs} ms`);
  }, WATCH_MS);

  parentPort?.on('message', (order: ThreadOrder) => {
    if (order === 'world') {
      // Every process has the world now, and connects at once: one that does not is lost.
      const now = Date.now();
      for (let processRank = 1; processRank < settings.processCount; processRank += 1) {
        if (!clients.has(processRank) && !declared.has(processRank)) expected.set(processRank, now);
      }
      return;
    }
    // Stop: everyone said goodbye or was lost (the coordinator waited for it).
    stopped = true;
    clearInterval(beat);
    clearInterval(watch);
    for (const client of clients.values()) {
      send(client.socket, 'bye');
      client.socket.end();
    }
    server.close();
    channel.close();
    parentPort?.close();
  });
}

/** Every other process: connects to process 0's heartbeat thread. */
function join(): void {
  const socket = net.connect({ host: settings.host, port: settings.port, noDelay: true });
  let lastHeard = Date.now();
  let serverSaidBye = false;
  let leaving = false;
  const loseServer = (reason: string) => {
    if (leaving || serverSaidBye) return;
    clearInterval(beat);
    clearInterval(watch);
    socket.destroy();
    declareLost(0, reason);
  };
  /** Beats, its hello and its bye go out only after the handshake: before, they would read as a stranger's bytes. */
  let authenticated = false;
  const sayBye = () => {
    send(socket, 'bye');
    // The thread ends once the server closed its side too (or its master stops waiting).
    socket.end();
  };
  socket.on('error', () => {});
  socket.once('connect', () => {
    // A failed handshake destroys the socket: its close below declares the server lost.
    authenticate(socket, secret, 'client', handshakeDeadline(settings.timeoutMs)).then(() => {
      authenticated = true;
      send(socket, `hello ${settings.processRank}`);
      readLines(socket, (line) => {
        lastHeard = Date.now();
        if (line === 'bye') serverSaidBye = true;
        const lost = /^lost (\d+) (.*)$/.exec(line);
        if (lost) declareLost(Number(lost[1]), lost[2] as string);
      });
      // A short job may stop before its handshake is done: it still ends as a member, not a stranger.
      if (leaving) sayBye();
    }, () => undefined);
  });
  // Process 0 may have ended because the job was aborted: its main thread's word on that travels
  // on the control connection, and must reach the endpoints here first.
  socket.on('close', () => setTimeout(() => loseServer('its heartbeat connection closed without close()'), CLOSE_GRACE_MS));
  const beat = setInterval(() => {
    if (authenticated) send(socket, 'beat');
  }, settings.periodMs);
  const watch = setInterval(() => {
    if (Date.now() - lastHeard > settings.timeoutMs) loseServer(`no heartbeat from it for ${settings.timeoutMs} ms`);
  }, WATCH_MS);

  parentPort?.on('message', (order: ThreadOrder) => {
    if (order !== 'stop') return;
    leaving = true;
    clearInterval(beat);
    clearInterval(watch);
    if (authenticated) sayBye();
    channel.close();
    parentPort?.close();
  });
}


if (settings.role === 'server') serve();
else join();
