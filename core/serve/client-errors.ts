// What Node's HTTP parser cannot hand the service as a request (its `clientError` event: bytes that
// are not HTTP, headers over Node's limit, a client too slow), answered as coded JSON like every
// other error, and the rules that keep that answer from corrupting another one on the connection:
// it waits for an answer still owed there (a request in progress before the bad bytes), it is never
// a second answer to a request already answered (the body of an early 404 that never completes:
// the connection is just closed), and the connection closes after it (its parser is spent).
import * as http from 'node:http';
import type { Duplex } from 'node:stream';
import { CorlError } from '../errors';
import { errorJson, send, statusOf } from './http';

/** The request a connection carried last, and its response. */
export interface LastRequest {
  readonly req: http.IncomingMessage;
  readonly res: http.ServerResponse;
}

/** The coded error of a parser error or timeout Node reports for a connection. */
export function clientErrorOf(
  err: NodeJS.ErrnoException & { reason?: string },
  timeouts: { readonly headers: number; readonly body: number },
): CorlError {
  if (err.code === 'ERR_HTTP_HEADERS_TIMEOUT')
    return new CorlError(
      'CORL_ERR_SERVE_CLIENT_TIMEOUT',
      `expected a request's headers within ${timeouts.headers} s (serve.timeouts.headers), got them too slowly`,
      { where: 'headers' },
    );
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new CorlError(
      'CORL_ERR_SERVE_CLIENT_TIMEOUT',
      `expected a whole request, headers and body, within ${timeouts.body} s (serve.timeouts.body), got it too slowly`,
      { where: 'body' },
    );
  if (err.code === 'HPE_HEADER_OVERFLOW')
    return new CorlError(
      'CORL_ERR_SERVE_HEADERS_TOO_LARGE',
      `expected a request line and headers of at most ${http.maxHeaderSize} bytes (node --max-http-header-size), got more`,
      { where: 'headers' },
    );
  const why = (err.reason ?? err.message).replace(/^Parse Error: /, '');
  return new CorlError(
    'CORL_ERR_SERVE_MALFORMED',
    `expected an HTTP/1.1 request, got bytes its parser refuses (${err.code ?? 'parse error'}: ${why})`,
    { where: /CHUNK/.test(err.code ?? '') ? 'body (chunked framing)' : 'request line or headers' },
  );
}

/** A whole HTTP answer of a coded error, written to the socket itself; it closes the connection. */
export function rawAnswer(e: CorlError): string {
  const status = statusOf(e);
  const text = JSON.stringify(errorJson(e));
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\n` +
    `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\n` +
    `connection: close\r\n\r\n${text}`
  );
}

/**
 * Answer a client error on `socket` once: through the response of the request it belongs to when
 * that one is unanswered (a body cut by its timeout, or broken chunked framing); else, after the
 * answer still owed on the connection, written to the socket; never after an answer given to a
 * request whose body is what failed. Then the connection is closed (at once, or `lingerMs` after
 * the answer for a client that keeps it open).
 */
export function answerClientError(socket: Duplex, e: CorlError, last: LastRequest | undefined, lingerMs: number): void {
  if (last && !last.res.headersSent && !last.req.complete) {
    last.res.setHeader('connection', 'close');
    send(last.res, statusOf(e), errorJson(e));
    last.res.once('finish', () => socket.destroy());
    return;
  }
  const answer = (): void => {
    if (!socket.writable || (last !== undefined && !last.req.complete)) {
      socket.destroy();
      return;
    }
    socket.end(rawAnswer(e));
    const linger = setTimeout(() => socket.destroy(), lingerMs);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  };
  if (last && !last.res.writableFinished) last.res.once('close', answer);
  else answer();
}
