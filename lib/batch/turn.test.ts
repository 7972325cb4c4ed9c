import { describe, expect, it } from 'vitest';
import { dispatchAtEndOfTurn } from './turn.ts';

describe('dispatchAtEndOfTurn', () => {
  it('runs the batches of one turn in one callback, after the turn, in order', async () => {
    const order: string[] = [];
    dispatchAtEndOfTurn(() => {
      order.push('first');
      // Work queued by a batch (as ioredis queues its socket write) runs after all of them.
      process.nextTick(() => order.push('tick'));
    });
    dispatchAtEndOfTurn(() => order.push('second'));
    order.push('turn');
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['turn', 'first', 'second', 'tick']);
  });

  it('starts over for the next turn', async () => {
    const order: string[] = [];
    dispatchAtEndOfTurn(() => order.push('one'));
    await new Promise((resolve) => setImmediate(resolve));
    dispatchAtEndOfTurn(() => order.push('two'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['one', 'two']);
  });
});
