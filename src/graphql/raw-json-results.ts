/**
 * GraphQL responses that carry pages of flow records (`RawJson`, infra/raw-json.ts) write those
 * records as the bytes the engine produced, as rest-compat does, instead of parsing them into
 * objects for yoga to serialize again (for a 25,000-record page, most of a second of the event
 * loop). Status, headers and error shaping stay yoga's own: only the serializer is swapped.
 *
 * The spliced chunks are streamed to the socket as they lie (the page in the chDB thread's lent
 * memory), a slice per event-loop turn (infra/paced-body.ts), not joined into one buffer: a
 * 25,000-record page is ~60 MB, and joining it held a second copy and cost ~50 ms before the
 * first byte. The lent memory goes back once the response is closed (written or cut off), never
 * earlier: the socket may still be reading it.
 */
import type { ServerResponse } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import { pacedBody } from '../infra/paced-body.js';
import { type SerializedJson, releaseWhenClosed, stringifyJson } from '../infra/raw-json.js';

type ResultProcessor = Parameters<NonNullable<Plugin['onResultProcess']>>[0]['setResultProcessor'] extends (p: infer P, ...rest: never[]) => void ? P : never;
type ResultProcessorInput = Parameters<ResultProcessor>[0];

export function rawJsonResults(): Plugin<object, { res: ServerResponse }> {
  return {
    onResultProcess({ result, resultProcessor, setResultProcessor, acceptableMediaTypes, serverContext }) {
      if (!resultProcessor || Array.isArray(result) || Symbol.asyncIterator in (result as object)) return;
      const yogaProcessor = resultProcessor;
      const mediaType = acceptableMediaTypes.find((t) => t === 'application/json' || t === 'application/graphql-response+json');
      if (!mediaType) return;
      setResultProcessor(async (input: ResultProcessorInput, fetchAPI, accepted) => {
        let spliced: SerializedJson | undefined;
        const stringify = (value: unknown) => {
          const out = stringifyJson(value);
          if (typeof out === 'string') return out;
          spliced = out;
          return '';
        };
        const response = await yogaProcessor({ ...(input as object), stringify } as ResultProcessorInput, fetchAPI, accepted);
        if (!spliced) return response;
        const { chunks } = spliced;
        releaseWhenClosed(serverContext.res, spliced);
        const headers = new fetchAPI.Headers(response.headers);
        headers.set('content-length', String(chunks.reduce((n, c) => n + c.byteLength, 0)));
        // whatwg-node's Response takes a Node stream (not in the DOM's BodyInit) and pipes it to the socket.
        const body = pacedBody(chunks) as unknown as BodyInit;
        return new fetchAPI.Response(body, { status: response.status, statusText: response.statusText, headers });
      }, mediaType);
    },
  };
}
