/** Progress of a long replay on stderr: the tools' shared report (lib/progress), counting polls. */
import { createProgress as createToolProgress, type Progress } from '../progress/index.ts';

export type { Progress };

export function createProgress(options: { enabled: boolean; stream?: NodeJS.WriteStream }): Progress {
  return createToolProgress({ label: 'replay', unit: 'polls', ...options });
}
