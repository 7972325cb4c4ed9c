/** Speed Post's sandbox: the shared postal feed (postal.ts) with Speed Post's labels. */
import type { SandboxRenderer } from '../types.ts';
import { postalRenderer } from './postal.ts';

export const renderer: SandboxRenderer = postalRenderer({
  slug: 'speedpost',
  // Speed Post's feed glues the booking label to its detail.
  bookingEvent: (office) => `Item BookItem Book At ${office}`,
  articleType: () => 'Speed Post',
});
