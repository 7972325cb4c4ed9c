/** Progress of a long replay (or a backtest over stored polls) on stderr: the tools' shared report (lib/progress), counting polls. */
import { createProgress as createToolProgress, type Progress } from '../progress/index.ts';

export type { Progress };

/** `label` starts each line (default `replay`). */
export function createProgress(options: { enabled: boolean; stream?: NodeJS.WriteStream; label?: string }): Progress {
  return createToolProgress({ unit: 'polls', ...options, label: options.label ?? 'replay' });
}
