/** Speed Post (EE…IN articles): India Post's feed and vocabulary, see ../indiapost/postal.ts. */
import { createPostalAdapter } from '../indiapost/postal.ts';
import type { CarrierAdapter } from '../types.ts';

/** Credentials: `username`, `password` (login call → bearer token). */
export const adapter: CarrierAdapter = createPostalAdapter('speedpost');
