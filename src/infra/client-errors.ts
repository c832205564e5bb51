import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Node's own refusals of a request it could not read (a malformed request line, headers over its
 * 16 KiB limit, a request that took too long), in the documented error body instead of Node's
 * empty one. For the http server's 'clientError' event: as Node does, nothing is written once a
 * response is under way on the socket, and the socket is then destroyed.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // Node's own check, on its own field: the response in flight on this socket, if any.
  const inFlight = (socket as { _httpMessage?: { headersSent: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const [status, code, message] = refusalFor(error.code);
    const body = JSON.stringify({ error: code, code, message });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** Node's choice of status for each of its parser's errors, with our code and words. */
function refusalFor(nodeCode: string | undefined): [number, string, string] {
  switch (nodeCode) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'headers_too_large', `The request line and headers must fit in ${maxHeaderSize} bytes`];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, 'payload_too_large', 'The chunk extensions of the request body are too large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'request_timeout', 'The request did not arrive in time'];
    default:
      return [400, 'bad_request', 'The request is not valid HTTP/1.1'];
  }
}
