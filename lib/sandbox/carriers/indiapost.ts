/** India Post's sandbox: the shared postal feed (postal.ts) with India Post's labels. */
import type { SandboxRenderer, SandboxShipment } from '../types.ts';
import { postalRenderer } from './postal.ts';

const ARTICLE_TYPES: Record<SandboxShipment['serviceType'], string> = {
  speed_post: 'Speed Post',
  express: 'Express Parcel',
  surface: 'Registered Parcel',
};

export const renderer: SandboxRenderer = postalRenderer({
  slug: 'indiapost',
  // India Post's feed pads its labels with a trailing space.
  bookingEvent: () => 'Item Booked ',
  articleType: (shipment) => ARTICLE_TYPES[shipment.serviceType],
});
