import { describe, expect, it } from 'vitest';
import { withoutRepeats } from './repeats.ts';

describe('withoutRepeats (a client retrying a service that is down)', () => {
  it('pass a repeated line once per 10 s, then with how many were held back', () => {
    const lines: string[] = [];
    let now = 0;
    const log = withoutRepeats((level, message) => lines.push(`${level}: ${message}`), () => now);
    for (let i = 0; i < 50; i++) {
      log('error', 'kafka: Connection error: connect ECONNREFUSED 127.0.0.1:9092');
      now += 100;
    }
    log('warn', 'kafka: a different line');
    now = 12_000;
    log('error', 'kafka: Connection error: connect ECONNREFUSED 127.0.0.1:9092');
    expect(lines).toEqual([
      'error: kafka: Connection error: connect ECONNREFUSED 127.0.0.1:9092',
      'warn: kafka: a different line',
      'error: kafka: Connection error: connect ECONNREFUSED 127.0.0.1:9092 (and 49 more like it in 12 s)',
    ]);
  });
});
