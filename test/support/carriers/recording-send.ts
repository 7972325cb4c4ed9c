/** Transports for the adapters' fetch tests: they record every request the adapter sends. */
import type { HttpRequest, HttpSend, NativeResponse } from '../../../lib/carriers/types.ts';

export interface RecordingSend {
  sent: HttpRequest[];
  send: HttpSend;
}

/** Records each request and answers it with `answer(request)`. */
export function recordingSend(answer: (request: HttpRequest) => NativeResponse): RecordingSend {
  const sent: HttpRequest[] = [];
  const send: HttpSend = async (request) => {
    sent.push(request);
    return answer(request);
  };
  return { sent, send };
}

/** Records each request and answers it from the queue `queueOf(request)` picks; a call the queue has no answer for fails. */
export function queuedSend(queueOf: (request: HttpRequest) => NativeResponse[]): RecordingSend {
  return recordingSend((request) => {
    const next = queueOf(request).shift();
    if (!next) throw new Error(`unexpected request ${request.method} ${request.url}`);
    return next;
  });
}
