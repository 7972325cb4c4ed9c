import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateSecret, signatureHeaders } from './signing.ts';

const body = JSON.stringify({ type: 'tracking.updated', data: { awb: '1234567890102', note: 'ünïcode ✓' } });
const now = () => Math.floor(Date.now() / 1000);

describe('generateSecret', () => {
  it('is whsec_ + base64 of 32 random bytes, different each time', () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
  });
});

describe('signatureHeaders, checked with the standardwebhooks package', () => {
  it('one secret: the receiver verifies, a tampered body or another secret fails', () => {
    const secret = generateSecret();
    const headers = signatureHeaders({ id: 'evt_1', timestampSeconds: now(), body, secrets: [secret] });
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace('1234567890102', '1234567890103'), headers)).toThrow();
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
  });

  it('two secrets (a rotation): each one verifies on its own', () => {
    const oldSecret = generateSecret();
    const newSecret = generateSecret();
    const headers = signatureHeaders({ id: 'evt_2', timestampSeconds: now(), body, secrets: [oldSecret, newSecret] });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(oldSecret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(newSecret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret).verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
  });

  it('the signature covers id and timestamp too', () => {
    const secret = generateSecret();
    const ts = now();
    const headers = signatureHeaders({ id: 'evt_3', timestampSeconds: ts, body, secrets: [secret] });
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'evt_4' })).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-timestamp': String(ts - 1) })).toThrow();
  });

  it('is deterministic for the same input and refuses malformed secrets', () => {
    const secret = generateSecret();
    const input = { id: 'evt_5', timestampSeconds: 1_790_000_000, body, secrets: [secret] };
    expect(signatureHeaders(input)).toEqual(signatureHeaders(input));
    expect(() => signatureHeaders({ ...input, secrets: [] })).toThrow(/at least one/);
    expect(() => signatureHeaders({ ...input, secrets: ['nope'] })).toThrow(/whsec_/);
    expect(() => signatureHeaders({ ...input, secrets: ['whsec_'] })).toThrow(/base64/);
    expect(() => signatureHeaders({ ...input, secrets: ['whsec_%%%%'] })).toThrow(/base64/);
  });
});
