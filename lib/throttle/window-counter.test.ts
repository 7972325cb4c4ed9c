import { describe, expect, it } from 'vitest';
import { WindowCounter } from './window-counter.ts';

describe('WindowCounter', () => {
  it('allows `limit` requests of an address per window, then says how many seconds until the window ends', () => {
    const counter = new WindowCounter({ limit: 3, windowMs: 60_000 });
    for (let i = 0; i < 3; i++) expect(counter.take('10.0.0.1', 1_000 + i)).toEqual({ allowed: true });
    expect(counter.take('10.0.0.1', 1_003)).toEqual({ allowed: false, retryAfterSeconds: 60 });
    expect(counter.take('10.0.0.1', 45_000)).toEqual({ allowed: false, retryAfterSeconds: 16 });
    // A refused request is not counted: the next window starts whole.
    expect(counter.take('10.0.0.1', 61_000)).toEqual({ allowed: true });
  });

  it('counts each address on its own', () => {
    const counter = new WindowCounter({ limit: 1, windowMs: 60_000 });
    expect(counter.take('10.0.0.1', 0)).toEqual({ allowed: true });
    expect(counter.take('10.0.0.2', 0)).toEqual({ allowed: true });
    expect(counter.take('10.0.0.1', 1)).toMatchObject({ allowed: false });
  });

  it('starts a fresh window when the clock goes back, and forgets the least recently seen address past its bound', () => {
    const counter = new WindowCounter({ limit: 1, windowMs: 60_000, addresses: 2 });
    expect(counter.take('a', 100_000)).toEqual({ allowed: true });
    expect(counter.take('a', 50_000)).toEqual({ allowed: true });
    counter.take('b', 50_001);
    counter.take('c', 50_002);
    // 'a' was forgotten: it has a whole window again.
    expect(counter.take('a', 50_003)).toEqual({ allowed: true });
  });

  it('never answers a Retry-After under one second', () => {
    const counter = new WindowCounter({ limit: 1, windowMs: 1_000 });
    counter.take('a', 0);
    expect(counter.take('a', 999)).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });
});
