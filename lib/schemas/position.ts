/**
 * Where a parcel is, as the delivery prediction names it (contracts.md "Delivery prediction",
 * position): lib/prediction/position.ts resolves it from the latest scan's location text.
 */
export const POSITIONS = ['unknown', 'origin', 'en_route', 'destination_state', 'destination_city', 'delivering_branch'] as const;
export type Position = (typeof POSITIONS)[number];
