import { describe, expect, it } from 'vitest';
import { textFlameGraph, type CpuProfile, type ProfileNode } from '../bench/flame.ts';

const frame = (id: number, functionName: string, children: number[] = []): ProfileNode => ({ id, callFrame: { functionName, url: '', lineNumber: 0 }, children });

describe('textFlameGraph', () => {
  it('gives each frame its inclusive share of busy samples, biggest first, idle and small frames left out', () => {
    const profile: CpuProfile = {
      nodes: [frame(1, '(root)', [2, 5, 6]), frame(2, 'handle', [3, 4]), frame(3, 'serialize'), frame(4, 'check'), frame(5, '(idle)'), frame(6, 'gc')],
      // handle 1 self + serialize 6 + check 2 = 9 of 10 busy; gc 1; idle not counted.
      samples: [2, 3, 3, 3, 3, 3, 3, 4, 4, 6, 5, 5, 5],
    };
    expect(textFlameGraph(profile, (n) => n.callFrame.functionName, 0.15)).toEqual([
      ' 90.0% handle',
      ' 60.0% │ serialize',
      ' 20.0% │ check',
    ]);
  });
});
