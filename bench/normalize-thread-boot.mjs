// Worker threads do not inherit `--import tsx`: register tsx's loader here, then load the TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./normalize-thread.ts');
