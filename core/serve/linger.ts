// Closing a connection without resetting it (docs/guide/serve.md "Security and limits"). When the
// service answers before it has read a request's body (413, a 503 over the connection caps, a body
// past what an early answer drops) and then closes, the bytes the client is still sending would
// arrive at a closed socket: the kernel answers them with a TCP reset, and a client that sends its
// whole body before it reads (Python's http.client, curl) loses the answer already in its buffers.
// So the service half-closes instead: its answer and a FIN go out, the rest of the body is read and
// dropped, and the socket is closed once the client closes its side, or past a bound of bytes or time.
import type * as http from 'node:http';
import type { Socket } from 'node:net';

/** Least number of bytes a closing connection reads and drops after its answer (more: closed at once). */
export const LINGER_BYTES = 64 * 1024 * 1024;

/** The bounds of a lingering close. */
export interface LingerBounds {
  /** Bytes read after the close began, past which the socket is closed. */
  readonly bytes: number;
  /** Milliseconds after the close began, past which the socket is closed. */
  readonly ms: number;
}

const LINGERING = new WeakSet<Socket>();

/**
 * Make `socket` close by lingering once its answer is written: Node's own close after an answer
 * sent with `connection: close` (its `destroySoon`) is replaced by {@link lingerClose}.
 */
export function lingerOnClose(socket: Socket, req: http.IncomingMessage, bounds: LingerBounds): void {
  socket.destroySoon = () => lingerClose(socket, req, bounds);
}

/**
 * Half-close `socket` (the answer already queued goes out, then a FIN), then read and drop what the
 * client still sends until it closes its side, `bounds.bytes` more arrived, or `bounds.ms` passed.
 */
export function lingerClose(socket: Socket, req: http.IncomingMessage, bounds: LingerBounds): void {
  if (socket.destroyed || LINGERING.has(socket)) return;
  LINGERING.add(socket);
  const start = socket.bytesRead;
  const stop = (): void => {
    socket.destroy();
  };
  const timer = setTimeout(stop, bounds.ms);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // The client closed its side: nothing more comes that could meet a closed socket.
  socket.once('end', stop);
  socket.on('error', stop);
  // The body still arriving flows through the request (read and dropped); past the bound, stop.
  req.on('data', () => {
    if (socket.bytesRead - start > bounds.bytes) stop();
  });
  req.on('error', () => undefined);
  req.resume();
  socket.end();
}
