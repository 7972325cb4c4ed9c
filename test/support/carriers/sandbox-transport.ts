/** The sandbox's routing in process: an adapter's calls answered by a renderer's routes, no server. */
import type { SandboxRenderer, SandboxReply, ScenarioAnswer } from '../../../lib/sandbox/types.ts';
import type { HttpSend, NativeResponse } from '../../../lib/carriers/types.ts';

/** The `:param` values of `path` when it matches the route pattern, else null. */
function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(got[i]!);
    else if (part !== got[i]) return null;
  }
  return params;
}

/** A sandbox reply as the adapter receives it over HTTP. */
export function asNativeResponse(reply: SandboxReply): NativeResponse {
  return { status: reply.status, headers: { 'content-type': reply.contentType }, body: reply.body };
}

/** What the sandbox server does for `<baseUrl>/...`: the renderer's matching route answers from `lookup`. */
export function sandboxSend(renderer: SandboxRenderer, baseUrl: string, lookup: (awb: string) => ScenarioAnswer): HttpSend {
  const prefix = new URL(baseUrl).pathname;
  return async (request) => {
    const url = new URL(request.url);
    const path = url.pathname.slice(prefix.length);
    const headers = Object.fromEntries(Object.entries(request.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    for (const route of renderer.routes) {
      const params = route.method === request.method ? matchPath(route.path, path) : null;
      if (!params) continue;
      const reply = route.handle({ method: request.method, path, query: Object.fromEntries(url.searchParams), headers, body: request.body ?? '' }, params, lookup);
      return asNativeResponse(reply);
    }
    return { status: 404, headers: {}, body: 'no such route' };
  };
}
