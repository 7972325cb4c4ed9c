/** kafkajs, loaded at its first use (lib/lazy/lazy-module.ts says why). */
import { lazyModule } from '../lazy/lazy-module.ts';

export const kafkajs = lazyModule<typeof import('kafkajs')>('kafkajs');
