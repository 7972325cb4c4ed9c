export { moveStore, type MoveOptions, type MoveSummary } from './move.ts';
export { movedMarkerPath, readMovedMarker, unmovedEmbeddedState, unmovedStoreNotice, type MovedMarker } from './embedded-state.ts';
