import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProgress } from './index.ts';

function capture(): { stream: Writable & { isTTY?: boolean }; text: () => string } {
  let text = '';
  const stream = new Writable({ write(chunk, _enc, done) { text += String(chunk); done(); } });
  return { stream, text: () => text };
}

afterEach(() => { vi.useRealTimers(); });

describe('progress without a terminal', () => {
  it('prints a plain line every 10 s, and nothing before the first 10 s or after stop', async () => {
    vi.useFakeTimers({ now: 0 });
    const { stream, text } = capture();
    const progress = createProgress({ label: 'replay', unit: 'polls', enabled: true, stream });
    progress.phase('diff', 50_000);
    progress.update(5_000);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(text()).toBe('');
    await vi.advanceTimersByTimeAsync(1);
    progress.update(12_345);
    await vi.advanceTimersByTimeAsync(10_000);
    progress.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(text()).toBe([
      'replay diff: 5,000 polls of 50,000 (10.0 %), 500 polls/s, 10 s',
      'replay diff: 12,345 polls of 50,000 (24.7 %), 617 polls/s, 20 s',
      '',
    ].join('\n'));
  });

  it('without a total: the count and the rate; disabled: nothing at all', async () => {
    vi.useFakeTimers({ now: 0 });
    const { stream, text } = capture();
    const progress = createProgress({ label: 'history', unit: 'shipments', enabled: true, stream });
    progress.phase('write', null);
    progress.update(300);
    await vi.advanceTimersByTimeAsync(10_000);
    progress.stop();
    expect(text()).toBe('history write: 300 shipments, 30 shipments/s, 10 s\n');
    const quiet = capture();
    const off = createProgress({ label: 'x', unit: 'y', enabled: false, stream: quiet.stream });
    off.phase('p', 1);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(quiet.text()).toBe('');
  });
});
