import { describe, expect, it } from 'vitest';
import { ScoredSet } from './scored-set.ts';

/** What a sort of every member gives (the behaviour ScoredSet replaces). */
function sortedDue(entries: Map<string, number>, atMost: number, limit: number): string[] {
  return [...entries].filter(([, s]) => s <= atMost).sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)).slice(0, limit).map(([m]) => m);
}

describe('ScoredSet', () => {
  it('gives the due members smallest first, ties by member, and keeps them', () => {
    const set = new ScoredSet([['b', 5], ['a', 5], ['c', 1], ['d', 9]]);
    expect(set.due(5, 10)).toEqual(['c', 'a', 'b']);
    expect(set.due(5, 2)).toEqual(['c', 'a']);
    expect(set.size).toBe(4);
    expect(set.min()).toBe(1);
  });

  it('gives a member once when it went back to an earlier score', () => {
    const set = new ScoredSet([['a', 1]]);
    set.set('a', 7);
    set.set('a', 1);
    expect(set.due(10, 10)).toEqual(['a']);
    expect(set.due(10, 10)).toEqual(['a']);
  });

  it('skips old scores of changed and deleted members', () => {
    const set = new ScoredSet([['a', 1], ['b', 2], ['c', 3]]);
    set.set('a', 10);
    set.delete('b');
    expect(set.due(5, 10)).toEqual(['c']);
    expect(set.min()).toBe(3);
    set.delete('c');
    set.delete('a');
    expect(set.min()).toBeNull();
    expect(set.due(100, 10)).toEqual([]);
  });

  it('agrees with sorting every member over a random history of changes (with rebuilds)', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const set = new ScoredSet();
    const model = new Map<string, number>();
    for (let step = 0; step < 20_000; step++) {
      const member = `m${Math.floor(random() * 300)}`;
      const roll = random();
      if (roll < 0.6) {
        const score = Math.floor(random() * 1_000);
        set.set(member, score);
        model.set(member, score);
      } else if (roll < 0.8) {
        set.delete(member);
        model.delete(member);
      } else {
        const atMost = Math.floor(random() * 1_000);
        const limit = 1 + Math.floor(random() * 20);
        const due = set.due(atMost, limit);
        expect(due).toEqual(sortedDue(model, atMost, limit));
        // What claimDue does next: lease them.
        for (const m of due) { set.set(m, atMost + 500); model.set(m, atMost + 500); }
      }
      if (step % 1_000 === 0) expect(set.min()).toBe(model.size ? Math.min(...model.values()) : null);
    }
    expect([...set].sort()).toEqual([...model].sort());
  });
});
