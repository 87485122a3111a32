/**
 * The raw reference for TCP: a Node `net` ping-pong that frames messages the simplest way (a
 * 4-byte length, then the bytes), between two processes on this machine.
 */
import net from 'node:net';

/** Reads length-prefixed frames from a socket, calling `onFrame` with each whole payload. */
export function frameReader(socket: net.Socket, onFrame: (payload: Buffer) => void): void {
  let header = Buffer.alloc(0);
  let payload: Buffer | undefined;
  let filled = 0;
  socket.on('data', (chunk: Buffer) => {
    let offset = 0;
    while (offset < chunk.length) {
      if (payload === undefined) {
        const need = 4 - header.length;
        header = Buffer.concat([header, chunk.subarray(offset, offset + need)]);
        offset += Math.min(need, chunk.length - offset);
        if (header.length < 4) return;
        payload = Buffer.allocUnsafe(header.readUInt32LE(0));
        filled = 0;
        header = Buffer.alloc(0);
      }
      const take = Math.min(payload.length - filled, chunk.length - offset);
      chunk.copy(payload, filled, offset, offset + take);
      filled += take;
      offset += take;
      if (filled === payload.length) {
        const done = payload;
        payload = undefined;
        onFrame(done);
      }
    }
  });
}

export function writeFrame(socket: net.Socket, payload: Uint8Array): void {
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32LE(payload.byteLength, 0);
  socket.cork();
  socket.write(header);
  socket.write(payload);
  socket.uncork();
}

/** Echoes every frame back; prints its port on stdout; exits when the client hangs up. */
export async function rawEchoServer(): Promise<void> {
  const server = net.createServer({ noDelay: true }, (socket) => {
    frameReader(socket, (payload) => writeFrame(socket, payload));
    socket.on('close', () => server.close());
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as net.AddressInfo).port}\n`));
}

/** Connects to an echo server; `roundTrip(bytes)` sends a frame and resolves when it is back. */
export async function rawClient(port: number): Promise<{ roundTrip: (payload: Uint8Array) => Promise<void>; close: () => void }> {
  const socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
  await new Promise((resolve) => socket.once('connect', resolve));
  let waiting: (() => void) | undefined;
  frameReader(socket, () => waiting?.());
  return {
    roundTrip: (payload) =>
      new Promise<void>((resolve) => {
        waiting = resolve;
        writeFrame(socket, payload);
      }),
    close: () => socket.end(),
  };
}
