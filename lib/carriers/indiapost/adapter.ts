/** India Post (speed, registered and parcel post): the shared postal feed, see postal.ts. */
import type { CarrierAdapter } from '../types.ts';
import { createPostalAdapter } from './postal.ts';

/** Credentials: `username`, `password` (login call → bearer token). */
export const adapter: CarrierAdapter = createPostalAdapter('indiapost');
