import type { ServerResponse } from 'node:http';

/**
 * How many bytes a response handed its socket in each event-loop turn, sampled from now until it
 * is finished or cut off: the list fills as the response goes.
 */
export function bytesPerTurn(res: ServerResponse): number[] {
  const socket = res.socket!;
  const perTurn: number[] = [];
  let written = socket.bytesWritten;
  const take = () => {
    perTurn.push(socket.bytesWritten - written);
    written = socket.bytesWritten;
  };
  const sample = () => {
    take();
    if (!res.writableFinished && !res.destroyed) setImmediate(sample);
  };
  setImmediate(sample);
  // The last turn's bytes, should the response close before the next sample.
  res.once('close', take);
  return perTurn;
}
