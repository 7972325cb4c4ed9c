/** What several sandbox carriers share: reply builders, auth checks and the order steps go out in. */
import type { SandboxReply, SandboxRequest, SandboxShipment, SandboxStep } from '../types.ts';

/** A JSON reply; a string body goes out as it is (the malformed answers are cut-off JSON text). */
export function jsonReply(status: number, body: unknown): SandboxReply {
  return { status, contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) };
}

/** The bare HTML error page a carrier's gateway answers when the carrier is down. */
export function unavailableReply(title = '503 Service Temporarily Unavailable'): SandboxReply {
  return { status: 503, contentType: 'text/html', body: `<html><body><h1>${title}</h1></body></html>` };
}

/** A request header by case-insensitive name. */
export function requestHeader(req: SandboxRequest, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(req.headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/** True when the request carries `Authorization: Bearer <token>`. */
export function hasBearer(req: SandboxRequest, token: string): boolean {
  return requestHeader(req, 'authorization')?.trim() === `Bearer ${token}`;
}

/** The Django REST framework's 401 for a missing or wrong `Authorization: Token <token>`; null when it is right. */
export function drfTokenRejection(req: SandboxRequest, token: string): SandboxReply | null {
  const authorization = requestHeader(req, 'authorization');
  if (!authorization) return jsonReply(401, { detail: 'Authentication credentials were not provided.' });
  if (authorization.trim() !== `Token ${token}`) return jsonReply(401, { detail: 'Invalid token.' });
  return null;
}

// A shuffled story (scenario 15) goes out exactly as given, whatever order the carrier keeps.

/** The steps oldest first by time, or as given when the story is shuffled. */
export function oldestFirst(shipment: SandboxShipment, steps = shipment.steps): SandboxStep[] {
  return shipment.shuffled ? steps : [...steps].sort((a, b) => a.at - b.at);
}

/** The steps newest first by time, or as given when the story is shuffled. */
export function newestFirst(shipment: SandboxShipment, steps = shipment.steps): SandboxStep[] {
  return shipment.shuffled ? steps : [...steps].sort((a, b) => b.at - a.at);
}

/** The (chronological) steps last to first, or as given when the story is shuffled. */
export function lastToFirst(shipment: SandboxShipment): SandboxStep[] {
  return shipment.shuffled ? shipment.steps : [...shipment.steps].reverse();
}

/** The latest step by time (the first listed among equals); null for no steps. */
export function latestStep(steps: SandboxStep[]): SandboxStep | null {
  return steps.reduce<SandboxStep | null>((a, b) => (a && a.at >= b.at ? a : b), null);
}

/** `label - detail`, or the label alone without a detail. */
export function withDetail(label: string, detail: string | null): string {
  return detail ? `${label} - ${detail}` : label;
}
