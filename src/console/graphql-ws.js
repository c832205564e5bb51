// The client half of the graphql-ws protocol (subprotocol `graphql-transport-ws`), for one
// subscription per socket: connection_init → connection_ack → subscribe → next* → complete.
// https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md

const OPERATION_ID = '1';

/**
 * Opens a socket and runs one subscription on it. `sink.next(result)` gets every result,
 * `sink.complete()` the server's end of the stream, `sink.error(reason)` anything else that ends
 * it (a protocol error or a closed socket). Returns a function that unsubscribes.
 */
export function subscribe(url, payload, sink, connectionParams = {}) {
  const socket = new WebSocket(url, 'graphql-transport-ws');
  let finished = false;
  const send = (message) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify(message));
  const finish = (callback) => {
    if (finished) return;
    finished = true;
    callback();
    if (socket.readyState <= WebSocket.OPEN) socket.close(1000, 'Normal Closure');
  };

  socket.addEventListener('open', () => send({ type: 'connection_init', payload: connectionParams }));
  socket.addEventListener('message', (event) => {
    let message;
    try {
      message = JSON.parse(event.data);
    } catch {
      return finish(() => sink.error(new Error('Malformed message from server')));
    }
    switch (message.type) {
      case 'connection_ack':
        return send({ id: OPERATION_ID, type: 'subscribe', payload });
      case 'ping':
        return send({ type: 'pong' });
      case 'next':
        if (message.id === OPERATION_ID && !finished) sink.next(message.payload);
        return;
      case 'error':
        if (message.id === OPERATION_ID) finish(() => sink.error(message.payload));
        return;
      case 'complete':
        if (message.id === OPERATION_ID) finish(() => sink.complete());
        return;
      default:
    }
  });
  socket.addEventListener('close', (event) => finish(() => sink.error(new Error(`Connection closed (${event.code})`))));

  return () =>
    finish(() => {
      send({ id: OPERATION_ID, type: 'complete' });
    });
}
